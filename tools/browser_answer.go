package tools

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

// BrowserResponse is the browser tools' API answer. A refusal is a
// result: ok is false and error carries the guard's value as an agent may
// read it. answer is the text an MCP client reads.
type BrowserResponse struct {
	OK     bool           `json:"ok"`
	Error  *guard.Refusal `json:"error,omitempty"`
	URL    string         `json:"url,omitempty"`
	Title  string         `json:"title,omitempty"`
	Answer string         `json:"answer"`
}

// browserRefused is a browser tool's answer for a refusal.
func browserRefused(tool string, r *guard.Refusal) Result {
	if r.Tool == "" {
		r.Tool = tool
	}
	text := RefusalAnswer(tool, r)
	return Result{Refusal: r, Text: text, URL: r.URL, API: BrowserResponse{Error: r.ForAgent(), URL: r.URL, Answer: text}}
}

// snapshotTries bounds how often a page read is retried when the page was
// navigating meanwhile (its document went away under the read).
const snapshotTries = 3

// answer reads the page as it is now, hands out new refs (the earlier
// ones stop working), and renders what the agent reads: the data note,
// the provenance, what the page did meanwhile, and the text cut at
// page_chars, or, for browser_find, the lines holding find.
func (tb *tab) answer(tool string, set Settings, status int, find string) Result {
	var snap snapshot
	var err error
	for i := range snapshotTries {
		if snap, err = takeSnapshot(tb.page, tb.next); err == nil {
			break
		}
		if tb.crashed(err) || i == snapshotTries-1 {
			return browserRefused(tool, tabBrowserRefusal(tool, tb.page.URL(), err))
		}
		ms := float64(set.Guard.Timeout / time.Millisecond)
		_ = tb.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: &ms})
	}
	if old := tb.elements; old != nil {
		go old.Dispose()
	}
	tb.base, tb.elements, tb.count = tb.next, snap.elements, snap.count
	tb.next += snap.count
	url := tb.page.URL()
	title, _ := tb.page.Title()

	var b strings.Builder
	b.WriteString(DataNote + "\n")
	fmt.Fprintf(&b, "URL: %s\n", url)
	if status != 0 && (status < 200 || status > 299) {
		fmt.Fprintf(&b, "Status: %d %s (the site answered with an error page)\n", status, http.StatusText(status))
	}
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", cut(strings.Join(strings.Fields(title), " "), 300))
	}
	fmt.Fprintf(&b, "Site: %s (this conversation's browser stays on it)\n", tb.siteNow())
	for _, e := range tb.takeEvents() {
		b.WriteString(e + "\n")
	}
	if n := snap.count; n > 0 {
		fmt.Fprintf(&b, "Refs in this answer: e%d to e%d; refs from earlier answers no longer work.\n", tb.base, tb.base+n-1)
	} else {
		b.WriteString("The page has no links, buttons or fields.\n")
	}
	text := snap.text
	if find != "" {
		lines, n := findLines(text, find, set.PageChars)
		if n == 0 {
			fmt.Fprintf(&b, "%q does not occur in the page's text.\n", find)
		} else {
			fmt.Fprintf(&b, "%q occurs on %d lines of the page (marked >):\n", find, n)
		}
		b.WriteString("\n" + lines + "\n")
	} else {
		total := runeCount(text)
		if total > set.PageChars {
			shown := []rune(text)[:set.PageChars]
			fmt.Fprintf(&b, "Characters 1 to %d of %d: the rest is cut. Look for words in it with %s; its refs above work too.\n", len(shown), total, BrowserFindName)
			text = string(shown)
		}
		if strings.TrimSpace(text) == "" {
			text = "(The page has no text.)"
		}
		b.WriteString("\n" + text + "\n")
	}
	answer := b.String()
	return Result{Text: answer, URL: url, API: BrowserResponse{OK: true, URL: url, Title: title, Answer: answer}}
}

// tabBrowserRefusal is the answer when the browser itself failed.
func tabBrowserRefusal(tool, u string, err error) *guard.Refusal {
	r := BrowserFailed(tool, u, err)
	r.Message = "The browser could not do this: " + firstLine(err.Error()) + "."
	r.Fix = "Try again; if it keeps failing, open the page again with " + BrowserOpenName + "."
	return r
}
