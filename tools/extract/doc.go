// Package extract turns a fetched HTTP body into the text an AI agent reads.
//
// The fetch_url tool hands an agent the page behind a URL found in a
// help-desk email. Agents read text, not markup: raw HTML wastes most of
// the context window on menus, cookie banners and scripts, and binary
// bodies are noise. This package decides from the Content-Type header
// whether a body can be read at all (KindOf, before the body is
// downloaded), and then renders readable bodies as compact Markdown-like
// text with a title and a bounded list of links.
//
// For HTML it decodes the page's charset, asks Readability for the article
// and the title (cleaned of the site's name), and keeps the article when it
// is the page's running text, however short (maintext.go). Only when
// Readability found no such article does it fall back to the page's <main>,
// or to the whole page minus its furniture (navigation, header, footer,
// forms, hidden elements): the common case for status pages and release
// notes. The page is parsed once and never copied: Readability works on
// the parsed tree itself.
//
// Links cost an agent most when their addresses sit in the text, so the
// text keeps a link's words and its number ("release notes [3]"), and the
// list gives each number its address once (LinksSection). Render exposes
// the same rendering, for any parsed element, to other tools (the browser
// tools read live pages with it).
//
// Judging whether text tries to instruct the agent is not this package's
// job; the caller frames fetched text as untrusted data. But script, style
// and hidden elements are never text a human reader would see, so they are
// never rendered: anything there that looks like an instruction cannot
// reach the agent through this package. "Hidden" covers the usual carriers
// of such orders (hidden.go): display:none, zero opacity or font size,
// text coloured like its background, screen-reader-only classes,
// off-screen positioning, clipping and collapsed boxes, whether set in a
// style attribute or by a <style> rule with a simple selector.
package extract
