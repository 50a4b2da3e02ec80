package extract

import (
	"net/url"
)

// Page is what an agent reads of a fetched body.
type Page struct {
	// Title is the page's title, whitespace collapsed; empty for text
	// kinds that have none.
	Title string
	// Text is the main text: Markdown-like for web pages, the body
	// itself (decoded to UTF-8) for text kinds. Always valid UTF-8.
	Text string
	// Links are up to MaxLinks distinct absolute links, those of the
	// main text first. A link's number in the text ("release notes
	// [3]") is its place here, from 1.
	Links []Link
	// ScriptDrawn is true for a web page that shows next to no text
	// without running its scripts: what a reader sees there is drawn by
	// JavaScript, which this package does not run.
	ScriptDrawn bool
}

// Extract reads body, served with the given Content-Type header value from
// base (the final URL after redirects, used to resolve relative links; nil
// keeps only absolute links). A body without a Content-Type is sniffed.
// Bodies that are not web pages or text yield an *UnsupportedError.
func Extract(body []byte, contentType string, base *url.URL) (Page, error) {
	kind, err := KindOf(contentType)
	if err != nil {
		return Page{}, err
	}
	if kind == SniffBody {
		kind = Sniff(body)
		if kind == Binary {
			return Page{}, &UnsupportedError{ContentType: mediaType(sniffedType(body)), Sniffed: true}
		}
	}
	if kind.isMarkup() {
		return extractHTML(body, contentType, base)
	}
	return Page{Text: extractText(kind, decodeText(body, contentType))}, nil
}
