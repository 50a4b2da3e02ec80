package guard

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// clientHelloRecord returns the first TLS record crypto/tls sends for
// serverName ("" sends none).
func clientHelloRecord(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: true}).Handshake()
	_ = b.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, 5)
	if _, err := io.ReadFull(b, head); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(head[3])<<8|int(head[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(head, body...)
}

func TestTunnelFirstReadsTheClientHelloSNI(t *testing.T) {
	rec := clientHelloRecord(t, "www.example.com")
	f := tunnelFirst{bytes: rec}
	if done, err := f.parse(); !done || err != nil || f.name != "www.example.com" || f.proto != "TLS" {
		t.Fatalf("parse = %v %v %+v", done, err, f)
	}
	// Every prefix asks for more bytes rather than failing or guessing.
	for i := 1; i < len(rec); i++ {
		f := tunnelFirst{bytes: rec[:i]}
		if done, err := f.parse(); done || err != nil {
			t.Fatalf("prefix %d: done %v err %v", i, done, err)
		}
	}
	// The same hello split across two records.
	body := rec[5:]
	split := append([]byte{0x16, 3, 1, 0, 10}, body[:10]...)
	split = append(split, 0x16, 3, 1, byte((len(body)-10)>>8), byte(len(body)-10))
	split = append(split, body[10:]...)
	f = tunnelFirst{bytes: split}
	if done, err := f.parse(); !done || err != nil || f.name != "www.example.com" {
		t.Fatalf("split parse = %v %v %+v", done, err, f)
	}
	// No server_name.
	f = tunnelFirst{bytes: clientHelloRecord(t, "")}
	if done, err := f.parse(); !done || !errors.Is(err, errNoName) {
		t.Fatalf("hello without SNI: %v %v %+v", done, err, f)
	}
}

func TestTunnelFirstReadsTheHTTPHost(t *testing.T) {
	for head, want := range map[string]string{
		"GET / HTTP/1.1\r\nHost: a.example:443\r\n\r\n":                      "a.example",
		"GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n":          "a.example",
		"GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n":          "",
		"GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n":       "",
		"GET / HTTP/1.0\r\n\r\n":                                             "",
		"GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\nX: y\r\n\r\nbody after": "2001:db8::1",
	} {
		f := tunnelFirst{bytes: []byte(head)}
		done, err := f.parse()
		if !done || (want == "") != (err != nil) || f.name != want && want != "" {
			t.Errorf("%q: done %v err %v name %q, want %q", head, done, err, f.name, want)
		}
	}
	f := tunnelFirst{bytes: []byte("GET / HTTP/1.1\r\nHost: a.exa")}
	if done, err := f.parse(); done || err != nil {
		t.Fatalf("incomplete head: %v %v", done, err)
	}
}

func FuzzParseClientHelloSNI(f *testing.F) {
	for _, name := range []string{"www.example.com", ""} {
		rec := clientHelloRecord(f, name)
		f.Add(rec[9:])
	}
	f.Add([]byte{})
	f.Add([]byte{3, 3})
	f.Fuzz(func(t *testing.T, hello []byte) {
		name, err := parseClientHelloSNI(hello)
		if err == nil && name == "" {
			t.Fatal("no error and no name")
		}
		ft := tunnelFirst{bytes: hello}
		_, _ = ft.parse()
	})
}
