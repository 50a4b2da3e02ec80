package guard

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// A CONNECT is decided on the host it names, but the bytes inside the
// tunnel name a host again: the TLS ClientHello's server_name, or the Host
// of a plain HTTP request. One address (a CDN's) serves many hosts, so
// without this check an allowed CONNECT would reach every host on it. The
// proxy therefore reads the client's first bytes, finds the name they go
// to, and relays them unchanged only when that name is the decided host.
//
// What is not seen: a TLS client's inner ClientHello under Encrypted
// Client Hello (only the outer server_name is checked), the Host of HTTP
// requests after the first one on a plain-HTTP tunnel, and the Host or
// :authority inside TLS (domain fronting). Tunnels carry TLS and HTTP
// only: a protocol where the server speaks first, or any other first
// bytes, is refused.

// maxTunnelPeek bounds what is read before the name is known: a TLS
// record's largest plaintext (16 KiB) and its header, or an HTTP request
// head of the same size.
const maxTunnelPeek = 5 + 16<<10

// errNoName is a first message that could be read but names no host: a
// ClientHello without server_name, an HTTP/1.0 request without Host.
var errNoName = errors.New("names no host")

// tunnelFirst is what the client sent first: the bytes read (to be relayed
// unchanged), what they are, and the host they name.
type tunnelFirst struct {
	bytes []byte
	proto string // "TLS" or "HTTP", "" when neither
	name  string // the host named; "" with errNoName
}

// readTunnelFirst reads early (bytes already buffered) and then from c,
// within wait, until the first TLS ClientHello or HTTP request head is
// complete, and returns it with the name it carries. An error other than
// errNoName with no bytes read means the client sent nothing.
func readTunnelFirst(c net.Conn, early []byte, wait time.Duration) (tunnelFirst, error) {
	f := tunnelFirst{bytes: append([]byte(nil), early...)}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	for {
		done, err := f.parse()
		if done || err != nil {
			return f, err
		}
		if len(f.bytes) >= maxTunnelPeek {
			return f, errors.New("the first message is larger than 16 KiB")
		}
		n, rerr := c.Read(buf[:min(len(buf), maxTunnelPeek-len(f.bytes))])
		f.bytes = append(f.bytes, buf[:n]...)
		if rerr != nil && n == 0 {
			if len(f.bytes) == 0 {
				return f, rerr
			}
			return f, errors.New("the client stopped before its first message was complete")
		}
	}
}

// parse reports whether f.bytes hold a complete first message, and fills
// f.proto and f.name when they do.
func (f *tunnelFirst) parse() (bool, error) {
	b := f.bytes
	if len(b) == 0 {
		return false, nil
	}
	if b[0] == 0x16 {
		f.proto = "TLS"
		hello, err := clientHelloBody(b)
		if err != nil || hello == nil {
			return false, err
		}
		name, err := parseClientHelloSNI(hello)
		f.name = name
		return true, err
	}
	if !looksLikeHTTP(b) {
		return false, errors.New("the first bytes are neither a TLS ClientHello nor an HTTP request")
	}
	f.proto = "HTTP"
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return false, nil
	}
	name, err := httpRequestHost(b[:end+4])
	f.name = name
	return true, err
}

// clientHelloBody gathers the handshake bytes of the TLS records in b and
// returns the ClientHello message's body once it is complete (nil when
// more bytes are needed). A ClientHello may span records; the total is
// bounded by maxTunnelPeek.
func clientHelloBody(b []byte) ([]byte, error) {
	var hs []byte
	for len(b) > 0 {
		if len(b) < 5 {
			return nil, nil
		}
		if b[0] != 0x16 || b[1] != 3 {
			return nil, errors.New("a TLS record that is not a handshake record")
		}
		n := int(b[3])<<8 | int(b[4])
		if n == 0 || n > 16<<10 {
			return nil, errors.New("a TLS record of an invalid length")
		}
		if len(b) < 5+n {
			return nil, nil
		}
		hs = append(hs, b[5:5+n]...)
		b = b[5+n:]
		if len(hs) >= 4 {
			if hs[0] != 1 {
				return nil, errors.New("a TLS handshake that does not start with a ClientHello")
			}
			size := int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])
			if size > maxTunnelPeek {
				return nil, errors.New("a ClientHello larger than 16 KiB")
			}
			if len(hs) >= 4+size {
				if len(hs) > 4+size {
					// No handshake message follows a ClientHello before
					// the server answers. (Records after it, such as
					// 0-RTT data, are relayed unread.)
					return nil, errors.New("handshake bytes after the ClientHello")
				}
				return hs[4 : 4+size], nil
			}
		}
	}
	return nil, nil
}

