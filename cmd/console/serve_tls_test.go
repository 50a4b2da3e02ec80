package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfSignedFiles writes a certificate for 127.0.0.1 and its key as PEM
// files and returns their paths and the certificate.
func selfSignedFiles(t *testing.T) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "console test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestServeTLS: with --tls-cert and --tls-key serve answers HTTPS with
// that certificate, prints an https setup link, and its cookies are
// Secure with __Host- names.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, cert := selfSignedFiles(t)
	base, stderr := startServeCommand(t, "--db", tempDB(t), "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(base, "https://127.0.0.1:") {
		t.Fatalf("console on %q, want https://127.0.0.1:PORT", base)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(base + "/login")
	if err != nil {
		t.Fatalf("GET over TLS: %v; stderr:\n%s", err, stderr)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET /login over TLS: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	cookies := resp.Cookies()
	if len(cookies) == 0 {
		t.Fatal("no cookie on the sign-in page")
	}
	for _, c := range cookies {
		if !strings.HasPrefix(c.Name, "__Host-") || !c.Secure {
			t.Errorf("cookie over TLS: %+v, want __Host- and Secure", c)
		}
	}
	waitForLine(t, stderr, "/setup?token=")
	if !regexp.MustCompile(`https://127\.0\.0\.1:\d+/setup\?token=`).MatchString(stderr.String()) {
		t.Errorf("no https setup link: %s", stderr)
	}
	// Plain HTTP gets Go's 400 "sent an HTTP request to an HTTPS server",
	// never the console.
	if plain, err := http.Get("http" + strings.TrimPrefix(base, "https") + "/login"); err == nil {
		plain.Body.Close()
		if plain.StatusCode != http.StatusBadRequest || len(plain.Cookies()) != 0 {
			t.Errorf("plain HTTP on the TLS port: %d, cookies %v", plain.StatusCode, plain.Cookies())
		}
	}
}

// TestServeTLSFlagErrors: a missing, unreadable or mismatched pair is a
// usage error naming the flag, given before anything is created.
func TestServeTLSFlagErrors(t *testing.T) {
	certFile, keyFile, _ := selfSignedFiles(t)
	_, otherKey, _ := selfSignedFiles(t)
	missing := filepath.Join(t.TempDir(), "nope.pem")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"cert alone", []string{"--tls-cert", certFile}, []string{"--tls-cert and --tls-key go together"}},
		{"key alone", []string{"--tls-key", keyFile}, []string{"--tls-cert and --tls-key go together"}},
		{"missing cert", []string{"--tls-cert", missing, "--tls-key", keyFile}, []string{"--tls-cert " + missing, "cannot be read"}},
		{"missing key", []string{"--tls-cert", certFile, "--tls-key", missing}, []string{"--tls-key " + missing, "cannot be read"}},
		{"swapped", []string{"--tls-cert", keyFile, "--tls-key", certFile}, []string{"are not a PEM certificate and its private key"}},
		{"mismatched", []string{"--tls-cert", certFile, "--tls-key", otherKey}, []string{"--tls-key " + otherKey, "is not the private key of the certificate"}},
		{"public URL with a path", []string{"--public-url", "https://console.example.com/admin"}, []string{"--public-url", "without a path"}},
		{"public URL without scheme", []string{"--public-url", "console.example.com"}, []string{"--public-url", "not an absolute http:// or https://"}},
		{"public URL ftp", []string{"--public-url", "ftp://console.example.com"}, []string{"not an absolute http:// or https://"}},
		{"bad trusted proxy", []string{"--trusted-proxy", "10.0.0.0/99"}, []string{"--trusted-proxy", "not an IP address or CIDR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tempDB(t)
			r := runCLI(t, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, tt.args...)...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, r.stderr)
				}
			}
			assertMissing(t, db)
		})
	}
}

// TestServePublicURL: behind a TLS proxy, serve prints the public URL
// as its address and setup link, and answers to the public URL's host.
func TestServePublicURL(t *testing.T) {
	base, stderr := startServeCommand(t, "--db", tempDB(t), "--addr", "127.0.0.1:0", "--public-url", "https://Console.Example.com/")
	if base != "https://console.example.com" {
		t.Fatalf("console on %q, want the public URL", base)
	}
	if !waitForLine(t, stderr, "https://console.example.com/setup?token=") {
		t.Fatalf("the setup link is not on the public URL: %s", stderr)
	}
}
