package tools

import (
	"errors"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
)

func TestBuildPolicy(t *testing.T) {
	p, s, err := BuildPolicy([]guard.StoredRule{{Entry: "status.example.com"}, {Entry: "*.docs.example.com"}}, map[string]string{"timeout": "3s", "reads_per_turn": "2"})
	if err != nil || p.Allowlist().Len() != 2 || p.Settings().Timeout != 3*time.Second || s.ReadsPerTurn != 2 {
		t.Fatalf("BuildPolicy = %v, %+v, %v", p, s, err)
	}
	var ee *guard.EntryError
	if _, _, err := BuildPolicy([]guard.StoredRule{{Entry: "*"}}, nil); !errors.As(err, &ee) || ee.Input != "*" {
		t.Fatalf("a bad entry: %v", err)
	}
	var se *SettingError
	if _, _, err := BuildPolicy(nil, map[string]string{"timeout": "soon"}); !errors.As(err, &se) || se.Key != "timeout" {
		t.Fatalf("a bad setting: %v", err)
	}
}
