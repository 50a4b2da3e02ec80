package guard

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestTooLargeBodyIsOneRecord: a request allowed at its headers whose body
// then grows past max_bytes is one Record, the refusal, not an allowed
// one followed by a refusal.
func TestTooLargeBodyIsOneRecord(t *testing.T) {
	s := DefaultSettings()
	s.MaxBytes = MinMaxBytes
	for _, declared := range []bool{true, false} {
		g := newTestGuard(t, mustPolicy(t, s), newResolver("big.example.com", []string{"93.184.216.34"}))
		publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !declared {
				w.(http.Flusher).Flush() // no Content-Length: the size shows only while streaming
			}
			w.Write([]byte(strings.Repeat("x", 2*MinMaxBytes)))
		}))
		resp, err := g.Get(context.Background(), "http://big.example.com/")
		if err != nil {
			t.Fatal(err)
		}
		_, err = resp.ReadAll()
		resp.Body.Close() // a second close must not add an allowed record
		recs := g.reports.All()
		if ref, ok := AsRefusal(err); !ok || ref.Code != CodeTooLarge {
			t.Fatalf("declared=%v: err = %v, want too_large", declared, err)
		}
		if len(recs) != 1 || recs[0].Allowed() || recs[0].Refusal.Code != CodeTooLarge || recs[0].Port != 80 {
			t.Fatalf("declared=%v: records = %+v, want exactly one too_large", declared, recs)
		}
	}
}

// TestReadBodyIsOneAllowedRecord: a body read in full, then closed, is
// one allowed Record with the time to the headers.
func TestReadBodyIsOneAllowedRecord(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { w.Write([]byte("ok")) }))
	ctx := WithCaller(context.Background(), Caller{Tool: "t"})
	resp, err := g.Get(ctx, "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.reports.All()) != 0 {
		t.Fatal("recorded before the body's outcome was known")
	}
	if _, err := resp.ReadAll(); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	recs := g.reports.All()
	if len(recs) != 1 || !recs[0].Allowed() || recs[0].Caller.Tool != "t" || recs[0].Host != "a.example.com" || recs[0].Elapsed <= 0 {
		t.Fatalf("records = %+v, want one allowed", recs)
	}
}

// TestRefuseMakesTheResponseRefused: a caller that refuses the response
// (an unreadable type) turns the request's one Record into that refusal.
func TestRefuseMakesTheResponseRefused(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {}))
	resp, err := g.Get(context.Background(), "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Refuse(&Refusal{Code: CodeUnsupported, Reason: Reason("content_type"), Message: "m", Fix: "f"})
	resp.Body.Close()
	recs := g.reports.All()
	if len(recs) != 1 || recs[0].Allowed() || recs[0].URL != "http://a.example.com/" || recs[0].Host != "a.example.com" {
		t.Fatalf("records = %+v, want one content_type refusal", recs)
	}
}

// TestNotesKeepTheGuardFromRecording: under WithNotes the guard records
// nothing itself; the last Record is noted for the caller, who records
// its call once.
func TestNotesKeepTheGuardFromRecording(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "http://10.0.0.1/", http.StatusFound)
	}))
	ctx, notes := WithNotes(WithCaller(context.Background(), Caller{Tool: "t"}))
	if _, err := g.Get(ctx, "http://a.example.com/"); err == nil {
		t.Fatal("the redirect to a private address was followed")
	}
	if recs := g.reports.All(); len(recs) != 0 {
		t.Fatalf("the guard recorded %+v under notes", recs)
	}
	last, ok := notes.Last()
	if !ok || last.Allowed() || last.Refusal.Reason != ReasonInternalAddress || len(last.Redirects) != 1 || last.Caller.Tool != "t" {
		t.Fatalf("notes = %+v, %v", last, ok)
	}
	g.Record(last)
	if recs := g.reports.All(); len(recs) != 1 || recs[0].Time.IsZero() {
		t.Fatalf("Record: %+v", recs)
	}
}

// TestDialFailureIsANetworkFailure: a connection that fails is recorded
// as the network's failure, not as the policy's refusal.
func TestDialFailureIsANetworkFailure(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("down.example.com", []string{"93.184.216.34"}))
	g.dialer.Route("93.184.216.34:80", "127.0.0.1:1") // nothing listens on port 1
	_, err := g.Get(context.Background(), "http://down.example.com/")
	ref, ok := AsRefusal(err)
	if !ok || ref.KindOf() != KindNetwork {
		t.Fatalf("err = %v, want a network failure", err)
	}
	if d := g.Decide(context.Background(), "http://unknown.example.com/"); d.Refusal().KindOf() != KindNetwork {
		t.Fatalf("a DNS failure is %s, want network", d.Refusal().KindOf())
	}
	if d := g.Decide(context.Background(), "http://10.0.0.1/"); d.Refusal().KindOf() != KindPolicy {
		t.Fatal("a policy refusal is not policy")
	}
}
