package extract

import (
	"bytes"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// decodeHTML reads an HTML body as UTF-8 following the HTML encoding
// sniffing rules: byte order mark, then the Content-Type charset, then a
// <meta> charset in the first 1024 bytes, then a guess.
func decodeHTML(body []byte, contentType string) io.Reader {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" && !bytes.HasPrefix(body, utf8BOM) && utf8.Valid(body) {
		// Most pages: nothing to convert, and no copy of the body.
		return bytes.NewReader(body)
	}
	return strings.NewReader(decodeWith(enc, body))
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decodeText converts a text body (plain, Markdown, CSV, JSON, XML) to
// UTF-8. Unlike HTML, text has no <meta> to consult, so the order is: byte
// order mark, Content-Type charset, valid UTF-8 as is, else windows-1252
// (what browsers assume for legacy text, and a total mapping, so the result
// is always valid UTF-8).
func decodeText(body []byte, contentType string) string {
	if enc := bomEncoding(body); enc != nil {
		return decodeWith(enc, body)
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		if enc, _ := charset.Lookup(params["charset"]); enc != nil {
			return decodeWith(enc, body)
		}
	}
	if utf8.Valid(body) {
		return string(body)
	}
	return decodeWith(charmap.Windows1252, body)
}

func bomEncoding(body []byte) encoding.Encoding {
	switch {
	case bytes.HasPrefix(body, utf8BOM):
		return unicode.UTF8BOM
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	}
	return nil
}

// decodeWith decodes body and guarantees valid UTF-8 whatever the bytes:
// a lying charset label must not let invalid sequences through to the
// agent (or to JSON encoders downstream).
func decodeWith(enc encoding.Encoding, body []byte) string {
	decoded, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		decoded = body
	}
	return strings.ToValidUTF8(string(decoded), "\uFFFD")
}
