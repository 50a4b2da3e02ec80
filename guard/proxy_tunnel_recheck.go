package guard

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// An open CONNECT tunnel is one decision that may last for hours: a
// client keeps a busy keep-alive TLS connection open as long as it likes,
// and the idle limit never ends it. Were it decided only when it opened,
// an admin who removes a host from the allowlist (or narrows the public
// web to a list) would stop new requests to it but not the agent that
// already holds a tunnel there. So every policy change decides each open
// tunnel again, and closes the ones the new policy refuses, each with one
// refusal record, since each is a decision.
//
// The decision again is made on what the tunnel was decided and dialled
// on: its host and port, its caller (scoped entries apply), and the
// addresses that were checked when it opened, one of which it is
// connected to. So it looks nothing up and dials nothing: it needs no
// network, takes microseconds, cannot fail or stall on a resolver, and
// judges the connection that is actually open rather than whatever the
// name resolves to now (a fresh answer says nothing about this
// connection, and a failed lookup would close tunnels the policy allows).
//
// It happens off the swap: SetPolicy only closes the retired snapshot's
// channel. Two things then decide again: each direction of a busy tunnel,
// before it passes on the next bytes it read (so not a byte moves under a
// policy the tunnel was not decided under), and the proxy's watch, which
// runs while any tunnel is open and decides the quiet ones, so that they
// close and are recorded now rather than at their next byte.

// watchTunnels decides the open tunnels again after every policy change,
// until stop is closed (the last tunnel ended). A tunnel that joins the
// set after the watch has listed it decides itself against the policy of
// that moment (Proxy.tunnel), so none is missed.
//
// A policy change also asks about the tunnels' credentials at once (with
// ProxyOptions.CredentialRecheck): the embedding process swaps a policy
// in when any stored change arrives, a credential revoked elsewhere
// included, and it is then enforced in the tunnels within the bound
// changes keep rather than at the next periodic check.
func (p *Proxy) watchTunnels(stop <-chan struct{}) {
	var credentialsNow chan struct{}
	if p.opts.CredentialRecheck > 0 {
		// Apart, so that a slow credential store never holds up the
		// policy's decisions; waited for, so that Close waits for both.
		credentialsNow = make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.watchCredentials(stop, credentialsNow)
		}()
		defer func() { <-done }()
	}
	for {
		snap := p.g.snap.Load()
		for _, t := range p.tunnels.list() {
			p.current(t)
		}
		select {
		case <-snap.retired:
		case <-stop:
			return
		}
		select {
		case credentialsNow <- struct{}{}: // nil without rechecks: never ready
		default: // a check is already due
		}
	}
}

// current reports whether t may go on under the policy in force,
// deciding it again (and closing it, recorded) if the policy changed
// since it was last decided. The usual answer is three atomic loads.
func (p *Proxy) current(t *tunnelConn) bool {
	if t.checked.Load() == p.g.Policy() {
		return !t.revoked.Load()
	}
	return p.redecide(t)
}

// redecide decides t under the policy in force, which it reads under t's
// lock: two callers racing never decide under an older policy than the
// one the other saw, so a later policy's verdict always stands.
func (p *Proxy) redecide(t *tunnelConn) bool {
	t.mu.Lock()
	if t.revoked.Load() || t.closed.Load() {
		t.mu.Unlock()
		return false
	}
	if !p.decideLocked(t) {
		return false
	}
	t.mu.Unlock()
	return true
}

// decideLocked is redecide with t.mu held. It reports whether t may go
// on; when it may not, it has ended t, recorded the refusal, and released
// t.mu.
func (p *Proxy) decideLocked(t *tunnelConn) bool {
	pol := p.g.Policy()
	if t.checked.Load() == pol {
		return true
	}
	d := pol.DecideURL(t.ctx, decidedAddrs(t.addrs), &url.URL{Scheme: "https", Host: t.hostPort(), Path: "/"}, t.raw)
	if d.Allowed {
		t.checked.Store(pol)
		return true
	}
	opened := t.opened
	t.endLocked(func() {
		ref := d.Refusal()
		ref.URL = t.raw // as the tunnel's allowed record named it
		if !opened {
			// Refused as it opens (the policy changed while it dialled):
			// the CONNECT's own refusal, answered instead of the 200.
			p.fileRefusal(t.ctx, t.raw, Record{Refusal: ref, URL: t.raw, Host: d.Host, Port: d.Port, Proxied: true})
			answerConn(t.client, ref, t.idle)
			return
		}
		ref.Message = "The allowlist or settings changed while the tunnel to " + t.hostPort() + " was open, and the tunnel was closed: " + ref.Message
		p.fileRefusal(t.ctx, t.raw, Record{Refusal: ref, URL: t.raw, Host: d.Host, Port: d.Port, Proxied: true})
	})
	return false
}

// opening decides t again as it joins the set, for what changed while it
// dialled, and answers the CONNECT: a tunnel whose credential its owner
// revoked is closed unanswered and unrecorded, as closeTunnelsOf closes
// the open ones (it listed the set before t joined it); one the policy
// now refuses is answered and recorded as a refused CONNECT
// (decideLocked); an allowed one is answered 200. It reports whether t
// is open.
func (p *Proxy) opening(t *tunnelConn) bool {
	t.mu.Lock()
	if t.revoked.Load() {
		t.mu.Unlock()
		return false
	}
	if p.revoked != nil && p.revoked(t.ctx.who.user) {
		t.endLocked(nil)
		return false
	}
	if !p.decideLocked(t) {
		return false
	}
	// Answered under the lock, so that no decision finds the tunnel
	// between its check and its 200.
	_ = t.client.SetWriteDeadline(time.Now().Add(t.idle))
	if _, err := io.WriteString(t.client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		t.mu.Unlock()
		t.closeBoth()
		return false
	}
	t.opened = true
	t.mu.Unlock()
	return true
}

