package main

import (
	"net"
	"net/netip"
	"strconv"
)

// checkListenAddr checks that addr, the value of --addr, is HOST:PORT with
// a usable port, before the command opens anything; example is the
// command's default, shown as the form to follow.
func checkListenAddr(addr, example string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q is not HOST:PORT (%v); for example --addr %s", addr, err, example)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return usagef("--addr %q has no valid port; give a number from 1 to 65535 (0 picks a free one), for example --addr %s", addr, example)
	}
	return nil
}

// listen opens --addr. Its usual failure, a port already in use, is the
// caller's to fix with another --addr, so it is a usage error (exit 2)
// for every command that listens.
func listen(addr, example string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("cannot listen on %s (%v); choose a free address with --addr, for example --addr %s", addr, err, example)
	}
	host, _, _ := net.SplitHostPort(addr)
	return flagListener{Listener: l, host: host}, nil
}

// flagListener is a listener that remembers the host --addr named: a
// name (myhost.lan:8080) is bound as its address, yet is what people type
// to reach the console, so the console answers to it too.
type flagListener struct {
	net.Listener
	host string
}

// listenHosts is the name --addr gave l, on the port l is bound to, as
// an extra Host the console answers to; none for a listener opened
// otherwise, or an IP (the bound address already covers it).
func listenHosts(l net.Listener) []string {
	fl, ok := l.(flagListener)
	if !ok || fl.host == "" {
		return nil
	}
	if _, err := netip.ParseAddr(fl.host); err == nil {
		return nil
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return []string{net.JoinHostPort(fl.host, port)}
}

// checkPublicAddr checks --addr like checkListenAddr, and refuses one
// beyond loopback unless --public says that is meant: exposure says what
// the network would then reach, advice how to expose it well. console
// proxy and console serve share it.
func checkPublicAddr(addr, example string, public bool, exposure, advice string) error {
	if err := checkListenAddr(addr, example); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	if public || isLoopbackHost(host) {
		return nil
	}
	return usagef("--addr %s is not a loopback address, so %s; listen on %s, or add --public if that is what you want%s", addr, exposure, example, advice)
}

// isLoopbackHost says whether host, the host of --addr, is this machine only.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
