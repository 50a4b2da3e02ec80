package guard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// ticketProxy serves a proxy built with opts in front of a test guard whose
// one public host, www.example.com, answers with the ticket header it saw.
func ticketProxy(t *testing.T, opts ProxyOptions) (*testGuard, func(ticket string) (*http.Response, string)) {
	t.Helper()
	g := newTestGuard(t, nil, newResolver("www.example.com", []string{"93.184.216.34"}))
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "seen=%q", r.Header.Get(TicketHeader))
	}))
	opts.Authenticate = func(context.Context, string, string) (Caller, error) { return Caller{Agent: "bot"}, nil }
	p, err := g.NewProxy(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: srv.Listener.Addr().String(), User: url.UserPassword("u", "p")})}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	return g, func(ticket string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", "http://www.example.com/", nil)
		req.Header.Set(TicketHeader, ticket)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, readBody(t, resp)
	}
}

// TestProxyTakesTheTicketHeader: the ticket names the request's Caller, and
// the target never sees the header.
func TestProxyTakesTheTicketHeader(t *testing.T) {
	g, get := ticketProxy(t, ProxyOptions{AcceptTicket: true})
	resp, body := get("SUP-4521")
	if resp.StatusCode != 200 || body != `seen=""` {
		t.Fatalf("got %d %s; the target must not see the ticket header", resp.StatusCode, body)
	}
	recs := g.reports.All()
	if len(recs) != 1 || recs[0].Caller.Ticket != "SUP-4521" || recs[0].Caller.Agent != "bot" || recs[0].Refusal != nil {
		t.Fatalf("records = %+v", recs)
	}
}

// TestProxyRefusesAMalformedTicket: a ticket that cannot be stored is a
// 400 that says how to write it, and nothing is dialled.
func TestProxyRefusesAMalformedTicket(t *testing.T) {
	g, get := ticketProxy(t, ProxyOptions{AcceptTicket: true})
	resp, body := get("SUP 4521 <b>")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, TicketHeader) || !strings.Contains(body, "Fix: ") || !strings.Contains(body, TicketExample) {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if d := g.dialer.Dials(); len(d) != 0 {
		t.Fatalf("dialled %v for a malformed ticket", d)
	}
}

// TestProxyIgnoresTicketsItDoesNotAccept: a proxy for web pages strips the
// header but does not let a page label its own loads.
func TestProxyIgnoresTicketsItDoesNotAccept(t *testing.T) {
	g, get := ticketProxy(t, ProxyOptions{})
	resp, body := get("SUP-4521")
	if resp.StatusCode != 200 || body != `seen=""` {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	if recs := g.reports.All(); len(recs) != 1 || recs[0].Caller.Ticket != "" {
		t.Fatalf("records = %+v", recs)
	}
}
