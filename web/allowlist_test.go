package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// addEntries fills the add form of /integrations and submits it.
func addEntries(t *testing.T, b *browser, entries, note string) page {
	t.Helper()
	v := formValues(t, b.get("/integrations"), `form[data-testid="allow-form"]`)
	v.Set("entries", entries)
	v.Set("note", note)
	return b.post("/integrations/allowlist", v)
}

// removeEntry submits the remove form of entry's row, confirmed as the
// script would, or not.
func removeEntry(t *testing.T, b *browser, entry string, confirmed bool) page {
	t.Helper()
	p := b.get("/integrations")
	var v url.Values
	p.doc.Find(`[data-testid="allow-entry"] form`).Each(func(_ int, f *goquery.Selection) {
		if e, _ := f.Find(`input[name="entry"]`).Attr("value"); e == entry {
			rev, _ := f.Find(`input[name="revision"]`).Attr("value")
			v = url.Values{"entry": {e}, "revision": {rev}}
		}
	})
	if v == nil {
		t.Fatalf("no remove form for %s", entry)
	}
	if confirmed {
		v.Set("confirmed", "yes")
	}
	return b.post("/integrations/allowlist/remove", v)
}

func badge(p page) string {
	return strings.TrimSpace(p.doc.Find(`[data-testid="egress-badge"]`).Text())
}

func storedEntries(t *testing.T, h *harness) []string {
	t.Helper()
	rows, err := h.store.ListAllowlist(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return app.EntryTexts(rows)
}

func auditOf(t *testing.T, h *harness, action string) []models.Audit {
	t.Helper()
	var out []models.Audit
	for _, a := range auditRows(t, h) {
		if a.Action == action {
			out = append(out, a)
		}
	}
	return out
}

func TestAllowlistBadgeFollowsTheList(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)

	p := ada.get("/integrations")
	if p.status != http.StatusOK || badge(p) != "PUBLIC WEB" {
		t.Fatalf("empty list: status %d, badge %q; want 200, PUBLIC WEB", p.status, badge(p))
	}
	if p.doc.Find(`[data-testid="allow-entry"]`).Length() != 0 || p.doc.Find(`[data-testid="allow-empty"]`).Length() != 1 {
		t.Error("empty list: want the empty state and no rows")
	}

	res := addEntries(t, ada, "Status.Example.com.\n\n  intranet.corp:8080  \n", "Ticket #4211")
	if res.status != http.StatusSeeOther {
		t.Fatalf("add: status %d, want 303; body:\n%s", res.status, res.body)
	}
	p = ada.get("/integrations")
	if got := badge(p); got != "2 ALLOWED" {
		t.Fatalf("badge after adding two = %q, want 2 ALLOWED", got)
	}
	flash := p.doc.Find(`[data-testid="flash"]`).Text()
	if !strings.Contains(flash, "Added 2 entries") || !strings.Contains(flash, "no longer on PUBLIC WEB") {
		t.Errorf("flash = %q, want it to count the entries and say PUBLIC WEB ended", flash)
	}
	rows := p.doc.Find(`[data-testid="allow-entry"]`)
	if rows.Length() != 2 {
		t.Fatalf("%d rows, want 2", rows.Length())
	}
	rows.Each(func(i int, r *goquery.Selection) {
		want := []string{"intranet.corp:8080", "status.example.com"}[i] // normalised, sorted
		if got := r.Find(`[data-testid="allow-entry-text"]`).Text(); got != want {
			t.Errorf("row %d entry = %q, want %q", i, got, want)
		}
		if got := strings.TrimSpace(r.Find(`[data-testid="allow-entry-note"]`).Text()); got != "Ticket #4211" {
			t.Errorf("row %d note = %q", i, got)
		}
		if got := r.Find(`[data-testid="allow-entry-by"]`).Text(); got != "ada" {
			t.Errorf("row %d added by = %q", i, got)
		}
		if r.Find("time").Text() == "—" {
			t.Errorf("row %d has no time", i)
		}
	})
	if got := h.guard.Policy().Allowlist().Len(); got != 2 {
		t.Errorf("guard enforces %d entries after the add, want 2", got)
	}

	for i, e := range []string{"status.example.com", "intranet.corp:8080"} {
		if res := removeEntry(t, ada, e, true); res.status != http.StatusSeeOther {
			t.Fatalf("remove %s: status %d", e, res.status)
		}
		p = ada.get("/integrations")
		want := []string{"1 ALLOWED", "PUBLIC WEB"}[i]
		if got := badge(p); got != want {
			t.Errorf("badge after removing %s = %q, want %q", e, got, want)
		}
	}
	if !strings.Contains(p.doc.Find(`[data-testid="flash"]`).Text(), "back on PUBLIC WEB") {
		t.Error("removing the last entry should say the console is back on PUBLIC WEB")
	}
	if got := h.reloads.Load(); got != 3 {
		t.Errorf("Reload called %d times, want 3 (one add, two removes)", got)
	}
	if !h.guard.Policy().PublicWeb() {
		t.Error("the guard still enforces a list after every entry was removed")
	}
}

