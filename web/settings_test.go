package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// formValues returns what a browser would submit for the form matching
// sel on p, hidden fields included.
func formValues(t *testing.T, p page, sel string) url.Values {
	t.Helper()
	form := p.doc.Find(sel)
	if form.Length() != 1 {
		t.Fatalf("the page (status %d) has %d forms matching %s", p.status, form.Length(), sel)
	}
	v := url.Values{}
	form.Find("input[name], textarea[name]").Each(func(_ int, s *goquery.Selection) {
		// As a browser does: an unticked checkbox sends nothing.
		if typ := s.AttrOr("type", ""); (typ == "checkbox" || typ == "radio") && s.AttrOr("checked", "-") == "-" {
			return
		}
		val, _ := s.Attr("value")
		if goquery.NodeName(s) == "textarea" {
			val = s.Text()
		}
		v.Add(s.AttrOr("name", ""), val)
	})
	form.Find("select[name]").Each(func(_ int, s *goquery.Selection) {
		opt := s.Find("option[selected]")
		if opt.Length() == 0 {
			opt = s.Find("option").First()
		}
		v.Add(s.AttrOr("name", ""), opt.AttrOr("value", ""))
	})
	return v
}

// auditRows returns every audit record, newest first.
func auditRows(t *testing.T, h *harness) []models.Audit {
	t.Helper()
	rows, _, err := h.store.ListAudit(context.Background(), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// openSettings loads the Settings page and returns its form as a browser
// would submit it unchanged.
func openSettings(t *testing.T, b *browser) url.Values {
	t.Helper()
	return formValues(t, b.get("/settings"), `[data-testid="settings-form"]`)
}

func storedSettingsMap(t *testing.T, h *harness) map[string]string {
	t.Helper()
	m, err := h.store.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func revision(t *testing.T, h *harness) int64 {
	t.Helper()
	r, err := h.store.Version(context.Background(), models.SectionSettings)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSettingsPageShowsEverySetting(t *testing.T) {
	h := newHarness(t)
	p := h.signedIn("ada", models.RoleAdmin).get("/settings")
	if p.status != http.StatusOK {
		t.Fatalf("GET /settings: %d", p.status)
	}
	defaults := tools.DefaultSettings()
	for _, d := range tools.SettingDefs {
		t.Run(d.Key, func(t *testing.T) {
			row := p.doc.Find(`[data-testid="setting-` + d.Key + `"]`)
			if row.Length() != 1 {
				t.Fatalf("no row for %s", d.Key)
			}
			got := row.Find(`input[name="`+d.Key+`"]`).AttrOr("value", "<none>")
			if tools.SettingChoices(d.Key) != nil {
				got = row.Find(`select[name="`+d.Key+`"] option[selected]`).AttrOr("value", "<none>")
			}
			if got != defaults.Value(d.Key) {
				t.Errorf("input value %q, want the value in force %q", got, defaults.Value(d.Key))
			}
			text := row.Text()
			for _, want := range []string{d.Label, d.Help, "Default:"} {
				if !strings.Contains(text, want) {
					t.Errorf("row lacks %q: %s", want, text)
				}
			}
		})
	}
	warn := p.doc.Find(`[data-testid="setting-retention_days"] [data-testid="setting-warning"]`).Text()
	if !strings.Contains(warn, "deletes every refusal older than") {
		t.Fatalf("the retention field must always warn that shrinking deletes data; got %q", warn)
	}
	if p.doc.Find(`[data-testid="stored-value"]`).Length() != 0 {
		t.Fatal("an untouched form shows 'in force now' notes")
	}
}

func TestSettingsInvalidValuesSaveNothing(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"timeout without unit", "timeout", "15", "15 has no unit; write 15s for seconds"},
		{"timeout not a duration", "timeout", "fast", `"fast" is not a duration`},
		{"timeout too long", "timeout", "10m", "is outside"},
		{"max bytes not a size", "max_bytes", "lots", `"lots" is not a size`},
		{"max bytes too small", "max_bytes", "10", "outside 1KB–1GB"},
		{"page chars not a number", "page_chars", "many", `"many" is not a whole number`},
		{"page chars too small", "page_chars", "10", "10 is outside 500–100000"},
		{"redirects too many", "redirects", "99", "99 is outside 0–"},
		{"reads per turn zero", "reads_per_turn", "0", "0 is outside 1–100"},
		{"port always open", "ports", "8080, 443", "port 443 is always open"},
		{"port twice", "ports", "8080, 8080", "port 8080 is listed twice"},
		{"port out of range", "ports", "70000", "port 70000 is outside 1–65535"},
		{"port not a number", "ports", "http", `"http" is not a port number`},
		{"user agent empty", "user_agent", "  ", "the user agent is empty"},
		{"user agent not ascii", "user_agent", "bot ü", "printable ASCII"},
		{"cache too long", "cache_ttl", "2h", "2h is outside 0s–1h; choose a value such as 5m"},
		{"retention zero", "retention_days", "0", "0 is outside 1–3650"},
	}
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	rev := revision(t, h)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := openSettings(t, b)
			// A valid change alongside the bad one must not be saved either.
			form.Set("page_chars", "7000")
			form.Set("reads_per_turn", "9")
			form.Set(tt.key, tt.value)
			p := b.post("/settings", form)
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.status)
			}
			row := p.doc.Find(`[data-testid="setting-` + tt.key + `"]`)
			if msg := row.Find(`[data-testid="field-error"]`).Text(); !strings.Contains(strings.ToLower(msg), strings.ToLower(tt.want)) {
				t.Errorf("field error %q, want it to contain %q", msg, tt.want)
			}
			if n := p.doc.Find(`[data-testid="field-error"]`).Length(); n != 1 {
				t.Errorf("%d field errors, want only the bad field's", n)
			}
			if got := row.Find("input").AttrOr("value", ""); got != tt.value {
				t.Errorf("the typed value is lost: input shows %q, want %q", got, tt.value)
			}
			other := "page_chars"
			if tt.key == "page_chars" {
				other = "reads_per_turn"
			}
			if got := p.doc.Find(`input[name="`+other+`"]`).AttrOr("value", ""); got != form.Get(other) {
				t.Errorf("the other typed value is lost: %s shows %q", other, got)
			}
			if !strings.Contains(p.doc.Find(`[data-testid="settings-error"]`).Text(), "nothing was saved") {
				t.Error("no form-level message saying nothing was saved")
			}
		})
	}
	if m := storedSettingsMap(t, h); len(m) != 0 {
		t.Fatalf("invalid forms saved settings: %v", m)
	}
	if got := revision(t, h); got != rev {
		t.Fatalf("revision moved from %d to %d", rev, got)
	}
	if n := h.reloads.Load(); n != 0 {
		t.Fatalf("%d reloads after refused saves", n)
	}
	if rows := auditRows(t, h); len(rows) != 0 {
		t.Fatalf("refused saves were audited: %+v", rows)
	}
}

