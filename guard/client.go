package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Request is an outbound HTTP request for the guarded client.
type Request struct {
	Method string // GET when empty
	URL    string
	Header http.Header
	Body   []byte
}

// Response is the answer of the last hop. Its Body must be closed; the
// request's deadline stays in force until then, so a slow body is cut off
// by the same timeout as a slow server.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       io.ReadCloser
	// URL is the final URL after redirects.
	URL *url.URL
	// Redirects lists the URLs that redirected, oldest first.
	Redirects []string
	// Decision is the decision that admitted the final URL.
	Decision Decision

	g        *Guard
	ctx      context.Context
	maxBytes int64
	elapsed  time.Duration // until the headers
	settled  atomic.Bool   // the request's one Record is made
}

// Get fetches raw with GET. See Do.
func (g *Guard) Get(ctx context.Context, raw string) (*Response, error) {
	return g.Do(ctx, Request{URL: raw})
}

// Do sends req through the policy. It follows redirects by hand: each hop
// is decided afresh (scheme, credentials, port, host, allowlist and every
// resolved address) before anything is sent to it. One deadline, the
// Timeout setting, covers all hops and the reading of the body. No cookies
// are kept, and headers the caller set, such as Authorization, are not
// carried to another host. Every refusal is returned as a *Refusal.
//
// The request has one Record: a refusal when it is refused, otherwise
// the outcome of its body, made when ReadAll ends (allowed, or too large)
// or when the body is closed.
func (g *Guard) Do(ctx context.Context, req Request) (*Response, error) {
	p := g.Policy()
	s := &p.settings
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	start := time.Now()
	resp, err := g.do(ctx, p, req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.elapsed = time.Since(start)
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel, settle: func() { resp.settle(nil) }}
	return resp, nil
}

func (g *Guard) do(ctx context.Context, p *Policy, req Request) (*Response, error) {
	s := &p.settings
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	body := req.Body
	// Canonical keys, so that the Cookie and User-Agent rules below apply
	// however the caller spelled them.
	header := make(http.Header, len(req.Header))
	for k, v := range req.Header {
		ck := http.CanonicalHeaderKey(k)
		header[ck] = append(header[ck], v...)
	}
	var redirects []string
	raw := req.URL
	var firstOrigin string
	var would *Refusal // the first hop report-only rules would have refused
	for hop := 0; ; hop++ {
		snap := g.snap.Load() // the decision and the connection pool of one policy
		d := snap.policy.Decide(ctx, g.resolver, raw)
		if !d.Allowed {
			return nil, g.refused(ctx, d.Refusal(), d.Port, redirects)
		}
		if would == nil {
			would = d.WouldRefuse
		}
		d.WouldRefuse = would
		// The origin (scheme, host and port), not the host name, is what
		// credentials belong to: https://api to http://api is a downgrade
		// an Authorization header must not follow.
		if origin := originOf(&d); hop == 0 {
			firstOrigin = origin
		} else if origin != firstOrigin {
			if body != nil {
				return nil, g.refused(ctx, &Refusal{Code: CodeForbidden, Reason: ReasonCrossOriginBody, URL: d.URL.String(), Host: d.Host,
					Message: fmt.Sprintf("The site redirected the %s request and its body to another origin (%s); the body is not sent there.", method, origin),
					Fix:     "Point the integration or the link at the final URL directly."}, d.Port, redirects)
			}
			header = crossOriginHeader(header)
		}
		hreq, err := http.NewRequestWithContext(withPermit(ctx, &d), method, d.URL.String(), bytes.NewReader(body))
		if err != nil {
			return nil, g.refused(ctx, &Refusal{Code: CodeInvalid, Reason: ReasonBadURL, URL: raw, Host: d.Host,
				Message: fmt.Sprintf("The request to %s could not be built (%v).", d.Host, err), Fix: "Check the method and URL."}, d.Port, redirects)
		}
		if body == nil {
			hreq.Body, hreq.GetBody, hreq.ContentLength = nil, nil, 0
		}
		for k, v := range header {
			hreq.Header[k] = v
		}
		hreq.Header.Del("Cookie")
		hreq.Header.Set("User-Agent", s.UserAgent)
		resp, err := snap.transport.RoundTrip(hreq)
		if err != nil {
			return nil, g.refused(ctx, g.transportRefusal(ctx, err, &d, s), d.Port, redirects)
		}
		if !isRedirect(resp.StatusCode) {
			return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: resp.Body,
				URL: d.URL, Redirects: redirects, Decision: d, g: g, ctx: ctx, maxBytes: s.MaxBytes}, nil
		}
		loc := resp.Header.Get("Location")
		drain(resp.Body)
		redirects = append(redirects, d.URL.String())
		if hop >= s.Redirects {
			return nil, g.refused(ctx, &Refusal{Code: CodeTooLarge, Reason: ReasonRedirects, URL: raw, Host: d.Host,
				Message: fmt.Sprintf("The page redirected more than %d times.", s.Redirects),
				Fix:     "Give the agent the final URL directly, or " + g.wording.raise(SettingRedirects) + ".", Remedy: ChangeSetting(SettingRedirects)}, d.Port, redirects[:len(redirects)-1])
		}
		next, err := d.URL.Parse(loc)
		if loc == "" || err != nil {
			return nil, g.refused(ctx, &Refusal{Code: CodeUnreachable, Reason: ReasonBadRedirect, URL: raw, Host: d.Host,
				Message: fmt.Sprintf("%s answered %d with an unusable Location %q.", d.Host, resp.StatusCode, loc),
				Fix:     "Give the agent the final URL directly."}, d.Port, redirects[:len(redirects)-1])
		}
		raw = next.String()
		// 301, 302 and 303 turn every method but GET and HEAD into a GET
		// without a body, as browsers and Go's own client do; only 307
		// and 308 replay the method and body (and only to the same origin).
		if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect && method != http.MethodGet && method != http.MethodHead {
			method, body = http.MethodGet, nil
			header.Del("Content-Type")
		}
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// originOf is a decision's scheme://host:port.
func originOf(d *Decision) string {
	return d.URL.Scheme + "://" + net.JoinHostPort(d.Host, strconv.Itoa(int(d.Port)))
}

// crossOriginHeader keeps only content negotiation headers when a redirect
// leaves the first origin: credentials and integration secrets set for one
// origin must never reach another, nor the same host over plain HTTP.
func crossOriginHeader(h http.Header) http.Header {
	out := http.Header{}
	for _, k := range []string{"Accept", "Accept-Language", "Content-Type"} {
		if v, ok := h[k]; ok {
			out[k] = v
		}
	}
	return out
}

func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10) // lets a small body's connection be reused
	_ = body.Close()
}

