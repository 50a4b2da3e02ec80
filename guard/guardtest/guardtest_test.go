package guardtest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// Load reports the first failure whatever mix of failures its clients
// meet: an error from one client and a bad status from another.
func TestLoadReportsTheFirstOfMixedFailures(t *testing.T) {
	var calls atomic.Int64
	do := func() (*http.Response, error) {
		if calls.Add(1)%2 == 0 {
			return nil, errors.New("connection reset")
		}
		return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway", Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	var sent atomic.Int64
	n, err := Load(8, func() bool { return sent.Add(1) <= 64 }, do)
	if n != 0 || err == nil || !(strings.Contains(err.Error(), "502") || strings.Contains(err.Error(), "reset")) {
		t.Fatalf("Load = %d, %v; want 0 and the first failure", n, err)
	}
}