func TestSettingsSeveralErrorsAtOnce(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	form := openSettings(t, b)
	form.Set("timeout", "soon")
	form.Set("redirects", "-1")
	form.Set("user_agent", "")
	form.Set("retention_days", "7") // valid, but not saved with the others wrong
	p := b.post("/settings", form)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", p.status)
	}
	for key, want := range map[string]string{"timeout": "is not a duration", "redirects": "-1 is outside", "user_agent": "is empty"} {
		if msg := p.doc.Find(`[data-testid="setting-` + key + `"] [data-testid="field-error"]`).Text(); !strings.Contains(msg, want) {
			t.Errorf("%s: error %q, want %q", key, msg, want)
		}
	}
	if msg := p.doc.Find(`[data-testid="settings-error"]`).Text(); !strings.Contains(msg, "3 settings are not valid") {
		t.Errorf("form error %q", msg)
	}
	if warn := p.doc.Find(`[data-testid="setting-retention_days"] [data-testid="setting-warning"]`).Text(); !strings.Contains(warn, "shrinking the retention from 30 to 7 days") {
		t.Errorf("the typed shrink is not warned about: %q", warn)
	}
}

func TestSettingsSaveAuditsChangedKeysAndReloads(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	form := openSettings(t, b)
	form.Set("timeout", "30s")
	form.Set("ports", "8443,8080")
	resp := b.postForm("/settings", form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings" {
		t.Fatalf("save: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp.Body.Close()
	if n := h.reloads.Load(); n != 1 {
		t.Fatalf("Reload called %d times, want once right after the save", n)
	}
	m := storedSettingsMap(t, h)
	if len(m) != 2 || m["timeout"] != "30s" || m["ports"] != "8080, 8443" {
		t.Fatalf("stored %v, want only the two changed keys in canonical form", m)
	}
	rows := auditRows(t, h)
	want := map[string][2]string{"timeout": {"15s", "30s"}, "ports": {"", "8080, 8443"}}
	if len(rows) != len(want) {
		t.Fatalf("%d audit rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		w, ok := want[r.Target]
		if !ok || r.Action != "settings.set" || r.Actor != "ada" || r.Before != w[0] || r.After != w[1] {
			t.Errorf("audit row %+v, want settings.set by ada %v", r, w)
		}
	}
	p := b.get("/settings")
	if flash := p.doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "timeout 15s → 30s") || !strings.Contains(flash, "in force now") {
		t.Fatalf("flash %q", flash)
	}
	if got := p.doc.Find(`input[name="timeout"]`).AttrOr("value", ""); got != "30s" {
		t.Fatalf("the page shows timeout %q after the save", got)
	}

	t.Run("an unchanged form changes and audits nothing", func(t *testing.T) {
		rev := revision(t, h)
		resp := b.postForm("/settings", openSettings(t, b))
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if got := revision(t, h); got != rev {
			t.Fatalf("revision moved %d → %d on an unchanged save", rev, got)
		}
		if n := len(auditRows(t, h)); n != 2 {
			t.Fatalf("%d audit rows, want still 2", n)
		}
		if flash := b.get("/settings").doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "Nothing changed") {
			t.Fatalf("flash %q", flash)
		}
	})

	t.Run("a key left out of the post keeps its value", func(t *testing.T) {
		form := openSettings(t, b)
		form.Del("ports")
		form.Set("redirects", "3")
		resp := b.postForm("/settings", form)
		resp.Body.Close()
		if m := storedSettingsMap(t, h); m["ports"] != "8080, 8443" || m["redirects"] != "3" {
			t.Fatalf("stored %v", m)
		}
	})
}

func TestSettingsRetentionShrinkWarns(t *testing.T) {
	tests := []struct {
		name, value string
		warn        bool
	}{
		{"shrinking warns", "7", true},
		{"growing does not", "90", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			b := h.signedIn("ada", models.RoleAdmin)
			form := openSettings(t, b)
			form.Set("retention_days", tt.value)
			resp := b.postForm("/settings", form)
			resp.Body.Close()
			flash := b.get("/settings").doc.Find(`[data-testid="flash"]`).Text()
			warning := "Refusals older than " + tt.value + " days will be deleted at the next purge (within an hour)."
			if strings.Contains(flash, warning) != tt.warn {
				t.Fatalf("flash %q: warning shown = %v, want %v", flash, !tt.warn, tt.warn)
			}
			if m := storedSettingsMap(t, h); m["retention_days"] != tt.value {
				t.Fatalf("stored %v", m)
			}
		})
	}
}