// transportRefusal turns an http.Transport error into a refusal: the
// connect-time check's own refusal, a timeout, or an unreachable host.
func (g *Guard) transportRefusal(ctx context.Context, err error, d *Decision, s *Settings) *Refusal {
	if r, ok := AsRefusal(err); ok {
		c := *r
		c.URL = d.URL.String()
		return &c
	}
	base := Refusal{URL: d.URL.String(), Host: d.Host, Port: d.Port, Entry: d.Entry.String(), Addresses: d.Addresses(), Kind: KindNetwork}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		base.Code, base.Reason = CodeTimeout, ReasonTimeout
		base.Message = fmt.Sprintf("%s did not answer within %s.", d.Host, FormatDuration(s.Timeout))
		base.Fix, base.Remedy = "Try again later, or "+g.wording.raise(SettingTimeout)+".", ChangeSetting(SettingTimeout)
		return &base
	}
	base.Code, base.Reason = CodeUnreachable, ReasonConnect
	base.Message = fmt.Sprintf("Could not connect to %s: %s.", d.Host, rootCause(err))
	base.Fix = "Check that the site is up; the guard allowed it, but the connection failed."
	if ctx.Err() == context.Canceled {
		base.Message = fmt.Sprintf("The request to %s was cancelled.", d.Host)
		base.Fix = "Ask again."
	}
	return &base
}

// rootCause keeps the innermost message of a wrapped network error, such
// as "connection refused", without the URL and address noise around it.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			msg := err.Error()
			if i := strings.LastIndex(msg, ": "); i >= 0 {
				msg = msg[i+2:]
			}
			return msg
		}
		err = next
	}
}

// cancelOnClose ends the request's context when the body is closed, and
// settles the request's Record as allowed unless it was already made.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
	settle func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.settle()
	c.cancel()
	return err
}