func TestAllowlistInvalidLinesSaveNothing(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		line    int
		problem string
	}{
		{"scheme", "https://status.example.com/", 1, "has a scheme"},
		{"path", "status.example.com/health", 1, "has a path"},
		{"bare star", "*", 1, "bare *"},
		{"public suffix wildcard", "*.co.uk", 1, "public suffix"},
		{"port out of range", "intranet.corp:70000", 1, "outside 1–65535"},
		{"whitespace", "intranet corp", 1, "whitespace"},
		{"too long", strings.Repeat("a", 250) + ".example.com", 1, "characters long"},
		{"duplicate within input", "a.example.com\nA.example.com", 2, "listed twice"},
		{"duplicate of existing", "ok.example.com\nstatus.example.com", 2, "already on the list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ada := h.signedIn("ada", models.RoleAdmin)
			if res := addEntries(t, ada, "status.example.com", "existing"); res.status != http.StatusSeeOther {
				t.Fatalf("seed: status %d", res.status)
			}
			before, reloads, audits := storedEntries(t, h), h.reloads.Load(), len(auditOf(t, h, "allowlist.add"))
			input := "good.example.com\n" + tt.input // a valid line must not be saved either
			p := addEntries(t, ada, input, "  keep my note  ")
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.status)
			}
			errs := p.doc.Find(`[data-testid="entry-error"]`)
			if errs.Length() != 1 {
				t.Fatalf("%d entry errors, want 1: %q", errs.Length(), errs.Text())
			}
			msg := errs.Text()
			if !strings.Contains(msg, "Line "+strconv.Itoa(tt.line+1)) || !strings.Contains(msg, tt.problem) {
				t.Errorf("error = %q, want line %d and %q", msg, tt.line+1, tt.problem)
			}
			if errs.Find(".entry-error-fix").Text() == "" {
				t.Error("the error names no fix")
			}
			form := p.doc.Find(`form[data-testid="allow-form"]`)
			if got := form.Find(`textarea[name="entries"]`).Text(); got != input {
				t.Errorf("textarea = %q, want the input as typed %q", got, input)
			}
			if got, _ := form.Find(`input[name="note"]`).Attr("value"); got != "  keep my note  " {
				t.Errorf("note = %q, want it as typed", got)
			}
			if after := storedEntries(t, h); !slices.Equal(after, before) {
				t.Errorf("store changed from %v to %v", before, after)
			}
			if h.reloads.Load() != reloads || len(auditOf(t, h, "allowlist.add")) != audits {
				t.Error("a rejected add reloaded the guard or wrote an audit record")
			}
		})
	}
}

func TestAllowlistEveryBadLineGetsItsOwnMessage(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	p := addEntries(t, ada, "https://x/\nok.example.com\n*\n\n*.com\nx.example.com:0", "")
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", p.status)
	}
	var lines []string
	p.doc.Find(`[data-testid="entry-error"] .entry-error-line`).Each(func(_ int, s *goquery.Selection) { lines = append(lines, s.Text()) })
	if want := []string{"Line 1", "Line 3", "Line 5", "Line 6"}; !slices.Equal(lines, want) {
		t.Errorf("errors on %v, want %v", lines, want)
	}
	if len(storedEntries(t, h)) != 0 {
		t.Error("something was saved")
	}
}

