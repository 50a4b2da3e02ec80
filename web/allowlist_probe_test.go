package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

func TestTestAURL(t *testing.T) {
	tests := []struct {
		name      string
		list      string // entries added first; "" keeps PUBLIC WEB
		url       string
		allowed   bool
		reason    string
		entry     string
		addresses string
		rangeName string
		// invalid: the URL never reached the allowlist, so the result
		// names no entry and no addresses.
		invalid bool
	}{
		{name: "public host under PUBLIC WEB", url: "https://status.example.com/health", allowed: true,
			entry: "PUBLIC WEB: no entry needed", addresses: "93.184.216.34"},
		{name: "listed host", list: "status.example.com", url: "https://status.example.com/health", allowed: true,
			entry: "status.example.com", addresses: "93.184.216.34"},
		{name: "name resolving to a private address", url: "https://wiki.example.com/", reason: "internal_address",
			entry: "None: the list is empty (PUBLIC WEB)", addresses: "10.1.2.3", rangeName: "private-use range 10.0.0.0/8"},
		{name: "wildcard never unlocks a private address", list: "*.example.com", url: "https://wiki.example.com/", reason: "internal_address",
			entry: "*.example.com (considered", rangeName: "private-use range 10.0.0.0/8"},
		{name: "metadata endpoint", url: "http://169.254.169.254/latest/meta-data/", reason: "metadata",
			addresses: "169.254.169.254", rangeName: "cloud metadata endpoint"},
		{name: "metadata name", url: "http://metadata.google.internal/", reason: "metadata"},
		{name: "host not on the list", list: "status.example.com", url: "https://other.example.com/", reason: "not_allowlisted",
			entry: "None: no entry matches"},
		{name: "unparseable URL", list: "status.example.com", url: "http://exa mple.com/", reason: "bad_url", invalid: true},
		{name: "not http", url: "ftp://files.example.com/", reason: "scheme", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.resolver.Answer("status.example.com", "93.184.216.34")
			h.resolver.Answer("wiki.example.com", "10.1.2.3")
			ada := h.signedIn("ada", models.RoleAdmin)
			if tt.list != "" {
				addEntries(t, ada, tt.list, "")
			}
			sam := h.signedIn("sam", models.RoleSupport) // support may test too
			p := sam.get("/integrations/test?url=" + url.QueryEscape(tt.url))
			res := p.doc.Find(`[data-testid="test-result"]`)
			if p.status != http.StatusOK || res.Length() != 1 {
				t.Fatalf("status %d, %d results; want 200 and one", p.status, res.Length())
			}
			if allowed := res.HasClass("decision-allowed"); allowed != tt.allowed {
				t.Errorf("allowed = %v, want %v: %s", allowed, tt.allowed, res.Text())
			}
			if got := res.Find(`[data-testid="test-reason"]`).Text(); got != tt.reason {
				t.Errorf("reason = %q, want %q", got, tt.reason)
			}
			if !tt.allowed && (res.Find(`[data-testid="test-message"]`).Text() == "" || res.Find(`[data-testid="test-fix"]`).Text() == "") {
				t.Error("a refusal should show its message and fix")
			}
			checks := map[string]string{"test-entry": tt.entry, "test-addresses": tt.addresses, "test-range": tt.rangeName}
			for id, want := range checks {
				if got := res.Find(`[data-testid="` + id + `"]`).Text(); !strings.Contains(got, want) {
					t.Errorf("%s = %q, want it to contain %q", id, got, want)
				}
			}
			if tt.invalid && (res.Find(`[data-testid="test-entry"]`).Length() != 0 || res.Find(`[data-testid="test-addresses"]`).Length() != 0 || strings.Contains(res.Text(), "Matching entry")) {
				t.Errorf("an invalid URL shows an entry or addresses: %s", res.Text())
			}
			if v, _ := p.doc.Find(`input[name="url"]`).Attr("value"); v != tt.url {
				t.Errorf("the box lost the URL: %q", v)
			}
		})
	}
}

func TestTestAURLNeedsAURL(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	p := ada.get("/integrations/test?url=+")
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.doc.Find(`[data-testid="test-form"]`).Text(), "Type a URL to test") {
		t.Errorf("status %d; want 422 and a message asking for a URL", p.status)
	}
	if p.doc.Find(`[data-testid="test-result"]`).Length() != 0 {
		t.Error("an empty URL got a decision")
	}
}

