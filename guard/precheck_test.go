package guard

import (
	"context"
	"testing"
)

// TestPrecheckMakesEveryCheckButTheLookup: what Decide refuses without DNS,
// Precheck refuses the same way; a name is left to the full decision, and
// nothing is resolved.
func TestPrecheckMakesEveryCheckButTheLookup(t *testing.T) {
	r := &rawResolver{}
	p := mustPolicy(t, DefaultSettings(), "status.example.com", "10.0.0.7")
	for _, raw := range []string{"ftp://status.example.com/", "http://localhost/", "http://169.254.169.254/", "http://2130706433/",
		"http://other.example.com/", "http://status.example.com:8080/", "http://10.0.0.8/"} {
		pre, full := p.Precheck(raw), p.Decide(context.Background(), r, raw)
		if pre.Allowed || pre.Code != full.Code || pre.Reason != full.Reason || pre.Message != full.Message {
			t.Errorf("%s: precheck %s/%s, decide %s/%s", raw, pre.Code, pre.Reason, full.Code, full.Reason)
		}
	}
	if d := p.Precheck("http://10.0.0.7/x"); !d.Allowed || len(d.Addresses()) != 1 {
		t.Fatalf("a listed literal address is fully decided by a precheck: %+v", d)
	}
	d := p.Precheck("HTTP://Status.Example.com./a")
	if !d.Allowed || d.URL.String() != "http://status.example.com/a" || len(d.Addresses()) != 0 {
		t.Fatalf("a listed name: %+v", d)
	}
	if len(r.names) != 0 {
		t.Fatalf("Precheck looked up %v", r.names)
	}
}