func TestSettingsStaleRevisionIsAConflict(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	form := openSettings(t, b)
	// Someone else saves between this admin loading and saving the page.
	if _, err := h.store.SetSettings(context.Background(), models.AnyRevision, "bob", map[string]string{"timeout": "45s"}); err != nil {
		t.Fatal(err)
	}
	form.Set("timeout", "20s")
	form.Set("page_chars", "9000")
	p := b.post("/settings", form)
	if p.status != http.StatusConflict {
		t.Fatalf("status %d, want 409", p.status)
	}
	if msg := p.doc.Find(`[data-testid="settings-error"]`).Text(); !strings.Contains(msg, "Someone else changed the configuration") || !strings.Contains(msg, "nothing was saved") {
		t.Fatalf("conflict message %q", msg)
	}
	if got := p.doc.Find(`input[name="timeout"]`).AttrOr("value", ""); got != "20s" {
		t.Fatalf("typed timeout lost: %q", got)
	}
	if got := p.doc.Find(`input[name="page_chars"]`).AttrOr("value", ""); got != "9000" {
		t.Fatalf("typed page_chars lost: %q", got)
	}
	if got := p.doc.Find(`[data-testid="setting-timeout"] [data-testid="stored-value"]`).Text(); got != "45s" {
		t.Fatalf("the value now in force is not shown next to the input: %q", got)
	}
	if m := storedSettingsMap(t, h); len(m) != 1 || m["timeout"] != "45s" {
		t.Fatalf("the stale save overwrote: %v", m)
	}
	if len(auditRows(t, h)) != 0 || h.reloads.Load() != 0 {
		t.Fatal("a refused save was audited or reloaded")
	}
	// The re-rendered form is based on the new revision: saving it again,
	// after seeing the other change, goes through.
	again := formValues(t, p, `[data-testid="settings-form"]`)
	if again.Get("revision") != strconv.FormatInt(revision(t, h), 10) {
		t.Fatalf("re-rendered revision %s, store at %d", again.Get("revision"), revision(t, h))
	}
	resp := b.postForm("/settings", again)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("second save: %d", resp.StatusCode)
	}
	if m := storedSettingsMap(t, h); m["timeout"] != "20s" || m["page_chars"] != "9000" {
		t.Fatalf("stored %v", m)
	}
	rows := auditRows(t, h)
	if len(rows) != 2 || rows[0].Before == "" {
		t.Fatalf("audit %+v", rows)
	}
	for _, r := range rows {
		if r.Target == "timeout" && (r.Before != "45s" || r.After != "20s") {
			t.Fatalf("timeout audited as %q → %q, want 45s → 20s", r.Before, r.After)
		}
	}
}

