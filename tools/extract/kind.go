package extract

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// Kind is the kind of body Extract knows how to read.
type Kind int

const (
	// SniffBody means the response carried no Content-Type: the kind
	// must be decided from the body itself with Sniff.
	SniffBody Kind = iota
	// HTML is a web page.
	HTML
	// XHTML is a web page served as XML; it is read as HTML.
	XHTML
	// PlainText is text/plain, returned as is.
	PlainText
	// Markdown is already in the form agents read best; returned as is.
	Markdown
	// CSV is delimited data, returned as is.
	CSV
	// JSON is pretty-printed so the agent can follow its structure.
	JSON
	// XML (including feeds) is returned as is.
	XML
	// Binary is what Sniff reports for a body that is not text. Extract
	// refuses it rather than handing the agent bytes as if they were text.
	Binary
)

var kindNames = [...]string{
	SniffBody: "sniff-body",
	HTML:      "html",
	XHTML:     "xhtml",
	PlainText: "plain-text",
	Markdown:  "markdown",
	CSV:       "csv",
	JSON:      "json",
	XML:       "xml",
	Binary:    "binary",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// isMarkup reports whether the kind is parsed as an HTML document.
func (k Kind) isMarkup() bool { return k == HTML || k == XHTML }

// UnsupportedError reports a body that is not a web page or text, such as
// a PDF, an image or an archive.
type UnsupportedError struct {
	// ContentType is the media type that was refused, as sent by the
	// server or, when Sniffed is true, as detected from the body.
	ContentType string
	// Sniffed is true when the server sent no Content-Type and the type
	// was detected from the body.
	Sniffed bool
}

func (e *UnsupportedError) Error() string {
	how := "content type"
	if e.Sniffed {
		how = "content type detected from the body"
	}
	return fmt.Sprintf("extract: cannot read %s %q: only web pages and text (HTML, plain text, Markdown, CSV, JSON, XML) can be read", how, e.ContentType)
}

// KindOf decides from a Content-Type header value, before the body is read,
// whether and how the body can be read. An empty value yields SniffBody.
// Anything that is not a web page or text yields an *UnsupportedError, so
// the caller can stop before downloading a large binary.
func KindOf(contentType string) (Kind, error) {
	media := mediaType(contentType)
	if media == "" {
		return SniffBody, nil
	}
	if kind, ok := kindOfMedia(media); ok {
		return kind, nil
	}
	return Binary, &UnsupportedError{ContentType: media}
}

// Sniff decides the kind of a body that came without a Content-Type, using
// the WHATWG sniffing algorithm (http.DetectContentType). It never guesses
// binary as text: anything not recognised as text is Binary.
func Sniff(body []byte) Kind {
	kind, ok := kindOfMedia(mediaType(sniffedType(body)))
	if !ok {
		return Binary
	}
	return kind
}

// mediaType returns the lower-cased media type without parameters. A
// malformed header still yields its type, as browsers do.
func mediaType(contentType string) string {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		media, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(media))
}

func kindOfMedia(media string) (Kind, bool) {
	switch media {
	case "text/html":
		return HTML, true
	case "application/xhtml+xml":
		return XHTML, true
	case "text/plain":
		return PlainText, true
	case "text/markdown", "text/x-markdown":
		return Markdown, true
	case "text/csv", "text/tab-separated-values":
		return CSV, true
	case "application/json", "text/json":
		return JSON, true
	case "application/xml", "text/xml":
		return XML, true
	}
	top, _, _ := strings.Cut(media, "/")
	switch {
	case top == "image" || top == "audio" || top == "video" || top == "font" || top == "model":
		// image/svg+xml is XML but shows a picture, not text.
		return Binary, false
	case strings.HasSuffix(media, "+json"):
		return JSON, true
	case strings.HasSuffix(media, "+xml"):
		return XML, true
	}
	return Binary, false
}

// sniffedType is the media type http.DetectContentType sees in body.
func sniffedType(body []byte) string { return http.DetectContentType(body) }
