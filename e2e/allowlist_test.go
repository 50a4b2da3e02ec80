package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// TestAddEntriesRefusesEachInvalidKind submits every kind of invalid line
// beside a valid one: each gets its own message next to its line number,
// and nothing at all is saved.
func TestAddEntriesRefusesEachInvalidKind(t *testing.T) {
	c, page := adminConsole(t)
	tests := []struct {
		name    string
		bad     string
		problem string
	}{
		{"scheme", "https://status.example.com/", "The entry has a scheme"},
		{"path", "status.example.com/login", "The entry has a path"},
		{"bare star", "*", "A bare * would allow every host"},
		{"public suffix wildcard", "*.co.uk", "*.co.uk covers a public suffix"},
		{"port out of range", "intranet.corp:70000", "The port 70000 is outside 1–65535"},
		{"whitespace inside", "intra net.corp", "The entry contains whitespace"},
		{"duplicate", "Status.Example.com", "The entry is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addEntries(t, page, "status.example.com\n"+tt.bad, "ticket 4711")
			see(t, page, `[data-testid="allow-form-summary"]`, "Nothing was saved: 1 line needs fixing")
			seeCount(t, page, `[data-testid="entry-error"]`, 1)
			see(t, page, `[data-testid="entry-error"]`, "Line 2")
			see(t, page, `[data-testid="entry-error"]`, tt.problem)
			// What was typed comes back, so the admin fixes one line
			// instead of retyping them all.
			if err := expect.Locator(page.Locator(`textarea[name="entries"]`)).ToHaveValue("status.example.com\n" + tt.bad); err != nil {
				t.Fatalf("the entries box should keep the input: %v", err)
			}
			seeBadge(t, page, "PUBLIC WEB")
			seeCount(t, page, `[data-testid="allow-entry"]`, 0)
		})
	}

	// A fresh load shows the stored list: still empty.
	mustGoto(t, page, c.url+"/integrations")
	seeBadge(t, page, "PUBLIC WEB")
	seeCount(t, page, `[data-testid="allow-entry"]`, 0)
	seeCount(t, page, `[data-testid="allow-empty"]`, 1)
}

