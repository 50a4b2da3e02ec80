package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// errProxyTimeout is the cause a request's watchdog cancels it with, so
// that a timeout is told apart from a client that went away.
var errProxyTimeout = errors.New("the Timeout setting passed")

// forward decides an absolute-URI request and sends it through the
// guard's transport, which dials only the decided addresses. Redirects are
// passed back to the client, which brings the next hop back here.
//
// One watchdog enforces the Timeout setting: it bounds the decision (DNS),
// the dial and the wait for the response headers, and is then kicked by
// every piece of the body, so a server that goes silent for Timeout is cut
// off while a long download that keeps moving is not (proxy_watchdog.go).
//
// Deciding, sending and passing the answer back (decide, send, pass) are
// functions of their own, each called from here, so that none's locals
// are on the stack while another's deep calls run (the decision's
// lookups, the transport, the response writer's header code): together
// they took the connection's goroutine past 8 KB of stack, which the
// runtime shrinks again at every garbage collection and the next request
// grows again, a copy of the stack that a bare forward proxy does not
// pay. The Record's sink is the deepest call left: a JSON log line
// written through log/slog still takes the stack past 8 KB.
func (p *Proxy) forward(who proxyCaller, w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme == "" || r.URL.Host == "" {
		writeText(w, http.StatusBadRequest, "This is Outbound's egress proxy, not a web server: it takes absolute URLs (GET http://host/path) and CONNECT host:port.\n"+
			"Fix: Set it as the client's HTTP proxy, e.g. curl -x http://USER:PASSWORD@PROXY_ADDRESS https://example.com/.\n")
		return
	}
	snap := p.g.snap.Load() // the decision and the connection pool of one policy
	start := time.Now()
	cctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	fc := &forwardContext{Context: cctx, who: who}
	p.watchdogs.start(&fc.watchdog, cancel, snap.policy.settings.Timeout) // proxy_watchdog.go
	defer p.watchdogs.stop(&fc.watchdog)

	p.decide(fc, snap.policy, r)
	if !fc.d.Allowed {
		if !abandoned(r, fc.d.Code) {
			p.refuse(fc, w, r, fc.d.Refusal(), fc.d.Port)
		}
		return
	}
	resp := p.send(fc, w, r, snap)
	if resp == nil {
		return
	}
	p.pass(fc, w, r, resp, start)
}

// decide decides r under pol. The decision's URL and the decision live in
// the request's context (proxy_context.go), which makes the permit when
// the transport dials.
//
//go:noinline
func (p *Proxy) decide(fc *forwardContext, pol *Policy, r *http.Request) {
	// DecideURL normalises the host in place; the inbound request stays
	// as it came.
	fc.u = *r.URL
	fc.d = pol.DecideURL(fc, p.g.resolver, &fc.u, r.RequestURI)
}

// send sends r, allowed as fc records, and returns the response; it
// answers a failure itself and returns nil.
//
//go:noinline
func (p *Proxy) send(fc *forwardContext, w http.ResponseWriter, r *http.Request, snap *snapshot) *http.Response {
	settings := &snap.policy.settings
	// The inbound header, less its hop-by-hop fields, is the outbound one:
	// the server reads no field of it once the handler runs, and a copy
	// was a map a request that a bare forward proxy does not make.
	dropHopByHop(r.Header)
	out := r.WithContext(fc)
	out.URL, out.Host, out.RequestURI = fc.d.URL, "", ""
	out.Close, out.TransferEncoding, out.Trailer = false, nil, nil
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{settings.UserAgent} // say who is asking, not "Go-http-client"
	}
	resp, err := snap.transport.RoundTrip(out)
	if err != nil {
		if _, refused := AsRefusal(err); !refused && context.Cause(fc) == errProxyTimeout {
			err = context.DeadlineExceeded
		}
		if ref := p.g.transportRefusal(fc, err, &fc.d, settings); !abandoned(r, ref.Code) {
			p.refuse(fc, w, r, ref, fc.d.Port)
		}
		return nil
	}
	return resp
}

