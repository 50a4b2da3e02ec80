package extract

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract feeds arbitrary bodies and content types: Extract must never
// panic, must only refuse with *UnsupportedError, and must only ever hand
// the agent valid UTF-8 and followable links.
func FuzzExtract(f *testing.F) {
	seeds := []struct{ body, contentType string }{
		{"<html><head><title>t</title></head><body><h1>x</h1><ul><li>a</li></ul></body></html>", "text/html"},
		{"<table><tr><td><pre>a\n b</pre></td></tr></table><a href='/x'>y</a>", "text/html; charset=shift_jis"},
		{"<meta charset=windows-1252><p>caf\xe9</p>", ""},
		{"<blockquote><ol><li><p>a<br>b</p></li></ol></blockquote><code></code><a href=''><h2></h2></a>", "application/xhtml+xml"},
		{"{\"a\": [1, 2, {\"b\": null}]}", "application/json"},
		{"{\"a\": \xff", "application/problem+json; charset=utf-8"},
		{"a,b\n1,2\n", "text/csv"},
		{"\xfe\xff\x00h\x00i", "text/plain"},
		{"%PDF-1.4", ""},
		{"<x>\xe9</x>", "text/xml; charset=iso-8859-1"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.contentType)
	}
	base, err := url.Parse("https://example.com/dir/page?q=1")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		page, err := Extract(body, contentType, base)
		if err != nil {
			var unsupported *UnsupportedError
			if !errors.As(err, &unsupported) {
				t.Fatalf("Extract error %v is not an *UnsupportedError", err)
			}
			return
		}
		if !utf8.ValidString(page.Title) || !utf8.ValidString(page.Text) {
			t.Fatalf("invalid UTF-8: title %q text %q", page.Title, page.Text)
		}
		if len(page.Links) > MaxLinks {
			t.Fatalf("%d links, want at most %d", len(page.Links), MaxLinks)
		}
		for _, l := range page.Links {
			if !utf8.ValidString(l.Text) || !utf8.ValidString(l.URL) || l.Text == "" {
				t.Fatalf("bad link text %q", l.Text)
			}
			if !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://") && !strings.HasPrefix(l.URL, "mailto:") {
				t.Fatalf("link %q is not http, https or mailto", l.URL)
			}
		}
	})
}
