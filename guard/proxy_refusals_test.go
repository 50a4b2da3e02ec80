package guard

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestCallCredentialHandsBackTheProxysRefusal: the refusal a call's
// credential reads back is the very value the proxy recorded, remedy,
// entry and addresses included, found by the URL the client asked for
// (and, for https, by the CONNECT of its host). Another credential, or the
// process's, never sees it.
func TestCallCredentialHandsBackTheProxysRefusal(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "www.example.com"),
		newResolver("www.example.com", []string{"93.184.216.34"}))
	call := Caller{Tool: "screenshot", Agent: "helpdesk-bot", Thread: "ticket-42"}
	cred := f.proxy.Credential(call)
	defer cred.Revoke()
	other := f.proxy.Credential(Caller{Tool: "screenshot", Agent: "other"})
	defer other.Revoke()

	lastRecorded := func(t *testing.T) *Refusal {
		t.Helper()
		ev := f.reports.Events()
		if len(ev) == 0 {
			t.Fatal("nothing recorded")
		}
		return ev[len(ev)-1].Refusal
	}
	get := func(t *testing.T, user, pass, target string, status int) {
		t.Helper()
		resp, err := f.client(t, user, pass, nil).Get(target)
		if err != nil {
			t.Fatal(err)
		}
		if readBody(t, resp); resp.StatusCode != status {
			t.Fatalf("GET %s: %d, want %d", target, resp.StatusCode, status)
		}
	}

	// Allowed by its entry, but nothing answers: a network failure that
	// deciding the URL again could never reproduce.
	down := "http://www.example.com/status"
	get(t, cred.Username, cred.Password, down, http.StatusBadGateway)
	got := cred.Refusal(down)
	if got == nil {
		t.Fatal("the credential hands back no refusal of the failed request")
	}
	first := got // recorded when the call ends, see below
	if got.KindOf() != KindNetwork || got.Reason != ReasonConnect || got.Entry != "www.example.com" ||
		!slices.Equal(got.Addresses, []netip.Addr{netip.MustParseAddr("93.184.216.34")}) || got.Tool != "screenshot" || got.Agent != "helpdesk-bot" {
		t.Fatalf("the connect failure lost its facts: %+v", got)
	}

	internal := "http://10.0.0.7:8080/admin"
	get(t, cred.Username, cred.Password, internal, http.StatusForbidden)
	got = cred.Refusal(internal)
	if got == nil || got != lastRecorded(t) || got.Remedy != AddEntry("10.0.0.7:8080") || got.Port != 8080 {
		t.Fatalf("internal address: %+v, want the recorded refusal with its remedy", got)
	}

	resp, _, _ := rawRequest(t, f.proxy.Addr(), "CONNECT 10.0.0.8:443", basic(cred.Username, cred.Password))
	if readBody(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	tunnel := lastRecorded(t)
	for _, u := range []string{"https://10.0.0.8/login?next=/", "https://10.0.0.8:443/"} {
		if got := cred.Refusal(u); got != tunnel {
			t.Fatalf("%s: %+v, want the refused CONNECT's value %+v", u, got, tunnel)
		}
	}
	if got := cred.Refusal("https://10.0.0.8:8443/"); got != nil {
		t.Fatalf("another port found the CONNECT's refusal: %+v", got)
	}

	// The process credential's refusals and another call's are not this
	// call's; nor is a URL the proxy never refused.
	processOnly := "http://169.254.169.254/latest/meta-data/"
	get(t, f.user, f.pass, processOnly, http.StatusForbidden)
	get(t, other.Username, other.Password, "http://10.0.0.9/", http.StatusForbidden)
	for _, u := range []string{processOnly, "http://10.0.0.9/", "http://www.example.com/other"} {
		if got := cred.Refusal(u); got != nil {
			t.Fatalf("%s: the call's credential hands back a refusal it never met: %+v", u, got)
		}
	}
	for _, u := range []string{down, internal} {
		if got := other.Refusal(u); got != nil {
			t.Fatalf("%s: another call's credential sees this call's refusal: %+v", u, got)
		}
	}
	if got := other.Refusal("http://10.0.0.9/"); got == nil || got.Agent != "other" {
		t.Fatalf("the other call's own refusal: %+v", got)
	}
	// Revoking keeps what was met readable, and records the call's first
	// refusal, the value the call read, as the call's one row.
	cred.Revoke()
	if cred.Refusal(internal) == nil {
		t.Fatal("revoking forgot the call's refusals")
	}
	ev := f.reports.Events()
	if held := ev[len(ev)-1]; held.Refusal != first || held.Burst || held.Caller != call ||
		held.Note != "The same call was refused 3 requests in all, on 3 hosts (www.example.com, 10.0.0.7, 10.0.0.8); this row stands for them all, and the decision log has a line for each." {
		t.Fatalf("the call's held record is %+v, want the first refusal %+v with a note", held, first)
	}
}