func TestAllowlistRejectsAnEmptyFormAndALongNote(t *testing.T) {
	tests := []struct {
		name, entries, note, want string
	}{
		{"no entries", " \n\n", "", "Type at least one entry"},
		{"long note", "ok.example.com", strings.Repeat("n", 501), "keep it under 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ada := h.signedIn("ada", models.RoleAdmin)
			p := addEntries(t, ada, tt.entries, tt.note)
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.doc.Find(`form[data-testid="allow-form"]`).Text(), tt.want) {
				t.Errorf("status %d; want 422 and %q in the form", p.status, tt.want)
			}
			if len(storedEntries(t, h)) != 0 {
				t.Error("something was saved")
			}
		})
	}
}

func TestAllowlistAddIsAuditedAndEnforcedAtOnce(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("intranet.corp", "10.1.2.3")
	ada := h.signedIn("ada", models.RoleAdmin)
	if d := h.guard.Decide(context.Background(), "http://intranet.corp:8080/"); d.Allowed {
		t.Fatal("intranet.corp:8080 allowed before it was added")
	}
	if res := addEntries(t, ada, "intranet.corp:8080\n*.docs.example.com", "Wiki, ticket #7"); res.status != http.StatusSeeOther {
		t.Fatalf("add: status %d", res.status)
	}
	if d := h.guard.Decide(context.Background(), "http://intranet.corp:8080/"); !d.Allowed || d.Entry.String() != "intranet.corp:8080" {
		t.Errorf("after the add: allowed=%v entry=%q; want allowed by intranet.corp:8080 with no restart", d.Allowed, d.Entry)
	}
	got := auditOf(t, h, "allowlist.add")
	if len(got) != 2 {
		t.Fatalf("%d allowlist.add records, want one per entry", len(got))
	}
	var targets []string
	for _, a := range got {
		targets = append(targets, a.Target)
		if a.Actor != "ada" || a.Before != "" || a.After != a.Target+" (note: Wiki, ticket #7)" {
			t.Errorf("audit %+v: want actor ada, empty before, after = entry with its note", a)
		}
	}
	slices.Sort(targets)
	if !slices.Equal(targets, []string{"*.docs.example.com", "intranet.corp:8080"}) {
		t.Errorf("audited %v", targets)
	}
}

