package guard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
// and not recorded, and the tunnels it opened are closed, unrecorded too
// (the call is over; what its client still sends is a straggler). It records the call's first refusal, held until now with a
// note of the others (see callRefusals). Revoking twice is harmless; the
// refusals stay readable.
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

	callRefusals
	screen screen
}

func newRefusalBook() *refusalBook { return &refusalBook{byKey: map[string]*Refusal{}} }

// Refused returns how many of the call's requests the proxy refused, and
// on which hosts, so far.
func (c *CallCredential) Refused() CallRefusals {
	c.refusals.mu.Lock()
	defer c.refusals.mu.Unlock()
	out := CallRefusals{Count: c.refusals.count, Hosts: slices.Clone(c.refusals.hosts), MoreHosts: c.refusals.moreHosts}
	return out
}

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

// recordProxied records rec, a proxied request's one Record. A refusal
// goes to the hook that files it for its credential and records it, when
// the proxy has one.
func (p *Proxy) recordProxied(ctx context.Context, req *http.Request, rec Record) {
	if p.refused == nil || rec.Refusal == nil {
		p.g.record(ctx, rec)
		return
	}
	p.fileRefusal(ctx, proxiedTarget(req), rec)
}

// fileRefusal is recordProxied for a refusal of the request of target,
// with a hook to file it under: one made after the request was answered
// (a tunnel closed while open) has no request left to name it by.
func (p *Proxy) fileRefusal(ctx context.Context, target string, rec Record) {
	if p.refused == nil {
		p.g.record(ctx, rec)
		return
	}
	user, _ := ctx.Value(proxyUserKey{}).(string)
	p.refused(ctx, user, target, rec)
}

// keepRefusal records rec, a refusal of user's request of target, and
// files it under user when that is a call credential. A call's refusals
// are each recorded, but only one of them is a row (see callRefusals).
func (e *EmbeddedProxy) keepRefusal(ctx context.Context, user, target string, rec Record) {
	e.mu.RLock()
	c, ok := e.creds[user]
	e.mu.RUnlock()
	g := e.proxy.g
	if !ok || c.refusals == nil {
		g.record(ctx, rec)
		return
	}
	// Stamped now, as Guard.record would, so the value the call reads back
	// is complete even while its Record is held.
	rec.Caller, rec.Time = CallerFrom(ctx), g.now()
	rec.Redirects = slices.Clone(rec.Redirects)
	rec.Refusal.stamp(rec.Caller, rec.Port, rec.Redirects)
	c.refusals.put(target, rec.Refusal)
	if out, now := c.refusals.admit(rec); now {
		g.Record(out)
	}
}

// CallRefusals counts what one call's client was refused.
type CallRefusals struct {
	// Count is every refused request of the call.
	Count int
	// Hosts are the distinct hosts refused, in the order first refused,
	// at most callHostsKept of them; MoreHosts counts the others.
	Hosts     []string
	MoreHosts int
}

// callHostsKept bounds the distinct hosts a call keeps by name.
const callHostsKept = 64

// callHostsShown is how many hosts a row's note names.
const callHostsShown = 10

// callRefusals is why one page cannot flood the refusal log. Every refused
// request of a call is recorded (counted and logged, one Record each), but
// a page may ask for thousands of refused images: only the call's first
// refusal is a row. Its Record is held until the call ends, when it is
// recorded with a Note that counts the rest and names their hosts; all the
// later ones are recorded at once, marked Burst. A refusal met after the
// call ended, with none before, is recorded unheld.
type callRefusals struct {
	count     int
	hosts     []string
	seen      map[string]bool
	moreHosts int
	held      *Record
	ended     bool
}

// admit counts rec, a refusal of the call, and returns the Record to
// record now, if any.
func (b *refusalBook) admit(rec Record) (Record, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count++
	host := rec.Host
	if host == "" {
		host = rec.Refusal.Host
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if host != "" && !b.seen[host] {
		if len(b.hosts) < callHostsKept {
			b.seen[host] = true
			b.hosts = append(b.hosts, host)
		} else {
			b.moreHosts++ // an estimate past the bound: a host seen twice there counts twice
		}
	}
	if b.count == 1 && !b.ended {
		b.held = &rec
		return Record{}, false
	}
	rec.Burst = b.count > 1
	return rec, true
}

// end marks the call over and returns its held Record, noted with what
// the call was refused besides.
func (b *refusalBook) end() (Record, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended = true
	if b.held == nil {
		return Record{}, false
	}
	rec := *b.held
	b.held = nil
	if b.count > 1 {
		rec.Note = refusalsNote(b.count, b.hosts, b.moreHosts)
	}
	return rec, true
}

// refusalsNote says what a call's one row stands for.
func refusalsNote(count int, hosts []string, more int) string {
	shown := hosts[:min(len(hosts), callHostsShown)]
	list := strings.Join(shown, ", ")
	if rest := len(hosts) - len(shown) + more; rest > 0 {
		list += fmt.Sprintf(" and %d more", rest)
	}
	n := len(hosts) + more
	word := "hosts"
	if n == 1 {
		word = "host"
	}
	return fmt.Sprintf("The same call was refused %d requests in all, on %d %s (%s); this row stands for them all, and the decision log has a line for each.", count, n, word, list)
}
