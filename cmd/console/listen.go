package main

import (
	"net"
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
	return l, nil
}
