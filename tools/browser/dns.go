package browser

import "strings"

// BlockDNSArg returns a Chromium flag that makes every host name fail to
// resolve inside Chromium, except the given hosts (for example a proxy's
// host, or "127.0.0.1" for a test server).
//
// Why: Chromium makes background requests of its own (to Google update and
// account hosts) even with every --disable flag set. With no name resolving,
// they die before a packet leaves the machine. With an HTTP proxy set, names
// are resolved by the proxy, so pages still load through it.
func BlockDNSArg(allowHosts ...string) string {
	var b strings.Builder
	b.WriteString("--host-resolver-rules=MAP * ~NOTFOUND")
	for _, host := range allowHosts {
		b.WriteString(" , EXCLUDE ")
		b.WriteString(host)
	}
	return b.String()
}