// TestRefusalBookKeepsTheLatest: a page that is refused over and over
// keeps at most refusalsKept refusals per credential, the latest.
func TestRefusalBookKeepsTheLatest(t *testing.T) {
	b := newRefusalBook()
	target := func(i int) string { return fmt.Sprintf("http://10.0.0.1/img/%d.png", i) }
	for i := range refusalsKept + 10 {
		b.put(target(i), &Refusal{URL: target(i)})
	}
	again := &Refusal{URL: target(10)}
	b.put(target(10), again) // refused again: now the latest
	b.put(target(refusalsKept+10), &Refusal{})
	if b.get(target(0)) != nil || b.get(target(11)) != nil {
		t.Fatal("the oldest refusals were kept past the bound")
	}
	if b.get(target(10)) != again || b.get(target(refusalsKept+9)) == nil {
		t.Fatal("the latest refusals were dropped")
	}
	if len(b.byKey) != refusalsKept || len(b.order) != refusalsKept {
		t.Fatalf("kept %d (%d in order), want %d", len(b.byKey), len(b.order), refusalsKept)
	}
}

// TestOneCallsRefusalsAreOneRow: a page that asks for hundreds of refused
// resources makes a Record for each (every one counted and logged), but
// only the call's first is unmarked: it is held until the call ends and
// then notes how many were refused, on which hosts. The rest are Burst.
func TestOneCallsRefusalsAreOneRow(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "www.example.com"), nil)
	call := Caller{Tool: "screenshot", Agent: "helpdesk-bot"}
	cred := f.proxy.Credential(call)
	const requests = 200
	client := f.client(t, cred.Username, cred.Password, nil)
	for i := range requests {
		resp, err := client.Get(fmt.Sprintf("http://10.0.%d.1/img/%d.png", i%3, i))
		if err != nil {
			t.Fatal(err)
		}
		if readBody(t, resp); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	ev := f.reports.Events()
	if len(ev) != requests-1 || slices.ContainsFunc(ev, func(r Record) bool { return !r.Burst }) {
		t.Fatalf("while the call runs: %d records, want %d, all Burst", len(ev), requests-1)
	}
	if got := cred.Refused(); got.Count != requests || !slices.Equal(got.Hosts, []string{"10.0.0.1", "10.0.1.1", "10.0.2.1"}) || got.MoreHosts != 0 {
		t.Fatalf("Refused() = %+v", got)
	}
	cred.Revoke()
	ev = f.reports.Events()
	if len(ev) != requests {
		t.Fatalf("%d records for %d refused requests, want one each", len(ev), requests)
	}
	var rows []Record
	for _, r := range ev {
		if !r.Burst {
			rows = append(rows, r)
		}
	}
	if len(rows) != 1 || rows[0].Refusal.URL != "http://10.0.0.1/img/0.png" || rows[0].Caller != call ||
		!strings.Contains(rows[0].Note, "refused 200 requests in all, on 3 hosts (10.0.0.1, 10.0.1.1, 10.0.2.1)") {
		t.Fatalf("unmarked records: %+v", rows)
	}
	if d := f.dialer.Dials(); len(d) != 0 {
		t.Fatalf("dialled %v", d)
	}
}

// TestCallRefusalsNote: the note names at most callHostsShown hosts and
// counts the rest, including those past the kept bound; a refusal met
// after the call ended, with none before, is recorded at once and unmarked.
func TestCallRefusalsNote(t *testing.T) {
	b := newRefusalBook()
	for i := range callHostsKept + 5 {
		host := fmt.Sprintf("10.0.0.%d", i)
		if _, now := b.admit(Record{Host: host, Refusal: &Refusal{}}); now != (i > 0) {
			t.Fatalf("refusal %d recorded now=%v", i, now)
		}
	}
	rec, ok := b.end()
	want := fmt.Sprintf("The same call was refused %d requests in all, on %d hosts (10.0.0.0, 10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4, 10.0.0.5, 10.0.0.6, 10.0.0.7, 10.0.0.8, 10.0.0.9 and %d more);",
		callHostsKept+5, callHostsKept+5, callHostsKept+5-callHostsShown)
	if !ok || rec.Host != "10.0.0.0" || !strings.HasPrefix(rec.Note, want) {
		t.Fatalf("held %v %+v\nwant the note %q", ok, rec, want)
	}
	if _, again := b.end(); again {
		t.Fatal("the held record was handed out twice")
	}
	late := newRefusalBook()
	late.end()
	if rec, now := late.admit(Record{Host: "10.0.0.1", Refusal: &Refusal{}}); !now || rec.Burst || rec.Note != "" {
		t.Fatalf("a lone refusal after the call ended: now=%v %+v", now, rec)
	}
}
