package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"syscall"
)

// permit is what a decision allowed: one host and port, reachable at the
// addresses that were checked, under the entry that admitted it. The
// client puts it into the request's context; the dialer connects only to
// those addresses and checks each again at connect time.
type permit struct {
	host  string
	port  uint16
	entry Entry
	addrs []netip.Addr
	// narrow: the caller's scope lists hosts, so the fix is a literal
	// entry rather than an internal host.
	narrow bool
	// wording is the guard's, for the fix of a connect-time refusal.
	wording Wording
}

type permitKey struct{}

func withPermit(ctx context.Context, d *Decision) context.Context {
	return context.WithValue(ctx, permitKey{}, d.permit())
}

// permit is what the allowed decision d lets the dialer reach.
func (d *Decision) permit() *permit {
	return &permit{host: d.Host, port: d.Port, entry: d.Entry, addrs: d.Addresses(), narrow: d.narrow}
}

// dialContext is the http.Transport's only way out. It never resolves a
// name the decision did not resolve: it dials the decided addresses, so an
// answer that changes between check and connect (DNS rebinding) is never
// used. A dial nobody prepared is decided from scratch.
func (g *Guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	hostText, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &Refusal{Code: CodeInvalid, Reason: ReasonBadHost, Message: fmt.Sprintf("Cannot dial %q.", address), Fix: "Give a full URL such as https://status.example.com/."}
	}
	pm, _ := ctx.Value(permitKey{}).(*permit)
	if pm == nil || pm.host != hostText || strconv.Itoa(int(pm.port)) != portText {
		d := g.Policy().DecideURL(ctx, g.resolver, &url.URL{Scheme: "http", Host: address}, address)
		if !d.Allowed {
			return nil, d.Refusal()
		}
		pm = &permit{host: d.Host, port: d.Port, entry: d.Entry, addrs: d.Addresses(), narrow: d.narrow}
	}
	withWording := *pm // the permit in ctx is shared; this copy is the dial's own
	withWording.wording = g.wording
	pm = &withWording
	var errs []error
	for _, a := range pm.addrs {
		conn, err := g.connect(ctx, network, netip.AddrPortFrom(a, pm.port), pm)
		if err == nil {
			return conn, nil
		}
		if _, refused := AsRefusal(err); refused || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// connect opens one connection, checking the exact IP:port in the socket's
// Control hook, after the address is bound but before connect(2).
func (g *Guard) connect(ctx context.Context, network string, ap netip.AddrPort, pm *permit) (net.Conn, error) {
	if g.dial != nil {
		if err := checkConnect(pm, ap.String()); err != nil {
			return nil, err
		}
		return g.dial(ctx, network, ap.String())
	}
	d := net.Dialer{
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			return checkConnect(pm, address)
		},
	}
	return d.DialContext(ctx, network, ap.String())
}

// checkConnect is the last line: the address the socket is about to
// connect to must be one the decision checked, on the decided port, and
// either public or unlocked by the decision's entry. It closes anything
// the pre-check missed.
func checkConnect(pm *permit, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return connectRefusal(pm, address, "is not an address the guard can check")
	}
	a, c := classifyDialed(ap.Addr())
	if ap.Port() != pm.port || !slices.Contains(pm.addrs, a) {
		return connectRefusal(pm, address, "was not among the addresses checked for "+pm.host)
	}
	if !c.Public() && !unlocks(pm.entry, c.Kind, a) {
		r := connectRefusal(pm, address, "is in the "+c.Range)
		r.Range = c.Range
		return r
	}
	return nil
}

func connectRefusal(pm *permit, address, why string) *Refusal {
	h := host{name: pm.host}
	if ip, err := netip.ParseAddr(pm.host); err == nil {
		h = host{ip: ip}
	}
	e := suggestEntry(h, pm.port)
	fix, remedy := literalFix(pm.wording, e, pm.narrow)
	return &Refusal{
		Code:      CodeForbidden,
		Reason:    ReasonConnectCheck,
		Message:   fmt.Sprintf("The connection to %s was stopped: %s %s.", pm.host, address, why),
		Fix:       fix,
		Remedy:    remedy,
		Host:      pm.host,
		Port:      pm.port,
		Entry:     pm.entry.String(),
		Addresses: pm.addrs,
	}
}
