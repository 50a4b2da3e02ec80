package tools

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
)

// BenchmarkAPIRefusedCall is the JSON API's own cost of one refused
// fetch_url call, without the network or the log's store: token, body,
// input check, guard, decision record, answer. The ingest load test
// (cmd/console) spends most of the serving process's time here and in
// net/http; -benchmem shows what each call leaves to the collector.
func BenchmarkAPIRefusedCall(b *testing.B) {
	var recorded atomic.Int64
	g := guard.New(guard.Options{Resolver: guardtest.NewResolver(), Dial: guardtest.NewDialer().Dial,
		Recorder: guard.RecorderFunc(func(guard.Record) { recorded.Add(1) })})
	defer g.Close()
	reg := Builtin(Deps{Guard: g, Settings: DefaultSettings})
	api := reg.API(testAgents)
	n := 0
	for b.Loop() {
		n++
		body := `{"url":"http://10.0.` + strconv.Itoa(n>>8&255) + `.` + strconv.Itoa(n&255) + `/page/` + strconv.Itoa(n) + `"}`
		req := httptest.NewRequest(http.MethodPost, "/api/v1/tools/fetch_url", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret-token")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"reason":"internal_address"`) {
			b.Fatalf("answer %d: %s", rec.Code, rec.Body)
		}
	}
	if got := recorded.Load(); got != int64(n) {
		b.Fatalf("%d calls left %d decision records", n, got)
	}
}
