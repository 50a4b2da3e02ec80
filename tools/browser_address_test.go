package tools

import (
	"testing"

	"github.com/outboundhq/outbound/guard"
)

func TestBrowserAddress(t *testing.T) {
	ok := map[string]string{
		"https://example.com/pricing": "https://example.com/pricing",
		"example.com/pricing":         "https://example.com/pricing",
		"localhost:3000":              "http://localhost:3000",
		"localhost:3000/x":            "http://localhost:3000/x",
		"127.0.0.1:8080/health":       "http://127.0.0.1:8080/health",
		"[::1]:8080":                  "http://[::1]:8080",
		"app.localhost":               "http://app.localhost",
		"HTTP://Example.com":          "HTTP://Example.com",
		"status.example.com:8443":     "https://status.example.com:8443",
	}
	for in, want := range ok {
		if got, r := browserAddress(in); r != nil || got != want {
			t.Errorf("browserAddress(%q) = %q, %+v; want %q", in, got, r, want)
		}
	}
	bad := map[string]guard.Reason{
		"":                              guard.ReasonBadURL,
		"file:///etc/passwd":            guard.ReasonScheme,
		"javascript:alert(1)":           guard.ReasonScheme,
		"data:text/html,hi":             guard.ReasonScheme,
		"chrome://settings":             guard.ReasonScheme,
		"/etc/passwd":                   guard.ReasonScheme,
		"./index.html":                  guard.ReasonScheme,
		"~/notes":                       guard.ReasonScheme,
		"https://user:pw@example.com/":  guard.ReasonCredentials,
		"user:pw@example.com":           guard.ReasonScheme, // read as the scheme user:, refused all the same
		"https://exa mple.com":          guard.ReasonBadURL,
		"mailto:someone@example.com":    guard.ReasonScheme,
		"ftp://files.example.com/a.txt": guard.ReasonScheme,
	}
	for in, want := range bad {
		if got, r := browserAddress(in); r == nil || r.Reason != want || r.Fix == "" {
			t.Errorf("browserAddress(%q) = %q, %+v; want a %s refusal", in, got, r, want)
		}
	}
}

func TestSiteOf(t *testing.T) {
	same := [][2]string{
		{"a.example.co.uk", "b.example.co.uk"},
		{"shop.example.com", "help.example.com"},
		{"example.com", "WWW.Example.com."},
	}
	for _, p := range same {
		if siteOf(p[0]) != siteOf(p[1]) {
			t.Errorf("%s (%s) and %s (%s) are one site", p[0], siteOf(p[0]), p[1], siteOf(p[1]))
		}
	}
	other := [][2]string{
		{"x.github.io", "y.github.io"},
		{"example.com", "example.net"},
		{"localhost", "127.0.0.1"},
		{"127.0.0.1", "127.0.0.2"},
		{"example.co.uk", "other.co.uk"},
		{"intranet", "localhost"},
	}
	for _, p := range other {
		if siteOf(p[0]) == siteOf(p[1]) {
			t.Errorf("%s and %s are two sites, both %s", p[0], p[1], siteOf(p[0]))
		}
	}
	for host, want := range map[string]string{"a.b.example.co.uk": "example.co.uk", "x.github.io": "x.github.io", "github.io": "github.io",
		"::1": "::1", "[::1]": "::1", "10.0.0.1": "10.0.0.1", "localhost": "localhost", "app.localhost": "localhost"} {
		if got := siteOf(host); got != want {
			t.Errorf("siteOf(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]int{"e12": 12, "[e3]": 3, " E7 ": 7} {
		if n, ok := parseRef(in); !ok || n != want {
			t.Errorf("parseRef(%q) = %d, %v", in, n, ok)
		}
	}
	for _, in := range []string{"", "e", "12", "e0", "e-1", "e+1", "x12", "e1.5"} {
		if _, ok := parseRef(in); ok {
			t.Errorf("parseRef(%q) passed", in)
		}
	}
}

func TestFindLines(t *testing.T) {
	text := "Intro\nPrice: EUR 9\nOutro\n\nMore\nprice list [e4 link \"Prices\" → /p]"
	got, n := findLines(text, "PRICE", 1000)
	if n != 2 || got != "  Intro\n> Price: EUR 9\n  Outro\n…\n> price list [e4 link \"Prices\" → /p]\n  More\n" && got != "  Intro\n> Price: EUR 9\n  Outro\n…\n  More\n> price list [e4 link \"Prices\" → /p]\n" {
		t.Fatalf("findLines: %d\n%s", n, got)
	}
	if _, n := findLines(text, "absent", 1000); n != 0 {
		t.Fatal("found what is not there")
	}
}
