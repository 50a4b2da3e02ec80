package guard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// TestProxyRecordsEveryDecision: the proxy's allowed requests reach the
// Recorder (metrics, the decision log) like the client's, not only its
// refusals.
func TestProxyRecordsEveryDecision(t *testing.T) {
	obs := &countingRecorder{allowed: map[string]int{}, refused: map[Code]int{}}
	dialer := guardtest.NewDialer()
	g := New(Options{Resolver: newResolver("www.example.com", []string{"93.184.216.34"}), Dial: dialer.Dial, Recorder: obs})
	defer g.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	ep, err := g.StartProxy(EmbeddedProxyOptions{Caller: Caller{Tool: "proxy"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	user, pass := ep.ProcessCredential()
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ep.Addr(), User: url.UserPassword(user, pass)})}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, u := range []string{"http://www.example.com/", "http://10.0.0.1/"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.allowed["proxy"] != 1 || obs.refused[CodeForbidden] != 1 || obs.fetches != 1 {
		t.Fatalf("observed allowed %v refused %v timed %d", obs.allowed, obs.refused, obs.fetches)
	}
}