// parseClientHelloSNI returns the host_name of the server_name extension
// of a TLS ClientHello body (the handshake message without its 4-byte
// header), or errNoName when it has none. Every length is checked against
// what remains; a duplicated extension or name is an error, since a
// server might honour either.
func parseClientHelloSNI(hello []byte) (string, error) {
	r := reader(hello)
	if !r.skip(2+32) || !r.skipVec(1) || !r.skipVec(2) || !r.skipVec(1) {
		return "", errors.New("a truncated ClientHello")
	}
	if len(r) == 0 {
		return "", errNoName // no extensions at all
	}
	exts, ok := r.vec(2)
	if !ok || len(r) != 0 {
		return "", errors.New("a ClientHello with malformed extensions")
	}
	var name string
	seen := map[uint16]bool{}
	for len(exts) > 0 {
		typ, ok1 := exts.u16()
		data, ok2 := exts.vec(2)
		if !ok1 || !ok2 {
			return "", errors.New("a ClientHello with a truncated extension")
		}
		if seen[typ] {
			return "", errors.New("a ClientHello that repeats an extension")
		}
		seen[typ] = true
		if typ != 0 { // server_name
			continue
		}
		list, ok := data.vec(2)
		if !ok || len(data) != 0 || len(list) == 0 {
			return "", errors.New("a malformed server_name extension")
		}
		for len(list) > 0 {
			kind, ok1 := list.u8()
			n, ok2 := list.vec(2)
			if !ok1 || !ok2 {
				return "", errors.New("a malformed server_name extension")
			}
			if kind != 0 {
				continue
			}
			if name != "" || len(n) == 0 {
				return "", errors.New("a server_name extension with more than one or an empty host name")
			}
			name = string(n)
		}
	}
	if name == "" {
		return "", errNoName
	}
	return name, nil
}

// reader walks a byte string, each step checked against what remains.
type reader []byte

func (r *reader) skip(n int) bool {
	if len(*r) < n {
		return false
	}
	*r = (*r)[n:]
	return true
}

func (r *reader) u8() (byte, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := (*r)[0]
	*r = (*r)[1:]
	return v, true
}

func (r *reader) u16() (uint16, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := uint16((*r)[0])<<8 | uint16((*r)[1])
	*r = (*r)[2:]
	return v, true
}

// vec reads a vector with a 1- or 2-byte length prefix.
func (r *reader) vec(prefix int) (reader, bool) {
	var n int
	switch prefix {
	case 1:
		v, ok := r.u8()
		if !ok {
			return nil, false
		}
		n = int(v)
	default:
		v, ok := r.u16()
		if !ok {
			return nil, false
		}
		n = int(v)
	}
	if len(*r) < n {
		return nil, false
	}
	v := (*r)[:n]
	*r = (*r)[n:]
	return v, true
}

func (r *reader) skipVec(prefix int) bool {
	_, ok := r.vec(prefix)
	return ok
}

// looksLikeHTTP reports whether b can still be the start of an HTTP/1
// request line: a method token of capital letters and a space.
func looksLikeHTTP(b []byte) bool {
	for i, c := range b {
		switch {
		case c == ' ' && i > 0:
			return true
		case c < 'A' || c > 'Z' || i >= 16:
			return false
		}
	}
	return true
}

// httpRequestHost returns the host an HTTP request head goes to. Every
// Host header and an absolute-form target must agree, since a server
// might honour any of them.
func httpRequestHost(head []byte) (string, error) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return "", errors.New("a malformed HTTP request (" + err.Error() + ")")
	}
	// ReadRequest keeps only one Host; the raw head keeps them all.
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return "", errors.New("a malformed HTTP request line")
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		return "", errors.New("a malformed HTTP request (" + err.Error() + ")")
	}
	hosts := mh.Values("Host")
	if req.URL.Host != "" {
		hosts = append(hosts, req.URL.Host)
	}
	if req.Host != "" {
		hosts = append(hosts, req.Host)
	}
	var name string
	for _, h := range hosts {
		h = hostOnly(h)
		if name != "" && !sameHostName(name, h) {
			return "", errors.New("an HTTP request naming two hosts")
		}
		name = h
	}
	if name == "" {
		return "", errNoName
	}
	return name, nil
}

// hostOnly is hostport without its port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// sameHostName compares two hosts as names (case and a trailing dot
// ignored) or as IP addresses.
func sameHostName(a, b string) bool {
	if x, err := netip.ParseAddr(a); err == nil {
		y, err := netip.ParseAddr(b)
		return err == nil && x.Unmap() == y.Unmap()
	}
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// tunnelNameRefusal checks the name the tunnel's first message carries
// against host, the decided CONNECT host, and returns the refusal when
// they differ. For a CONNECT to an IP literal, a message naming a host
// name is refused (that name was never decided; resolving it here would
// decide it against an address the client chose) and one naming no host
// passes, as IP-based TLS does; for a CONNECT to a name, a message naming
// no host is refused, since the server would pick a host for it.
func tunnelNameRefusal(f tunnelFirst, err error, host string, port uint16, raw string) *Refusal {
	ref := func(msg string) *Refusal {
		return &Refusal{Code: CodeForbidden, Reason: ReasonTunnelName, URL: raw, Host: host, Port: port,
			Message: msg, Fix: "CONNECT to the host you mean; each tunnel carries only the host it was opened to."}
	}
	literal := false
	if _, perr := netip.ParseAddr(host); perr == nil {
		literal = true
	}
	switch {
	case errors.Is(err, errNoName):
		if literal {
			return nil
		}
		return ref("The tunnel was opened to " + host + ", but its " + f.proto + " request names no host.")
	case err != nil:
		return ref("The tunnel to " + host + " carried bytes that could not be checked: " + err.Error() + ".")
	case !sameHostName(f.name, host):
		name := f.name
		if len(name) > 255 {
			name = name[:255]
		}
		return ref("The tunnel was opened to " + host + ", but its " + f.proto + " request names " + strconv.Quote(name) + ".")
	}
	return nil
}
