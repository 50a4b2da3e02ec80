package guard

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
)

// CallCredential is a proxy credential issued for one call by
// EmbeddedProxy.Credential, such as one screenshot's browser context.
// Besides the user name and password its client sends, it keeps the
// refusals the proxy made for that client's requests, so the call can
// answer with the very value the proxy recorded, instead of reading the
// proxy's answer back out of headers and text.
type CallCredential struct {
	Username, Password string

	refusals *refusalBook
	revoke   func()
}

// Revoke ends the credential: later requests with it are answered 407,
// and not recorded. Tunnels it already opened run on until they end or
// idle out. Revoking twice is harmless; the refusals stay readable.
func (c *CallCredential) Revoke() { c.revoke() }

// Refusal returns the refusal the proxy made for this credential's request
// of rawURL, as it was recorded, or nil if it refused none. An absolute-URI
// request is found by its URL as the client sent it; an https URL also
// finds the refused CONNECT of its host and port, which is all the proxy
// sees of it. When one URL was refused twice, the later refusal is kept.
func (c *CallCredential) Refusal(rawURL string) *Refusal {
	if r := c.refusals.get(rawURL); r != nil {
		return r
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	return c.refusals.get(connectTarget(host))
}

// refusalsKept bounds the refusals kept per credential: a page refused a
// thousand images keeps the latest, and the call's own navigation is one
// of the latest when the call looks it up.
const refusalsKept = 256

// refusalBook keeps a credential's refusals by request target, the oldest
// forgotten first.
type refusalBook struct {
	mu    sync.Mutex
	byKey map[string]*Refusal
	order []string
}

func newRefusalBook() *refusalBook { return &refusalBook{byKey: map[string]*Refusal{}} }

func (b *refusalBook) put(target string, r *Refusal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byKey[target]; ok {
		b.order = slices.DeleteFunc(b.order, func(k string) bool { return k == target })
	} else if len(b.order) >= refusalsKept {
		delete(b.byKey, b.order[0])
		b.order = b.order[1:]
	}
	b.byKey[target] = r
	b.order = append(b.order, target)
}

func (b *refusalBook) get(target string) *Refusal {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byKey[target]
}

// proxyUserKey carries the authenticated proxy user name in a request's
// context, so a refusal can be filed under the credential that asked.
type proxyUserKey struct{}

// proxiedTarget names what a proxied request asked for, the way
// CallCredential.Refusal looks it up: the absolute URI as sent, or the
// CONNECT's host and port.
func proxiedTarget(r *http.Request) string {
	if r.Method == http.MethodConnect {
		return connectTarget(r.Host)
	}
	return r.RequestURI
}

func connectTarget(hostport string) string { return "https://" + hostport + "/" }

// fileRefusal hands a refusal the proxy recorded to the hook that keeps it
// for its credential, if the proxy has one.
func (p *Proxy) fileRefusal(ctx context.Context, req *http.Request, r *Refusal) {
	if p.refused == nil || r == nil {
		return
	}
	user, _ := ctx.Value(proxyUserKey{}).(string)
	p.refused(user, proxiedTarget(req), r)
}

// keepRefusal files r under the call credential user, if it is one.
func (e *EmbeddedProxy) keepRefusal(user, target string, r *Refusal) {
	e.mu.RLock()
	c, ok := e.creds[user]
	e.mu.RUnlock()
	if ok && c.refusals != nil {
		c.refusals.put(target, r)
	}
}