// TestBadgeFollowsTheListThroughAddAndRemove adds two entries and removes
// them again: once through the JavaScript confirm (dismissed first, then
// accepted) and once through the confirmation page a browser without
// JavaScript gets.
func TestBadgeFollowsTheListThroughAddAndRemove(t *testing.T) {
	c, page := adminConsole(t)
	seeBadge(t, page, "PUBLIC WEB")

	addEntries(t, page, "status.example.com\n*.docs.example.com", "ticket 4711: status and docs")
	see(t, page, `[data-testid="flash"]`, "Added 2 entries: status.example.com, *.docs.example.com.")
	see(t, page, `[data-testid="flash"]`, "no longer on PUBLIC WEB")
	seeBadge(t, page, "2 ALLOWED")
	seeCount(t, page, `[data-testid="allow-entry"]`, 2)
	for _, col := range []struct{ selector, want string }{
		{`[data-testid="allow-entry-note"]`, "ticket 4711: status and docs"},
		{`[data-testid="allow-entry-by"]`, "ada"},
	} {
		if err := expect.Locator(page.Locator(col.selector)).ToHaveText([]string{col.want, col.want}); err != nil {
			t.Fatalf("every row's %s should read %q: %v", col.selector, col.want, err)
		}
	}

	// With JavaScript, Remove asks in place. Dismissing keeps the entry.
	questions := make(chan string, 4)
	var accept bool
	page.OnDialog(func(d playwright.Dialog) {
		var err error
		if accept {
			err = d.Accept()
		} else {
			err = d.Dismiss()
		}
		if err != nil {
			t.Errorf("answering the confirm dialog: %v", err)
		}
		questions <- d.Message()
	})
	removeStatus := `button[aria-label="Remove status.example.com"]`
	click(t, page, removeStatus)
	if q := waitDialog(t, questions); !regexp.MustCompile(`status\.example\.com`).MatchString(q) {
		t.Fatalf("the remove confirm should name the entry, asked %q", q)
	}
	mustGoto(t, page, c.url+"/integrations")
	seeBadge(t, page, "2 ALLOWED")

	accept = true
	click(t, page, removeStatus)
	waitDialog(t, questions)
	see(t, page, `[data-testid="flash"]`, "Removed status.example.com.")
	seeBadge(t, page, "1 ALLOWED")
	see(t, page, `[data-testid="allow-entry-text"]`, "*.docs.example.com")

	// Without JavaScript the same button leads to a confirmation page,
	// which warns that the last entry returns the console to PUBLIC WEB.
	noJS := newPageWith(t, c.url, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	c.signIn(noJS, "ada", adminPassword)
	mustGoto(t, noJS, c.url+"/integrations")
	click(t, noJS, `button[aria-label="Remove *.docs.example.com"]`)
	see(t, noJS, `[data-testid="remove-confirm"] h2`, "Remove *.docs.example.com?")
	see(t, noJS, `[data-testid="remove-last"]`, "PUBLIC WEB")
	// Nothing is removed until the confirmation is submitted.
	seeBadgeElsewhere(t, page, c.url, "1 ALLOWED")
	click(t, noJS, `[data-testid="remove-confirm"] button[type="submit"]`)
	see(t, noJS, `[data-testid="flash"]`, "It was the last entry: the console is back on PUBLIC WEB, where agents reach any public host")
	seeBadge(t, noJS, "PUBLIC WEB")
	seeCount(t, noJS, `[data-testid="allow-entry"]`, 0)

	seeBadgeElsewhere(t, page, c.url, "PUBLIC WEB")
}

// seeBadgeElsewhere reloads Integrations on page and checks the badge, to
// see what another browser's action stored.
func seeBadgeElsewhere(t *testing.T, page playwright.Page, base, want string) {
	t.Helper()
	mustGoto(t, page, base+"/integrations")
	seeBadge(t, page, want)
}

// waitDialog returns the next confirm question the page asked.
func waitDialog(t *testing.T, questions <-chan string) string {
	t.Helper()
	select {
	case q := <-questions:
		return q
	case <-time.After(actionTimeoutMs * time.Millisecond):
		t.Fatal("the Remove button asked no confirmation")
		return ""
	}
}

// TestTestAURL decides literal-IP URLs in the Test a URL box (no name is
// resolved and no request is made), under PUBLIC WEB and under a list.
func TestTestAURL(t *testing.T) {
	c, page := adminConsole(t)
	type result struct {
		url, heading, code, reason, entry string
	}
	check := func(t *testing.T, r result) {
		t.Helper()
		mustGoto(t, page, c.url+"/integrations")
		fill(t, page, `#test-url`, r.url)
		click(t, page, `[data-testid="test-form"] button[type="submit"]`)
		if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/integrations/test\?url=`)); err != nil {
			t.Fatal(err)
		}
		see(t, page, `[data-testid="test-result"] h3`, r.heading)
		if r.code != "" {
			see(t, page, `[data-testid="test-code"]`, r.code)
			see(t, page, `[data-testid="test-reason"]`, r.reason)
			seeCount(t, page, `[data-testid="test-fix"]`, 1)
		} else {
			seeCount(t, page, `[data-testid="test-code"]`, 0)
		}
		see(t, page, `[data-testid="test-entry"]`, r.entry)
	}

	t.Run("public web", func(t *testing.T) {
		for _, r := range []result{
			{url: "http://93.184.216.34/", heading: "Allowed", entry: "PUBLIC WEB: no entry needed"},
			{url: "http://169.254.169.254/latest/meta-data/", heading: "Refused", code: "forbidden", reason: "metadata", entry: "None: the list is empty"},
			{url: "http://127.0.0.1:8080/admin", heading: "Refused", code: "forbidden", reason: "internal_address", entry: "None: the list is empty"},
		} {
			t.Run(r.url, func(t *testing.T) { check(t, r) })
		}
	})

	addEntries(t, page, "93.184.216.34", "the status page")
	seeBadge(t, page, "1 ALLOWED")

	t.Run("one allowed", func(t *testing.T) {
		for _, r := range []result{
			{url: "http://93.184.216.34/status", heading: "Allowed", entry: "93.184.216.34"},
			{url: "http://93.184.216.35/", heading: "Refused", code: "forbidden", reason: "not_allowlisted", entry: "None: no entry matches"},
		} {
			t.Run(r.url, func(t *testing.T) { check(t, r) })
		}
	})
}
