package guard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// EmbeddedProxyOptions configure StartProxy. The zero value is usable.
type EmbeddedProxyOptions struct {
	// Caller is whom requests made with the process credential are
	// reported as; its Tool is "proxy" when empty.
	Caller Caller
	// TunnelIdleTimeout is ProxyOptions.TunnelIdleTimeout.
	TunnelIdleTimeout time.Duration
}

// EmbeddedProxy is a Proxy serving on an ephemeral loopback port inside
// this process, for a browser or a child process to send its traffic
// through. It accepts only credentials it handed out: one random
// credential for the process, and one per call from Credential.
type EmbeddedProxy struct {
	proxy  *Proxy
	server *http.Server
	ln     net.Listener
	served chan error

	mu    sync.RWMutex
	creds map[string]credential // by user name

	processUser, processPass string

	closeOnce sync.Once
	closeErr  error
}

type credential struct {
	pass   string
	caller Caller
	// refusals are the proxy's refusals of this credential's requests;
	// nil for the process credential, whose refusals nobody reads back.
	refusals *refusalBook
	// revokedAt is set when the call ended; the credential is then kept
	// for revokedGrace only to tell its stragglers from guesses.
	revokedAt time.Time
}

// revokedGrace is how long a revoked credential is still recognised (and
// refused without a record).
const revokedGrace = time.Minute

// closeGrace is how long Close lets absolute-URI requests in flight finish.
const closeGrace = 5 * time.Second

// StartProxy serves a guarded proxy on 127.0.0.1 at a port the system
// picks. Close it when done.
func (g *Guard) StartProxy(opts EmbeddedProxyOptions) (*EmbeddedProxy, error) {
	e := &EmbeddedProxy{creds: map[string]credential{}, served: make(chan error, 1)}
	proxy, err := g.NewProxy(ProxyOptions{
		Authenticate:      e.authenticate,
		AuthHint:          "Use a credential from this process's EmbeddedProxy (ProcessCredential or Credential).",
		TunnelIdleTimeout: opts.TunnelIdleTimeout,
	})
	if err != nil {
		return nil, err
	}
	proxy.refused = e.keepRefusal
	proxy.screened = e.screened
	proxy.revoked = e.revoked
	e.proxy = proxy
	caller := opts.Caller
	if caller.Tool == "" {
		caller.Tool = proxyTool
	}
	e.processUser, e.processPass = e.issue(caller, nil)
	e.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("guard: the embedded proxy cannot listen on 127.0.0.1: %w", err)
	}
	e.server = &http.Server{
		Handler:           proxy,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // every failure is answered to the client or reported
	}
	go func() { e.served <- e.server.Serve(e.ln) }()
	return e, nil
}

// Addr returns the proxy's address, 127.0.0.1:PORT.
func (e *EmbeddedProxy) Addr() string { return e.ln.Addr().String() }

// URL returns the proxy's URL without a credential, http://127.0.0.1:PORT,
// the form Chromium's proxy server setting takes. Go clients put a
// credential into it: &url.URL{Scheme: "http", Host: e.Addr(), User: url.UserPassword(user, pass)}.
func (e *EmbeddedProxy) URL() string { return "http://" + e.Addr() }

// ProcessCredential returns the credential made for this process, whose
// requests are reported under EmbeddedProxyOptions.Caller.
func (e *EmbeddedProxy) ProcessCredential() (username, password string) {
	return e.processUser, e.processPass
}

// Credential issues a credential for one call, such as one screenshot's
// browser context, so that its requests and refusals are tied to c, and
// the call can read back the refusals its requests met
// (CallCredential.Refusal). The credential works until Revoke is called;
// after that it is answered 407, and its open tunnels are closed.
func (e *EmbeddedProxy) Credential(c Caller) *CallCredential {
	if c.Tool == "" {
		c.Tool = proxyTool
	}
	book := newRefusalBook()
	user, pass := e.issue(c, book)
	var once sync.Once
	return &CallCredential{Username: user, Password: pass, refusals: book, revoke: func() {
		once.Do(func() {
			e.mu.Lock()
			if c, ok := e.creds[user]; ok {
				c.revokedAt = time.Now()
				e.creds[user] = c
			}
			e.mu.Unlock()
			e.proxy.closeTunnelsOf(user)
			if rec, ok := book.end(); ok {
				e.proxy.g.Record(rec)
			}
		})
	}}
}

// issue makes a random user name and a 192-bit password for c and records
// them. The password is 32 characters, so comparing it allocates nothing.
func (e *EmbeddedProxy) issue(c Caller, refusals *refusalBook) (user, pass string) {
	var b [8 + 24]byte
	_, _ = rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program instead
	user = "outbound-" + hex.EncodeToString(b[:8])
	pass = base64.RawURLEncoding.EncodeToString(b[8:])
	e.mu.Lock()
	e.forgetRevokedLocked(time.Now())
	e.creds[user] = credential{pass: pass, caller: c, refusals: refusals}
	e.mu.Unlock()
	return user, pass
}

// forgetRevokedLocked drops credentials revoked longer than revokedGrace
// ago; it runs as new ones are issued, so the map stays as small as the
// calls of the last minute.
func (e *EmbeddedProxy) forgetRevokedLocked(now time.Time) {
	for user, c := range e.creds {
		if !c.revokedAt.IsZero() && now.Sub(c.revokedAt) > revokedGrace {
			delete(e.creds, user)
		}
	}
}

// revoked reports whether user's credential was revoked (or is forgotten,
// long revoked): Revoke sets revokedAt before it closes the credential's
// tunnels, so a tunnel that joins the set after that finds it here.
func (e *EmbeddedProxy) revoked(user string) bool {
	e.mu.RLock()
	c, ok := e.creds[user]
	e.mu.RUnlock()
	return !ok || !c.revokedAt.IsZero()
}

func (e *EmbeddedProxy) authenticate(_ context.Context, user, pass string) (Caller, error) {
	e.mu.RLock()
	c, ok := e.creds[user]
	e.mu.RUnlock()
	if !ok || subtle.ConstantTimeCompare([]byte(c.pass), []byte(pass)) != 1 {
		return Caller{}, ErrProxyCredential
	}
	if !c.revokedAt.IsZero() {
		if time.Since(c.revokedAt) <= revokedGrace {
			return Caller{}, ErrRevokedCredential
		}
		return Caller{}, ErrProxyCredential
	}
	return c.caller, nil
}

// Close stops accepting, lets absolute-URI requests in flight finish for
// up to five seconds, then closes every tunnel in both directions. Later
// calls return the first call's result.
func (e *EmbeddedProxy) Close() error {
	e.closeOnce.Do(func() { e.closeErr = e.shutdown() })
	return e.closeErr
}

func (e *EmbeddedProxy) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	err := e.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = e.server.Close()
	}
	_ = e.proxy.Close()
	if serveErr := <-e.served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
