package tools

import (
	"net"
)

// RefusingProxy is a proxy that refuses every request at once. Chromium is
// launched with it as its browser-level proxy, so the requests Chromium
// makes on its own (updates, safe browsing, sign-in) go nowhere and never
// show up as if a page had made them; each screenshot's context has the
// guard's proxy instead.
type RefusingProxy struct{ ln net.Listener }

const refusal = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 58\r\nConnection: close\r\n\r\nOutbound: the browser's own background traffic is refused\n"

// StartRefusingProxy listens on an ephemeral loopback port.
func StartRefusingProxy() (*RefusingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &RefusingProxy{ln: ln}
	go p.serve()
	return p, nil
}

func (p *RefusingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 4096)
			_, _ = c.Read(buf) // the request line and headers; the answer is the same whatever they say
			_, _ = c.Write([]byte(refusal))
		}()
	}
}

// URL is the proxy's address for a browser's proxy setting.
func (p *RefusingProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops it.
func (p *RefusingProxy) Close() error { return p.ln.Close() }