// TestTestAURLSendsNoRequest lists a loopback listener, tests its URL and
// checks that the allowed decision did not connect to it.
func TestTestAURLSendsNoRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "127.0.0.1:"+strconv.Itoa(port), "")

	p := ada.get("/integrations/test?url=" + url.QueryEscape("http://127.0.0.1:"+strconv.Itoa(port)+"/"))
	if !p.doc.Find(`[data-testid="test-result"]`).HasClass("decision-allowed") {
		t.Fatalf("want allowed: %s", p.doc.Find(`[data-testid="test-result"]`).Text())
	}
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	conn, err := ln.Accept()
	if err == nil {
		conn.Close()
		t.Fatal("Test a URL connected to the host it tested")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("accept: %v", err)
	}
}

// refusal stores one refusal and returns its ID.
func refusal(t *testing.T, h *harness, r models.Refusal) int64 {
	t.Helper()
	if err := h.store.InsertRefusals(context.Background(), []models.Refusal{r}); err != nil {
		t.Fatal(err)
	}
	// InsertRefusals does not return IDs; they are assigned from 1 up.
	for id := int64(1); ; id++ {
		got, err := h.store.RefusalByID(context.Background(), id)
		if err != nil {
			t.Fatalf("refusal %q not stored: %v", r.URL, err)
		}
		if got.URL == r.URL {
			return id
		}
	}
}

func TestAllowThisHost(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("intranet.corp", "10.1.2.3")
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "status.example.com", "")
	id := refusal(t, h, models.Refusal{Tool: "fetch_url", URL: "http://intranet.corp:8080/x", Host: "intranet.corp", Port: 8080,
		Code: "forbidden", Reason: "not_allowlisted", Message: "intranet.corp is not on the outbound allowlist.",
		RemedyKind: "add_entry", RemedyValue: "intranet.corp:8080"})

	p := ada.get("/integrations/allow?refusal=" + strconv.FormatInt(id, 10))
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	preview := p.doc.Find(`[data-testid="allow-preview"]`).Text()
	want := "After adding intranet.corp:8080, agents can reach intranet.corp on port 8080 only, at 10.1.2.3 (private-use range 10.0.0.0/8), which is allowed because the entry is literal."
	if preview != want {
		t.Errorf("preview = %q\nwant      %q", preview, want)
	}
	form := formValues(t, p, `form[data-testid="allow-form"]`)
	wantNote := "Allowed from refusal #" + strconv.FormatInt(id, 10) + " (http://intranet.corp:8080/x) by ada"
	if form.Get("entries") != "intranet.corp:8080" || form.Get("note") != wantNote {
		t.Errorf("prefill = %q / %q, want intranet.corp:8080 / %q", form.Get("entries"), form.Get("note"), wantNote)
	}
	if p.doc.Find(`[data-testid="allow-mode-change"]`).Length() != 0 {
		t.Error("the list already has an entry, so nothing about PUBLIC WEB ending should show")
	}
	if len(storedEntries(t, h)) != 1 {
		t.Fatal("opening the prefilled form saved something")
	}

	// Saving is the normal add.
	if res := ada.post("/integrations/allowlist", form); res.status != http.StatusSeeOther {
		t.Fatalf("save: status %d", res.status)
	}
	rows, _ := h.store.ListAllowlist(context.Background())
	if len(rows) != 2 || rows[0].Entry != "intranet.corp:8080" || rows[0].Note != wantNote {
		t.Errorf("stored %+v, want intranet.corp:8080 with its origin note", rows)
	}
	if d := h.guard.Decide(context.Background(), "http://intranet.corp:8080/x"); !d.Allowed {
		t.Errorf("the refused URL is still refused after Allow this host: %s", d.Message)
	}
}

