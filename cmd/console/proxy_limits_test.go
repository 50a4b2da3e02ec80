package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/web"
)

// TestProxyServerLimits: the standalone proxy's server cuts a trickled
// request body at its read timeout, yet a CONNECT tunnel (a hijacked
// connection) outlives both its read and write timeouts.
func TestProxyServerLimits(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			io.Copy(io.Discard, r.Body)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		io.Copy(conn, buf) // echo the tunnel's bytes
	})
	short := 300 * time.Millisecond
	srv := proxyServer(h, web.Timeouts{ReadHeader: time.Second, Read: short, Write: short, Idle: time.Second, MaxHeaderBytes: 8 << 10})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	t.Run("trickled body", func(t *testing.T) {
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST http://example.com/ HTTP/1.1\r\nHost: example.com\r\nContent-Length: 1000\r\n\r\n")
		start := time.Now()
		for time.Since(start) < 5*time.Second {
			if _, err := conn.Write([]byte("a")); err != nil {
				break
			}
			conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if n, err := conn.Read(make([]byte, 512)); n > 0 || err != nil && !isNetTimeout(err) {
				break
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("a trickled body kept the connection for %v; the read timeout is %v", d, short)
		}
	})

	t.Run("tunnel", func(t *testing.T) {
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT allowed.example:443 HTTP/1.1\r\nHost: allowed.example:443\r\n\r\n")
		r := bufio.NewReader(conn)
		if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, "200") {
			t.Fatalf("CONNECT: %q %v", line, err)
		}
		r.ReadString('\n')
		time.Sleep(3 * short) // past both timeouts
		conn.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.WriteString(conn, "ping\n"); err != nil {
			t.Fatalf("the tunnel was closed: %v", err)
		}
		if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
			t.Fatalf("the tunnel did not carry data past the timeouts: %q %v", line, err)
		}
	})
}

func isNetTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
