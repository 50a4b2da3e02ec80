package tools

import (
	"context"
	"testing"
	"time"
)

// TestPageHostsScreen: a request to a host the page asked for passes, on
// whatever port its scheme implies; one to another host, or another port,
// is refused as the browser's own after the wait; a host the browser
// reports during the wait (a redirect's next hop) passes.
func TestPageHostsScreen(t *testing.T) {
	p := newPageHosts()
	p.add("http://Status.Example.com/")
	p.add("https://cdn.example.net/app.js")
	p.add("wss://live.example.org/feed")
	for _, target := range []string{"http://status.example.com:80/x", "https://cdn.example.net:443/", "https://live.example.org:443/"} {
		if r := p.screen(context.Background(), target); r != nil {
			t.Errorf("%s refused: %+v", target, r)
		}
	}
	for _, target := range []string{"https://content-autofill.googleapis.com:443/", "https://status.example.com:443/", "http://cdn.example.net:8080/"} {
		start := time.Now()
		if !p.await(context.Background(), target, 50*time.Millisecond) {
			if time.Since(start) < 50*time.Millisecond {
				t.Errorf("%s refused before the wait was over", target)
			}
			continue
		}
		t.Errorf("%s passed though the page never asked for it", target)
	}
	if r := p.screen(context.Background(), "https://content-autofill.googleapis.com:443/"); r == nil || r.Reason != ReasonBrowserOwn || r.Agent != "" || r.Host != "content-autofill.googleapis.com" {
		t.Fatalf("the browser's own request: %+v", r)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		p.add("https://www.example.com/after-redirect")
	}()
	if !p.await(context.Background(), "https://www.example.com:443/", 5*time.Second) {
		t.Fatal("a host reported during the wait was refused")
	}
	if p.await(context.Background(), "not a url", time.Millisecond) || p.await(context.Background(), "ftp://example.com/", time.Millisecond) {
		t.Fatal("a target without a web host passed")
	}
}
