package guard

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestFormatDurationWritesItAsPeopleDo(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{15 * time.Second, "15s"},
		{90 * time.Second, "90s"},
		{10 * time.Minute, "10m"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{3605 * time.Second, "3605s"},
		{1500 * time.Millisecond, "1.5s"},
		{250 * time.Millisecond, "250ms"},
		{-5 * time.Minute, "-5m"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := FormatDuration(tt.in)
			if got != tt.want {
				t.Fatalf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
			}
			if back, err := time.ParseDuration(got); err != nil || back != tt.in {
				t.Fatalf("%q does not parse back to %v: %v, %v", got, tt.in, back, err)
			}
		})
	}
}

// TestMessagesWriteDurationsAsPeopleDo: the sentences an agent or an
// admin reads name a duration as it is written in the settings, never in
// Go's form (1m0s, 5m0s).
func TestMessagesWriteDurationsAsPeopleDo(t *testing.T) {
	s := DefaultSettings()
	s.Timeout = time.Minute
	g := newTestGuard(t, mustPolicy(t, s, "www.example.com"), newResolver("www.example.com", []string{"93.184.216.34"}))
	d := g.Decide(context.Background(), "http://www.example.com/")
	if !d.Allowed {
		t.Fatalf("not allowed: %+v", d.Refusal())
	}
	u, _ := url.Parse("http://www.example.com/")
	resp := &Response{URL: u, Decision: d, g: g.Guard, ctx: context.Background()}
	messages := map[string]string{
		"client timeout":   g.transportRefusal(context.Background(), context.DeadlineExceeded, &d, &s).Message,
		"body timeout":     resp.readFailed(context.DeadlineExceeded).Message,
		"proxy body stall": (&Proxy{g: g.Guard}).bodyStalled(&d, time.Minute).Message,
		"settings outside": Settings{Timeout: 10 * time.Minute, MaxBytes: s.MaxBytes, UserAgent: "x"}.Validate().Error(),
	}
	want := map[string]string{
		"client timeout":   "www.example.com did not answer within 1m.",
		"body timeout":     "www.example.com did not send the whole page within 1m.",
		"proxy body stall": "www.example.com stopped sending the body for 1m.",
		"settings outside": "timeout 10m is outside 1s–5m; choose a value such as 15s",
	}
	for name, msg := range messages {
		if msg != want[name] {
			t.Errorf("%s: %q, want %q", name, msg, want[name])
		}
		if strings.Contains(msg, "m0s") {
			t.Errorf("%s: Go's duration form in %q", name, msg)
		}
	}
}
