package extract

import (
	"errors"
	"strings"
	"testing"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		contentType string
		want        Kind
		unsupported bool
	}{
		{"text/html", HTML, false},
		{"text/html; charset=iso-8859-1", HTML, false},
		{"TEXT/HTML;charset=UTF-8", HTML, false},
		{"text/html; charset", HTML, false}, // malformed parameter: the type still counts
		{"application/xhtml+xml", XHTML, false},
		{"text/plain; charset=utf-8", PlainText, false},
		{"text/markdown", Markdown, false},
		{"text/x-markdown", Markdown, false},
		{"text/csv", CSV, false},
		{"application/json", JSON, false},
		{"application/problem+json", JSON, false},
		{"application/xml", XML, false},
		{"text/xml", XML, false},
		{"application/rss+xml", XML, false},
		{"", SniffBody, false},
		{"  ", SniffBody, false},
		{"application/pdf", Binary, true},
		{"image/png", Binary, true},
		{"image/svg+xml", Binary, true},
		{"audio/mpeg", Binary, true},
		{"video/mp4", Binary, true},
		{"application/octet-stream", Binary, true},
		{"application/zip", Binary, true},
		{"application/x-unknown-thing", Binary, true},
		{"text/javascript", Binary, true},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			got, err := KindOf(tt.contentType)
			if got != tt.want {
				t.Errorf("KindOf(%q) = %v, want %v", tt.contentType, got, tt.want)
			}
			var unsupported *UnsupportedError
			if tt.unsupported != errors.As(err, &unsupported) {
				t.Fatalf("KindOf(%q) error = %v, want unsupported: %v", tt.contentType, err, tt.unsupported)
			}
			if !tt.unsupported {
				return
			}
			media := mediaType(tt.contentType)
			if unsupported.ContentType != media {
				t.Errorf("UnsupportedError.ContentType = %q, want %q", unsupported.ContentType, media)
			}
			for _, want := range []string{media, "only web pages and text"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Kind
	}{
		{"html", "<!DOCTYPE html><html><body>hi</body></html>", HTML},
		{"html fragment", "  <p>hello</p>", HTML},
		{"xml", `<?xml version="1.0"?><feed/>`, XML},
		{"plain text", "just some words", PlainText},
		{"json is text", `{"a": 1}`, PlainText},
		{"empty", "", PlainText},
		{"pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", Binary},
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", Binary},
		{"zip", "PK\x03\x04\x14\x00\x00\x00", Binary},
		{"control bytes", "\x00\x01\x02\x03binary", Binary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sniff([]byte(tt.body)); got != tt.want {
				t.Errorf("Sniff(%q) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{HTML, "html"},
		{SniffBody, "sniff-body"},
		{Binary, "binary"},
		{Kind(99), "Kind(99)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.kind.String(); got != tt.want {
				t.Errorf("Kind(%d).String() = %q, want %q", int(tt.kind), got, tt.want)
			}
		})
	}
}