func TestAllowlistRemoveAsksFirst(t *testing.T) {
	const lastTruth = "This is the last entry: removing it returns the console to PUBLIC WEB, where agents reach any public host, including intranet.corp if it is public."
	tests := []struct {
		name    string
		entries []string // on the list before the remove
		// consequence is what the question, the no-script page and the
		// flash must say; wrong is what none of them may say.
		consequence, flash, wrong string
	}{
		{
			name: "one of two entries: agents lose it", entries: []string{"intranet.corp:8080", "status.example.com"},
			consequence: "Agents will no longer reach intranet.corp on port 8080.",
			flash:       "Removed intranet.corp:8080. Agents can no longer reach intranet.corp on port 8080.",
			wrong:       "PUBLIC WEB",
		},
		{
			name: "the last entry: agents gain every public host", entries: []string{"intranet.corp:8080"},
			consequence: lastTruth,
			flash:       "Removed intranet.corp:8080. It was the last entry: the console is back on PUBLIC WEB, where agents reach any public host, including intranet.corp if it is public.",
			wrong:       "no longer reach",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ada := h.signedIn("ada", models.RoleAdmin)
			addEntries(t, ada, strings.Join(tt.entries, "\n"), "wiki")

			p := ada.get("/integrations")
			question, _ := p.doc.Find(`[data-testid="allow-entry"] form`).First().Attr("data-confirm")
			if want := "Remove intranet.corp:8080? " + tt.consequence; question != want {
				t.Errorf("data-confirm = %q, want %q", question, want)
			}

			// Without script: no confirmed=yes, so the server asks.
			reloads := h.reloads.Load()
			confirm := removeEntry(t, ada, "intranet.corp:8080", false)
			if confirm.status != http.StatusOK || confirm.doc.Find(`[data-testid="remove-confirm"]`).Length() != 1 {
				t.Fatalf("unconfirmed remove: status %d, want 200 and a confirmation page", confirm.status)
			}
			text := confirm.doc.Find(`[data-testid="remove-confirm"]`).Text()
			for _, want := range []string{"Remove intranet.corp:8080?", tt.consequence, "wiki"} {
				if !strings.Contains(text, want) {
					t.Errorf("confirmation page lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, tt.wrong) {
				t.Errorf("confirmation page says %q, which is not what this remove does:\n%s", tt.wrong, text)
			}
			if got := storedEntries(t, h); len(got) != len(tt.entries) || h.reloads.Load() != reloads {
				t.Fatalf("asking removed something: %v", got)
			}

			res := ada.post("/integrations/allowlist/remove", formValues(t, confirm, `[data-testid="remove-confirm"] form`))
			if res.status != http.StatusSeeOther {
				t.Fatalf("confirmed remove: status %d", res.status)
			}
			if got := storedEntries(t, h); len(got) != len(tt.entries)-1 || slices.Contains(got, "intranet.corp:8080") {
				t.Errorf("after confirming, the list is %v", got)
			}
			if flash := ada.get("/integrations").doc.Find(`[data-testid="flash"]`).Text(); flash != tt.flash {
				t.Errorf("flash = %q, want %q", flash, tt.flash)
			}
			rm := auditOf(t, h, "allowlist.remove")
			if len(rm) != 1 || rm[0].Target != "intranet.corp:8080" || rm[0].Before != "intranet.corp:8080 (note: wiki)" || rm[0].After != "" {
				t.Errorf("remove audit = %+v, want before = entry with note, after empty", rm)
			}
			if h.reloads.Load() != reloads+1 {
				t.Error("the remove did not reload the guard")
			}
		})
	}
}

func TestAllowlistRemoveOfAnUnknownEntry(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "a.example.com", "")
	rev, _ := h.store.Version(context.Background(), models.SectionAllowlist)
	p := ada.post("/integrations/allowlist/remove", url.Values{"entry": {"b.example.com"}, "revision": {strconv.FormatInt(rev, 10)}, "confirmed": {"yes"}})
	if p.status != http.StatusNotFound || !strings.Contains(p.doc.Find(`[data-testid="egress-notice"]`).Text(), `"b.example.com" is not on the allowlist`) {
		t.Errorf("status %d, notice %q", p.status, p.doc.Find(`[data-testid="egress-notice"]`).Text())
	}
	if got := storedEntries(t, h); !slices.Equal(got, []string{"a.example.com"}) {
		t.Errorf("list is %v", got)
	}
}