// TestSettingsBrowserModeIsASelect: the browser setting offers its three
// modes, each explained; choosing one saves it, and a value stored by hand
// that is no mode is shown, not silently replaced.
func TestSettingsBrowserModeIsASelect(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	sel := b.get("/settings").doc.Find(`[data-testid="setting-browser"] select[name="browser"]`)
	var values []string
	sel.Find("option").Each(func(_ int, o *goquery.Selection) { values = append(values, o.AttrOr("value", "")) })
	if strings.Join(values, ",") != "off,confirm,read_only" || !strings.Contains(sel.Text(), "a person confirms") {
		t.Fatalf("options %v: %s", values, sel.Text())
	}
	for _, key := range []string{"browser_idle", "browser_contexts"} {
		if b.get("/settings").doc.Find(`[data-testid="setting-`+key+`"] input[name="`+key+`"]`).Length() != 1 {
			t.Fatalf("%s has no input", key)
		}
	}
	form := openSettings(t, b)
	form.Set("browser", "confirm")
	resp := b.postForm("/settings", form)
	resp.Body.Close()
	if m := storedSettingsMap(t, h); resp.StatusCode != http.StatusSeeOther || m["browser"] != "confirm" {
		t.Fatalf("save: %d, stored %v", resp.StatusCode, m)
	}
	if got := b.get("/settings").doc.Find(`select[name="browser"] option[selected]`).AttrOr("value", ""); got != "confirm" {
		t.Fatalf("selected %q after the save", got)
	}
	form = openSettings(t, b)
	form.Set("browser", "sometimes")
	p := b.post("/settings", form)
	if p.status != http.StatusUnprocessableEntity || p.doc.Find(`select[name="browser"] option[selected]`).AttrOr("value", "") != "sometimes" ||
		!strings.Contains(p.doc.Find(`[data-testid="setting-browser"] [data-testid="field-error"]`).Text(), "off, confirm or read_only") {
		t.Fatalf("an invalid mode: %d %s", p.status, p.doc.Find(`[data-testid="setting-browser"]`).Text())
	}
	if m := storedSettingsMap(t, h); m["browser"] != "confirm" {
		t.Fatalf("an invalid mode was stored: %v", m)
	}
}