// allow gives the handler's verdict that t is allowed, record, unless a
// decision made since (the watch's, a credential's) ended it, which is
// then its record. It decides t again first if the policy changed, and
// records under t's lock, so that a refusal made later always follows
// the allowed record. It reports whether t may go on.
func (p *Proxy) allow(t *tunnelConn, record func()) bool {
	t.mu.Lock()
	if t.revoked.Load() {
		t.mu.Unlock()
		return false
	}
	if !p.decideLocked(t) {
		return false
	}
	record()
	t.mu.Unlock()
	return true
}

// refuseOpen gives the handler's verdict that t is refused, record, and
// closes it, unless a decision made since ended it, which is then its
// one record. It reports whether it recorded.
func (t *tunnelConn) refuseOpen(record func()) bool {
	t.mu.Lock()
	if t.revoked.Load() {
		t.mu.Unlock()
		return false
	}
	t.endLocked(record)
	return true
}

func (t *tunnelConn) hostPort() string { return joinHostPort(t.host, strconv.Itoa(int(t.port))) }

// decidedAddrs answers a re-decision's lookup with the addresses the
// tunnel was decided and dialled on, so that deciding again looks
// nothing up.
type decidedAddrs []netip.Addr

func (a decidedAddrs) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return a, nil
}

// endLocked ends t for a decision made while it was open, with t.mu
// held, which it releases. Once revoked is set no byte moves (current
// says no); record, when set, then records the decision, and only then
// are both sides closed, so that whoever sees the tunnel close finds its
// record made (and a shutdown that follows does not lose it).
func (t *tunnelConn) endLocked(record func()) {
	t.revoked.Store(true)
	t.mu.Unlock()
	if record != nil {
		record()
	}
	t.closeBoth()
}

// end is endLocked for a caller that does not hold t.mu. It does nothing
// to a tunnel that is closed already, or ended, and reports whether it
// ended t.
func (t *tunnelConn) end(record func()) bool {
	t.mu.Lock()
	if t.revoked.Load() || t.closed.Load() {
		t.mu.Unlock()
		return false
	}
	t.endLocked(record)
	return true
}

// A credential is checked when its request comes, and a tunnel is one
// request: a token revoked while an agent holds a tunnel would be refused
// only from the agent's next request, never in the tunnel. A proxy told
// of a revocation closes the credential's tunnels then (an embedded
// proxy's call credential, CallCredential.Revoke); one that is not told
// (`console proxy`, whose tokens are revoked by other processes) asks
// again every ProxyOptions.CredentialRecheck.

// closeTunnelsOf closes, unrecorded, the open tunnels of the credential
// named user, revoked by its owner: nothing is decided, the owner ended
// it. A tunnel still dialling is not in the set yet; it finds the
// credential revoked as it joins (opening, through Proxy.revoked).
func (p *Proxy) closeTunnelsOf(user string) {
	for _, t := range p.tunnels.list() {
		if t.ctx.who.user == user {
			t.end(nil)
		}
	}
}

// watchCredentials asks Authenticate again about the credential of each
// open tunnel every CredentialRecheck, and whenever now is poked (a
// policy change), until stop is closed.
func (p *Proxy) watchCredentials(stop <-chan struct{}, now <-chan struct{}) {
	// A check under way when the last tunnel ends is abandoned, so that
	// Close does not wait for a slow store.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(p.opts.CredentialRecheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		case <-now:
		}
		p.recheckCredentials(ctx)
	}
}

// recheckCredentials asks once per credential, however many tunnels it
// holds, within the Timeout setting, and closes the tunnels of each
// credential Authenticate no longer accepts. A check that could not be
// made closes nothing: a store that is down for a moment must not cut
// every agent's tunnels, and the next check asks again.
func (p *Proxy) recheckCredentials(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.g.Policy().settings.Timeout)
	defer cancel()
	type key struct{ user, pass string }
	verdicts := map[key]error{}
	for _, t := range p.tunnels.list() {
		if t.revoked.Load() || t.closed.Load() {
			continue
		}
		c := key{t.ctx.who.user, t.pass}
		err, asked := verdicts[c]
		if !asked {
			_, err = p.opts.Authenticate(ctx, c.user, c.pass)
			verdicts[c] = err
		}
		switch {
		case errors.Is(err, ErrRevokedCredential):
			t.end(nil) // an ended call's, recorded as its stragglers are: not at all
		case errors.Is(err, ErrProxyCredential):
			t.end(func() {
				p.fileRefusal(t.ctx, t.raw, Record{URL: t.raw, Host: t.host, Port: t.port, Proxied: true, Refusal: &Refusal{
					Code: CodeForbidden, Reason: ReasonProxyAuth, URL: t.raw,
					Message: "The proxy credential of the tunnel to " + t.hostPort() + " was revoked while the tunnel was open, and the tunnel was closed.",
					Fix:     "Give the client a current credential. " + p.opts.AuthHint,
				}})
			})
		}
	}
}