func TestAllowlistTwoAdminsConflict(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	bob := h.signedIn("bob", models.RoleAdmin)

	adaForm := formValues(t, ada.get("/integrations"), `form[data-testid="allow-form"]`)
	if res := addEntries(t, bob, "bob.example.com", "bob's"); res.status != http.StatusSeeOther {
		t.Fatalf("bob's add: status %d", res.status)
	}
	reloads := h.reloads.Load()

	adaForm.Set("entries", "ada.example.com\nintranet.corp:8080")
	adaForm.Set("note", "ada's note")
	p := ada.post("/integrations/allowlist", adaForm)
	if p.status != http.StatusConflict {
		t.Fatalf("stale add: status %d, want 409", p.status)
	}
	notice := p.doc.Find(`[data-testid="egress-notice"]`).Text()
	if !strings.Contains(notice, "The allowlist changed while you were editing") || !strings.Contains(notice, "Nothing was saved") || !strings.Contains(notice, "press Add entries again") {
		t.Errorf("conflict notice = %q, want what happened and what to do", notice)
	}
	again := formValues(t, p, `form[data-testid="allow-form"]`)
	if again.Get("entries") != "ada.example.com\nintranet.corp:8080" || again.Get("note") != "ada's note" {
		t.Errorf("re-rendered form lost the input: %v", again)
	}
	if got := storedEntries(t, h); !slices.Equal(got, []string{"bob.example.com"}) || h.reloads.Load() != reloads {
		t.Fatalf("the stale add changed the list to %v", got)
	}
	if p.doc.Find(`[data-testid="allow-entry"]`).Length() != 1 {
		t.Error("the conflict page should show the current list")
	}

	// The re-rendered page shows the current list, so submitting it again
	// is a deliberate save.
	if res := ada.post("/integrations/allowlist", again); res.status != http.StatusSeeOther {
		t.Fatalf("resubmitted add: status %d", res.status)
	}
	if got := storedEntries(t, h); len(got) != 3 {
		t.Errorf("after resubmitting: %v", got)
	}

	// A remove from a stale page is refused the same way.
	stale := formValues(t, ada.get("/integrations"), `[data-testid="allow-entry"]:first-child form`)
	addEntries(t, bob, "late.example.com", "")
	stale.Set("confirmed", "yes")
	p = ada.post("/integrations/allowlist/remove", stale)
	if p.status != http.StatusConflict || !strings.Contains(p.doc.Find(`[data-testid="egress-notice"]`).Text(), "Nothing was removed") {
		t.Errorf("stale remove: status %d, notice %q", p.status, p.doc.Find(`[data-testid="egress-notice"]`).Text())
	}
	if got := storedEntries(t, h); len(got) != 4 {
		t.Errorf("the stale remove changed the list to %v", got)
	}
}

func TestSupportSeesTheListButCannotChangeIt(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	sam := h.signedIn("sam", models.RoleSupport)
	addEntries(t, ada, "intranet.corp:8080", "wiki")
	if err := h.store.InsertRefusals(context.Background(), []models.Refusal{{URL: "http://other.corp/", Host: "other.corp", Port: 80, Code: "forbidden", Reason: "not_allowlisted"}}); err != nil {
		t.Fatal(err)
	}
	p := sam.get("/integrations")
	if p.status != http.StatusOK || badge(p) != "1 ALLOWED" || p.doc.Find(`[data-testid="allow-entry"]`).Length() != 1 {
		t.Fatalf("support view: status %d, badge %q", p.status, badge(p))
	}
	if p.doc.Find(`[data-testid="test-form"]`).Length() != 1 {
		t.Error("support users should get Test a URL")
	}
	for _, sel := range []string{`[data-testid="allow-form"]`, `form[action="/integrations/allowlist/remove"]`, `textarea`, `[data-confirm]`} {
		if p.doc.Find(sel).Length() != 0 {
			t.Errorf("support view has an edit control %s", sel)
		}
	}

	forged := []struct {
		name, path string
		form       url.Values
	}{
		{"add", "/integrations/allowlist", url.Values{"entries": {"evil.example.com"}, "note": {"x"}}},
		{"remove", "/integrations/allowlist/remove", url.Values{"entry": {"intranet.corp:8080"}, "confirmed": {"yes"}}},
	}
	for _, f := range forged {
		t.Run("forged "+f.name, func(t *testing.T) {
			rev, _ := h.store.Version(context.Background(), models.SectionAllowlist)
			f.form.Set("revision", strconv.FormatInt(rev, 10))
			reloads := h.reloads.Load()
			if res := sam.post(f.path, f.form); res.status != http.StatusForbidden {
				t.Errorf("status %d, want 403", res.status)
			}
			if got := storedEntries(t, h); !slices.Equal(got, []string{"intranet.corp:8080"}) || h.reloads.Load() != reloads {
				t.Errorf("a forged %s changed the list to %v", f.name, got)
			}
		})
	}
	if res := sam.get("/integrations/allow?refusal=1"); res.status != http.StatusForbidden {
		t.Errorf("Allow this host for support: status %d, want 403", res.status)
	}
}