// pass passes resp back to the client and makes the request's one
// Record when its body has been passed on (or cut off), so a body that
// stalls counts as a timeout, not also as allowed. The Record is made
// even when copyBody aborts the handler.
func (p *Proxy) pass(fc *forwardContext, w http.ResponseWriter, r *http.Request, resp *http.Response, start time.Time) {
	defer resp.Body.Close()
	d := &fc.d
	fc.rec = Record{URL: r.RequestURI, Host: d.Host, Port: d.Port, Proxied: true, Elapsed: time.Since(start), WouldRefuse: d.WouldRefuse}
	defer p.recordSent(fc, r)
	copyEndToEnd(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	p.copyBody(fc, w, r, resp, d, &fc.rec)
}

// recordSent makes the one Record of a request that was sent: allowed,
// or refused when its body stalled.
func (p *Proxy) recordSent(fc *forwardContext, r *http.Request) {
	if fc.rec.Refusal != nil {
		p.recordStalled(fc, r)
		return
	}
	p.g.recordAt(fc, &fc.rec)
}

// recordStalled records a request whose body stalled, as every refusal
// of the proxy is. Out of line: its copy of the Record takes stack only
// then.
//
//go:noinline
func (p *Proxy) recordStalled(fc *forwardContext, r *http.Request) {
	p.recordProxied(fc, r, fc.rec)
}

// abandoned reports whether a failure is only the echo of the client
// going away (its cancelled context ended a lookup or a dial): nothing was
// refused, and nobody is left to answer. A refusal by policy is still one.
func abandoned(r *http.Request, c Code) bool {
	return r.Context().Err() != nil && (c == CodeTimeout || c == CodeUnreachable)
}

// copyBuffers recycles the buffers bodies and tunnels are copied through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody streams the response body to the client, kicking the
// watchdog with every piece. A body of unknown length may be a stream
// (progress, server-sent events) that must reach the client live, so each
// piece is flushed: an event stream's at once, any other's within
// streamFlushDelay unless the body ends first. Most such bodies are a
// server's ordinary answers that outgrew its buffer; flushing each of
// their pieces cost a write(2) a piece, on top of the one the end of the
// response makes, which a bare forward proxy does not pay. The delay is
// armed only when a piece is not the body's last (most such answers come
// in one read together with their end), so those pay no timer either.
func (p *Proxy) copyBody(fc *forwardContext, w http.ResponseWriter, r *http.Request, resp *http.Response, d *Decision, rec *Record) {
	out := io.Writer(w)
	var f *streamFlusher
	if resp.ContentLength < 0 {
		f = &fc.flusher // the request's own: no allocation of its own
		f.w = w
		if !isEventStream(resp.Header.Get("Content-Type")) {
			f.delay = streamFlushDelay
		}
		defer f.stop()
		out = f
	}
	bufp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufp)
	buf := *bufp
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			fc.watchdog.kick()
			if _, werr := out.Write(buf[:n]); werr != nil {
				return // the client went away
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			if context.Cause(fc) == errProxyTimeout && r.Context().Err() == nil {
				rec.Refusal = p.bodyStalled(d, fc.watchdog.timeout)
			}
			// Cut the connection: a body ended early must not look whole.
			panic(http.ErrAbortHandler)
		}
		if f != nil && n > 0 {
			f.more()
		}
	}
}

// isEventStream reports whether the Content-Type value ct is
// text/event-stream, whatever its parameters, as mime.ParseMediaType
// would (which builds a map of the parameters to say so).
func isEventStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// streamFlushDelay is the longest a piece of a body of unknown length
// waits in the proxy for the next piece before it is flushed to the
// client.
const streamFlushDelay = 5 * time.Millisecond

// streamFlusher writes a body of unknown length and flushes it: at once
// when delay is 0, else from a timer delay after the first piece not yet
// flushed that more of the body follows (more). Writes and flushes are
// serialised, as the timer runs on another goroutine.
type streamFlusher struct {
	w     http.ResponseWriter
	delay time.Duration

	mu      sync.Mutex
	rc      *http.ResponseController // made at the first flush
	timer   *time.Timer
	armed   bool
	stopped bool
}

func (f *streamFlusher) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if err != nil || f.delay > 0 {
		return n, err
	}
	return n, f.flushLocked()
}

// more says that the body goes on after what was written: what is not
// flushed yet is flushed within delay, unless the body ends first.
func (f *streamFlusher) more() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delay == 0 || f.armed || f.stopped {
		return
	}
	f.armed = true
	if f.timer == nil {
		f.timer = time.AfterFunc(f.delay, f.flush)
	} else {
		f.timer.Reset(f.delay)
	}
}

func (f *streamFlusher) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.armed = false
	_ = f.flushLocked()
}

func (f *streamFlusher) flushLocked() error {
	if f.rc == nil {
		f.rc = http.NewResponseController(f.w)
	}
	return f.rc.Flush()
}

// stop ends the flushing before the handler returns (which ends the
// response and writes what is left).
func (f *streamFlusher) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if f.timer != nil {
		f.timer.Stop()
	}
}

// bodyStalled is the refusal of a body that stopped coming for timeout.
func (p *Proxy) bodyStalled(d *Decision, timeout time.Duration) *Refusal {
	return &Refusal{Code: CodeTimeout, Reason: ReasonTimeout, Kind: KindNetwork,
		Message: fmt.Sprintf("%s stopped sending the body for %s.", d.Host, FormatDuration(timeout)),
		Fix:     "Try again later, or " + p.g.wording.raise(SettingTimeout) + ".", Remedy: ChangeSetting(SettingTimeout),
		URL: d.URL.String(), Host: d.Host, Port: d.Port, Entry: d.Entry.String(), Addresses: d.Addresses()}
}