func TestAllowThisHostEntries(t *testing.T) {
	tests := []struct {
		name     string
		refusal  models.Refusal
		entry    string // "" when no form may be offered
		why      string
		modeWarn bool
	}{
		{name: "IPv6 with a port", refusal: models.Refusal{URL: "http://[fd00::5]:8443/x", Code: "forbidden", Reason: "internal_address",
			RemedyKind: "add_entry", RemedyValue: "[fd00::5]:8443"}, entry: "[fd00::5]:8443", modeWarn: true},
		{name: "default port is left out", refusal: models.Refusal{URL: "https://wiki.example.com/page", Code: "forbidden", Reason: "internal_address",
			RemedyKind: "add_entry", RemedyValue: "wiki.example.com"}, entry: "wiki.example.com", modeWarn: true},
		{name: "metadata by name", refusal: models.Refusal{URL: "http://metadata.google.internal/computeMetadata/v1/", Code: "forbidden", Reason: "metadata"},
			why: "metadata endpoint"},
		{name: "metadata address", refusal: models.Refusal{URL: "http://169.254.169.254/latest/", Code: "forbidden", Reason: "metadata"},
			why: "metadata endpoint"},
		{name: "special-purpose range", refusal: models.Refusal{URL: "http://192.0.2.7/", Code: "forbidden", Reason: "internal_address",
			Fix: "Nothing unlocks this range; use a public address."}, why: "Nothing unlocks this range"},
		// A row migrated from before remedies were typed may name an entry
		// that no longer helps: the preview decides again and says so.
		{name: "name resolving into a special-purpose range", refusal: models.Refusal{URL: "http://docs.example.com/", Code: "forbidden", Reason: "internal_address",
			RemedyKind: "add_entry", RemedyValue: "docs.example.com"}, why: "would not help"},
		{name: "invalid URL", refusal: models.Refusal{URL: "ftp://files.example.com/", Code: "invalid", Reason: "scheme"},
			why: "invalid"},
		{name: "too large", refusal: models.Refusal{URL: "https://big.example.com/", Code: "too_large", Reason: "streamed_size",
			RemedyKind: "change_setting", RemedyValue: "max_bytes", Fix: "Raise Settings → Max bytes (max_bytes) if pages this large should be read."},
			why: "refused by the max_bytes setting, not for its host, so an entry changes nothing. Raise Settings → Max bytes"},
		{name: "timeout", refusal: models.Refusal{URL: "https://slow.example.com/", Code: "timeout", Reason: "timeout",
			RemedyKind: "change_setting", RemedyValue: "timeout", Fix: "Try again later, or raise Settings → Timeout (timeout)."}, why: "Settings → Timeout"},
		// An entry the remedy names is offered only when it is the fix: a
		// not-allowlisted refusal whose host is reachable by now needs none.
		{name: "allowed by now", refusal: models.Refusal{URL: "https://public.example.com/", Code: "forbidden", Reason: "not_allowlisted",
			RemedyKind: "add_entry", RemedyValue: "public.example.com"}, why: "allowed now"},
		{name: "forbidden without a remedy", refusal: models.Refusal{URL: "https://wiki.example.com/", Code: "forbidden", Reason: "internal_address",
			Fix: "A host name never reaches a link-local address."}, why: "No allowlist entry makes this request work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.resolver.Answer("wiki.example.com", "10.9.9.9")
			h.resolver.Answer("docs.example.com", "192.0.2.9")
			h.resolver.Answer("public.example.com", "93.184.216.34")
			ada := h.signedIn("ada", models.RoleAdmin)
			id := refusal(t, h, tt.refusal)
			p := ada.get("/integrations/allow?refusal=" + strconv.FormatInt(id, 10))
			if p.status != http.StatusOK {
				t.Fatalf("status %d", p.status)
			}
			form := p.doc.Find(`form[data-testid="allow-form"]`)
			if tt.entry == "" {
				if form.Length() != 0 {
					t.Error("a form is offered for a refusal no entry can fix")
				}
				if got := p.doc.Find(`[data-testid="allow-unfixable"]`).Text(); !strings.Contains(got, tt.why) {
					t.Errorf("why = %q, want it to contain %q", got, tt.why)
				}
				return
			}
			if got := form.Find("textarea").Text(); got != tt.entry {
				t.Errorf("entry = %q, want %q", got, tt.entry)
			}
			if got := p.doc.Find(`[data-testid="allow-mode-change"]`).Length() == 1; got != tt.modeWarn {
				t.Errorf("PUBLIC WEB ending warning shown = %v, want %v", got, tt.modeWarn)
			}
		})
	}
}

func TestAllowThisHostUnknownRefusal(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	for q, want := range map[string]int{"refusal=99": http.StatusNotFound, "refusal=abc": http.StatusBadRequest, "": http.StatusBadRequest} {
		p := ada.get("/integrations/allow?" + q)
		if p.status != want {
			t.Errorf("%q: status %d, want %d", q, p.status, want)
		}
		if p.doc.Find(`form[data-testid="allow-form"] textarea`).Text() != "" {
			t.Errorf("%q: something was prefilled", q)
		}
	}
}
