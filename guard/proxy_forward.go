package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
// the dial and the wait for the response headers, and is then re-armed by
// every piece of the body, so a server that goes silent for Timeout is cut
// off while a long download that keeps moving is not.
func (p *Proxy) forward(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if r.URL.Scheme == "" || r.URL.Host == "" {
		writeText(w, http.StatusBadRequest, "This is Outbound's egress proxy, not a web server: it takes absolute URLs (GET http://host/path) and CONNECT host:port.\n"+
			"Fix: Set it as the client's HTTP proxy, e.g. curl -x http://USER:PASSWORD@PROXY_ADDRESS https://example.com/.\n")
		return
	}
	snap := p.g.snap.Load() // the decision and the connection pool of one policy
	pol := snap.policy
	timeout := pol.settings.Timeout
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(timeout, func() { cancel(errProxyTimeout) })
	defer watchdog.Stop()

	u := *r.URL // DecideURL normalises the host in place; the inbound request stays as it came
	d := pol.DecideURL(ctx, p.g.resolver, &u, r.RequestURI)
	if !d.Allowed {
		if !abandoned(r, d.Code) {
			p.refuse(ctx, w, r, d.Refusal(), d.Port)
		}
		return
	}
	out := r.WithContext(withPermit(ctx, &d))
	out.URL, out.Host, out.RequestURI = d.URL, "", ""
	out.Close, out.TransferEncoding, out.Trailer = false, nil, nil
	out.Header = make(http.Header, len(r.Header))
	copyEndToEnd(out.Header, r.Header)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{pol.settings.UserAgent} // say who is asking, not "Go-http-client"
	}
	resp, err := snap.transport.RoundTrip(out)
	if err != nil {
		if _, refused := AsRefusal(err); !refused && context.Cause(ctx) == errProxyTimeout {
			err = context.DeadlineExceeded
		}
		if ref := p.g.transportRefusal(ctx, err, &d, &pol.settings); !abandoned(r, ref.Code) {
			p.refuse(ctx, w, r, ref, d.Port)
		}
		return
	}
	defer resp.Body.Close()
	// The request's one Record is made when its body has been passed on
	// (or cut off), so a body that stalls counts as a timeout, not also
	// as allowed. It runs even when copyBody aborts the handler.
	rec := Record{URL: r.RequestURI, Host: d.Host, Port: d.Port, Proxied: true, Elapsed: time.Since(start), WouldRefuse: d.WouldRefuse}
	defer func() {
		p.recordProxied(ctx, r, rec)
	}()
	copyEndToEnd(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	p.copyBody(ctx, w, r, resp, watchdog, timeout, &d, &rec)
}

// abandoned reports whether a failure is only the echo of the client
// going away (its cancelled context ended a lookup or a dial): nothing was
// refused, and nobody is left to answer. A refusal by policy is still one.
func abandoned(r *http.Request, c Code) bool {
	return r.Context().Err() != nil && (c == CodeTimeout || c == CodeUnreachable)
}

// copyBuffers recycles the buffers bodies and tunnels are copied through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody streams the response body to the client, re-arming the
// watchdog with every piece. A body of unknown length is flushed piece by
// piece, so streams (server-sent events, progress) reach the client live.
func (p *Proxy) copyBody(ctx context.Context, w http.ResponseWriter, r *http.Request, resp *http.Response, watchdog *time.Timer, timeout time.Duration, d *Decision, rec *Record) {
	var rc *http.ResponseController
	if resp.ContentLength < 0 {
		rc = http.NewResponseController(w)
	}
	bufp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufp)
	buf := *bufp
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			watchdog.Reset(timeout)
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the client went away
			}
			if rc != nil {
				_ = rc.Flush()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			if context.Cause(ctx) == errProxyTimeout && r.Context().Err() == nil {
				rec.Refusal = p.bodyStalled(d, timeout)
			}
			// Cut the connection: a body ended early must not look whole.
			panic(http.ErrAbortHandler)
		}
	}
}

// bodyStalled is the refusal of a body that stopped coming for timeout.
func (p *Proxy) bodyStalled(d *Decision, timeout time.Duration) *Refusal {
	return &Refusal{Code: CodeTimeout, Reason: ReasonTimeout, Kind: KindNetwork,
		Message: fmt.Sprintf("%s stopped sending the body for %s.", d.Host, FormatDuration(timeout)),
		Fix:     "Try again later, or " + p.g.wording.raise(SettingTimeout) + ".", Remedy: ChangeSetting(SettingTimeout),
		URL: d.URL.String(), Host: d.Host, Port: d.Port, Entry: d.Entry.String(), Addresses: d.Addresses()}
}
