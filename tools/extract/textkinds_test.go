package extract

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

func TestExtractTextKinds(t *testing.T) {
	latin1 := mustEncode(t, charmap.ISO8859_1, "Café, naïve, Ærø")
	cp1252 := mustEncode(t, charmap.Windows1252, "price — 10 €")
	tests := []struct {
		name        string
		body        string
		contentType string
		want        string
	}{
		{"plain as is", "line one\n\n  indented line\t tab", "text/plain", "line one\n\n  indented line\t tab"},
		{"plain utf-8 bom dropped", "\xef\xbb\xbfhello", "text/plain", "hello"},
		{"plain latin-1 by header", latin1, "text/plain; charset=iso-8859-1", "Café, naïve, Ærø"},
		{"plain undeclared legacy bytes", cp1252, "text/plain", "price — 10 €"},
		{"markdown as is", "# Title\n\n- [a](http://x.example/)\n", "text/markdown; charset=utf-8", "# Title\n\n- [a](http://x.example/)\n"},
		{"csv as is", "name,qty\n\"a, b\",2\n", "text/csv", "name,qty\n\"a, b\",2\n"},
		{"json pretty", `{"a":1,"b":[true,null],"c":{"d":"é"}}`, "application/json",
			"{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ],\n  \"c\": {\n    \"d\": \"é\"\n  }\n}"},
		{"json with bom", "\xef\xbb\xbf[1,2]", "application/json", "[\n  1,\n  2\n]"},
		{"json invalid kept as is", `{"a":1,`, "application/json", `{"a":1,`},
		{"problem+json pretty", `{"title":"x"}`, "application/problem+json", "{\n  \"title\": \"x\"\n}"},
		{"xml as is", `<?xml version="1.0"?><a><b>x</b></a>`, "application/xml", `<?xml version="1.0"?><a><b>x</b></a>`},
		{"text/xml latin-1", "<a>" + latin1 + "</a>", "text/xml; charset=ISO-8859-1", "<a>Café, naïve, Ærø</a>"},
		{"sniffed plain text", "no content type here", "", "no content type here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := Extract([]byte(tt.body), tt.contentType, nil)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if page.Text != tt.want {
				t.Errorf("Text = %q, want %q", page.Text, tt.want)
			}
			if page.Title != "" || len(page.Links) != 0 {
				t.Errorf("text kinds have no title or links, got %q and %v", page.Title, page.Links)
			}
		})
	}
}

func TestExtractRefusesBinary(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		contentType string
		wantType    string
		sniffed     bool
	}{
		{"pdf by header", "%PDF-1.7", "application/pdf", "application/pdf", false},
		{"image by header", "\x89PNG\r\n\x1a\n", "image/png", "image/png", false},
		{"octet-stream by header, even if it looks like text", "hello", "application/octet-stream", "application/octet-stream", false},
		{"pdf sniffed", "%PDF-1.7\n", "", "application/pdf", true},
		{"binary sniffed", "\x00\x01\x02\x03\x04", "", "application/octet-stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract([]byte(tt.body), tt.contentType, nil)
			var unsupported *UnsupportedError
			if !errors.As(err, &unsupported) {
				t.Fatalf("Extract error = %v, want *UnsupportedError", err)
			}
			if unsupported.ContentType != tt.wantType || unsupported.Sniffed != tt.sniffed {
				t.Errorf("UnsupportedError = %+v, want type %q sniffed %v", unsupported, tt.wantType, tt.sniffed)
			}
			if tt.sniffed && !strings.Contains(err.Error(), "detected from the body") {
				t.Errorf("error %q does not say the type was detected from the body", err)
			}
		})
	}
}

func TestExtractTextAlwaysValidUTF8(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		contentType string
	}{
		{"lying utf-8 label", "ok \xff\xfe bad", "text/plain; charset=utf-8"},
		{"unknown charset label", "caf\xe9", "text/plain; charset=no-such-charset"},
		{"json with invalid bytes", "{\"a\":\"\xff\"}", "application/json"},
		{"utf-16 with bom", "\xff\xfeh\x00i\x00", "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := Extract([]byte(tt.body), tt.contentType, nil)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if !utf8.ValidString(page.Text) || page.Text == "" {
				t.Errorf("Text = %q, want non-empty valid UTF-8", page.Text)
			}
		})
	}
}

// mustEncode returns s in enc, as a legacy server would send it.
func mustEncode(t *testing.T, enc encoding.Encoding, s string) string {
	t.Helper()
	encoded, err := enc.NewEncoder().String(s)
	if err != nil {
		t.Fatalf("encoding %q: %v", s, err)
	}
	return encoded
}
