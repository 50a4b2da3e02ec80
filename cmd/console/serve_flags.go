package main

// The flags that say how console serve meets the network: --public,
// --tls-cert/--tls-key, --public-url and --trusted-proxy. They are process
// configuration like --addr, not settings in the database: they decide
// what the process listens on before any database is read.

import (
	"crypto/tls"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// serveConfig is how serve meets the network.
type serveConfig struct {
	public    bool             // --addr may be beyond loopback
	cert      *tls.Certificate // serve HTTPS with it; nil for plain HTTP
	publicURL *url.URL         // where people open the console; nil when not given
	trusted   []netip.Prefix   // peers whose X-Forwarded-For/-Proto count
}

// loadServeCert reads --tls-cert and --tls-key: both or neither, each
// readable, and the key the certificate's own.
func loadServeCert(certFile, keyFile string) (*tls.Certificate, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, usagef("--tls-cert and --tls-key go together: give both (the PEM certificate chain and its private key) or neither")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, usagef("--tls-cert %s cannot be read (%v); give the path of the PEM certificate file", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, usagef("--tls-key %s cannot be read (%v); give the path of the PEM private key file", keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return nil, usagef("--tls-key %s is not the private key of the certificate in --tls-cert %s; give the key the certificate was issued for", keyFile, certFile)
		}
		return nil, usagef("--tls-cert %s and --tls-key %s are not a PEM certificate and its private key (%v)", certFile, keyFile, err)
	}
	return &cert, nil
}

// parsePublicURL checks --public-url: an absolute http or https URL with
// a host and nothing after it.
func parsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	const example = "for example --public-url https://console.example.com"
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, usagef("--public-url %q is not a URL (%v); %s", s, err, example)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, usagef("--public-url %q is not an absolute http:// or https:// address; %s", s, example)
	case u.User != nil, u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return nil, usagef("--public-url %q has more than a scheme and a host: give only the address the console is opened at, without a path, query or user; %s", s, example)
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

// prefixList is the repeatable --trusted-proxy: a CIDR or a single IP.
type prefixList []netip.Prefix

func (p *prefixList) String() string { return "" }

func (p *prefixList) Set(s string) error {
	if ip, err := netip.ParseAddr(s); err == nil {
		*p = append(*p, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
		return nil
	}
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		return usagef("--trusted-proxy %q is not an IP address or CIDR range, such as 127.0.0.1 or 10.0.0.0/24", s)
	}
	*p = append(*p, pfx.Masked())
	return nil
}

// consoleURL is the address to print for the console on l: --public-url
// when given, else the bound address, with a loopback one in place of an
// unspecified 0.0.0.0 or [::], which no browser can open.
func consoleURL(l net.Addr, tlsOn bool, public *url.URL) string {
	if public != nil {
		return public.String()
	}
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	host := l.String()
	if ap, err := netip.ParseAddrPort(host); err == nil && ap.Addr().IsUnspecified() {
		host = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port()).String()
	}
	return scheme + "://" + host
}
