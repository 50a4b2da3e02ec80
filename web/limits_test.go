package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// countingServer serves the console of a fresh harness behind a wrapper
// that counts every body byte the console (middleware, CSRF check,
// handler) read, so a test sees what was NOT read.
func countingServer(t *testing.T) (*harness, *httptest.Server, *atomic.Int64) {
	t.Helper()
	var deps Deps
	h := newHarnessWith(t, func(d *Deps) { deps = *d })
	var read atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, &read}
		New(deps).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return h, srv, &read
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// endless is an unending body of form-safe bytes.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestOversizedBodyToLoginIsRefusedUnread(t *testing.T) {
	_, srv, read := countingServer(t)
	const huge = 300 << 20
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			read.Store(0)
			req, _ := http.NewRequest("POST", srv.URL+"/login", io.LimitReader(endless{}, huge))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if !chunked {
				// As curl does for a large body: the console answers
				// before the client sends any of it.
				req.ContentLength = huge
				req.Header.Set("Expect", "100-continue")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			p := readPage(t, resp)
			if p.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413: %s", p.status, p.body)
			}
			if !strings.Contains(p.body, "64 KB") {
				t.Errorf("the page does not name the limit: %s", p.body)
			}
			limit := int64(formBodyLimit)
			if !chunked {
				limit = 0 // the declared length alone refuses it
			}
			if n := read.Load(); n > limit+1 {
				t.Errorf("the console read %d bytes of the body, want at most %d", n, limit+1)
			}
		})
	}
}

// TestOversizedBodyToCSRFRefusedRouteIsRefused: a route the CSRF check
// would refuse anyway never gets to parse a large body either.
func TestOversizedBodyToCSRFRefusedRouteIsRefused(t *testing.T) {
	_, srv, read := countingServer(t)
	req, _ := http.NewRequest("POST", srv.URL+"/users", io.LimitReader(endless{}, 50<<20))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	p := readPage(t, resp)
	if p.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %s", p.status, p.body)
	}
	if n := read.Load(); n > formBodyLimit+1 {
		t.Errorf("the console read %d bytes, want at most %d", n, formBodyLimit+1)
	}
}

func TestOversizedAPIBodyIsJSON413(t *testing.T) {
	_, srv, _ := countingServer(t)
	resp, err := http.Post(srv.URL+"/api/v1/tools/fetch_url", "application/json", strings.NewReader(`{"url":"`+strings.Repeat("a", 100<<10)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	p := readPage(t, resp)
	if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, `"code":"request_entity_too_large"`) || !strings.Contains(p.body, "64 KB") {
		t.Fatalf("status %d, want a JSON 413 naming the limit: %s", p.status, p.body)
	}
}

func TestMultipartIsRefused(t *testing.T) {
	h, srv, read := countingServer(t)
	_ = h
	for _, path := range []string{"/login", "/users", "/integrations/allowlist", "/api/v1/tools/fetch_url"} {
		body := "--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nada\r\n--x--\r\n"
		read.Store(0)
		resp, err := http.Post(srv.URL+path, "multipart/form-data; boundary=x", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		p := readPage(t, resp)
		if p.status != http.StatusUnsupportedMediaType || !strings.Contains(p.body, "multipart") {
			t.Errorf("%s: status %d, want 415 naming multipart: %s", path, p.status, p.body)
		}
		if read.Load() != 0 {
			t.Errorf("%s: the console read %d bytes of a multipart body", path, read.Load())
		}
	}
}

// TestAllowlistAcceptsTenThousandLines: the paste box takes a list of
// 10,000 entries in one go, well over the forms' 64 KB.
func TestAllowlistAcceptsTenThousandLines(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	var lines []string
	for i := range 10000 {
		lines = append(lines, fmt.Sprintf("service-%05d.internal-apis.example.com:443", i))
	}
	rev, err := h.store.Version(context.Background(), models.SectionAllowlist)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"entries": {strings.Join(lines, "\r\n")}, "revision": {strconv.FormatInt(rev, 10)}}
	if n := len(form.Encode()); n < 400<<10 {
		t.Fatalf("the paste is only %d bytes encoded; the test means a large one", n)
	}
	resp := b.postForm("/integrations/allowlist", form)
	p := readPage(t, resp)
	if p.status != http.StatusSeeOther {
		t.Fatalf("status %d, want 303: %.500s", p.status, p.body)
	}
	entries, err := h.store.ListAllowlist(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 10000 {
		t.Fatalf("%d entries saved, want 10000", len(entries))
	}
}

// TestTrickledBodyIsCutOff: a client that sends its body a byte now and
// then is disconnected once the read timeout passes.
func TestTrickledBodyIsCutOff(t *testing.T) {
	var deps Deps
	newHarnessWith(t, func(d *Deps) { deps = *d })
	hs := New(deps).HTTPServer(Timeouts{ReadHeader: time.Second, Read: 300 * time.Millisecond, Write: time.Second, Idle: time.Second, MaxHeaderBytes: 8 << 10})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", l.Addr())
	start := time.Now()
	for time.Since(start) < 5*time.Second {
		if _, err := conn.Write([]byte("a")); err != nil {
			break // the server closed the connection
		}
		conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 512)
		if n, err := conn.Read(buf); n > 0 || err != nil && !isTimeout(err) {
			break // answered, or closed
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a trickled body kept the connection for %v; the read timeout is 300ms", d)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestMCPEventStreamOutlastsWriteTimeout: MCP's standalone event stream
// (GET /mcp) stays open past the server's write timeout, while any other
// answer, a POST to /mcp included, is still cut by it.
func TestMCPEventStreamOutlastsWriteTimeout(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		http.NewResponseController(w).Flush()
		time.Sleep(600 * time.Millisecond)
		io.WriteString(w, "data: two\n\n")
	})
	var deps Deps
	newHarnessWith(t, func(d *Deps) { d.MCP = slow; deps = *d })
	hs := New(deps).HTTPServer(Timeouts{ReadHeader: time.Second, Read: time.Second, Write: 200 * time.Millisecond, Idle: time.Second})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	for method, want := range map[string]bool{"GET": true, "POST": false} {
		req, _ := http.NewRequest(method, "http://"+l.Addr().String()+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s /mcp: %v", method, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.Contains(string(body), "two"); got != want {
			t.Errorf("%s /mcp: the stream's second event arrived: %v, want %v (%q)", method, got, want, body)
		}
	}
}

func TestIsMultipartReadsTheTypeInAnyCase(t *testing.T) {
	for ct, want := range map[string]bool{
		"multipart/form-data; boundary=x": true, "Multipart/Mixed": true, " \tmultipart/related": true, "\u00a0multipart/form-data": true, "MULTIPART/FORM-DATA;boundary": true,
		"application/json": false, "": false, "multipart": false, "text/multipart/x": false, "application/x-www-form-urlencoded": false,
	} {
		if got := isMultipart(ct); got != want {
			t.Errorf("isMultipart(%q) = %v, want %v", ct, got, want)
		}
	}
}
