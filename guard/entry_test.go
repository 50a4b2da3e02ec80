package guard

import (
	"errors"
	"strings"
	"testing"
)

func TestParseEntryNormalises(t *testing.T) {
	tests := []struct{ in, want string }{
		{"status.example.com", "status.example.com"},
		{"Status.Example.COM", "status.example.com"},
		{"status.example.com.", "status.example.com"},
		{"*.docs.example.com", "*.docs.example.com"},
		{"intranet.corp:8080", "intranet.corp:8080"},
		{"10.1.2.3", "10.1.2.3"},
		{"10.1.2.3:8443", "10.1.2.3:8443"},
		{"[fd00::5]:8443", "[fd00::5]:8443"},
		{"[FD00:0::5]", "fd00::5"},
		{"fd00::5", "fd00::5"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"*.Bücher.example", "*.xn--bcher-kva.example"},
		{"localhost:5000", "localhost:5000"},
		{"wiki.internal", "wiki.internal"},
		{"169.254.169.254", "169.254.169.254"},
		{"8.8.8.8", "8.8.8.8"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseEntry(tt.in)
			if err != nil {
				t.Fatalf("ParseEntry(%q): %v", tt.in, err)
			}
			if got := e.String(); got != tt.want {
				t.Fatalf("ParseEntry(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := ParseEntry(e.String())
			if err != nil || again != e {
				t.Fatalf("round trip of %q: %v, %v", e, again, err)
			}
		})
	}
}

// TestParseEntryErrors checks every allowlist error: the problem it names
// and the fix it offers.
func TestParseEntryErrors(t *testing.T) {
	tests := []struct {
		name, in, problem, fix string
	}{
		{"empty", "", "the entry is empty", "type a host such as status.example.com"},
		{"too long", strings.Repeat("a", 300) + ".com", "characters long, over the 253", "shorten it"},
		{"space inside", "status example.com", "contains whitespace", "without spaces"},
		{"tab", "status.example.com\t", "contains whitespace", "one host per line"},
		{"scheme", "https://status.example.com/", "has a scheme", `"status.example.com"`},
		{"path", "status.example.com/health", "has a path", `"status.example.com"`},
		{"query", "status.example.com?x=1", "has a path", "per host"},
		{"user", "admin@status.example.com", "has a user name", "without user@"},
		{"bare star", "*", "a bare * would allow every host", "leave the list empty for PUBLIC WEB"},
		{"star dot", "*.", "a bare * would allow every host", "*.example.com"},
		{"star inside", "status.*.example.com", "a * may only stand at the start", "*.example.com"},
		{"star suffix", "status*", "a * may only stand at the start", "*.example.com"},
		{"public suffix com", "*.com", "covers a public suffix", "*.docs.example.com"},
		{"public suffix co.uk", "*.co.uk", "*.co.uk covers a public suffix", "name a domain you control"},
		{"public suffix github.io", "*.github.io", "covers a public suffix", "name a domain you control"},
		{"wildcard internal", "*.corp.internal", "covers internal names", "wiki.corp.internal"},
		{"wildcard ip", "*.10.1.2.3", "a wildcard cannot cover an IP address", "write the address alone"},
		{"port zero", "intranet.corp:0", "outside 1–65535", "from 1 to 65535"},
		{"port high", "intranet.corp:65536", "the port 65536 is outside 1–65535", "leave it out"},
		{"port text", "intranet.corp:http", `the port "http" is not a number`, "intranet.corp:8080"},
		{"port empty", "intranet.corp:", "is not a number", "from 1 to 65535"},
		{"port sign", "intranet.corp:+80", "is not a number", "from 1 to 65535"},
		{"no host", ":8080", "has no host", "status.example.com"},
		{"bad name", "exa_mple.com", "is not a valid host name", "letters, digits, hyphens"},
		{"hyphen edge", "-example.com", "is not a valid host name", "letters, digits"},
		{"numeric decimal", "2130706433", "non-standard form", "four decimal numbers"},
		{"numeric octal", "0177.0.0.1", "non-standard form", "10.1.2.3"},
		{"numeric short", "127.1", "non-standard form", "10.1.2.3"},
		{"numeric hex", "0x7f000001", "non-standard form", "10.1.2.3"},
		{"unclosed bracket", "[fd00::5", "is not closed", "[fd00::5]:8443"},
		{"brackets v4", "[10.1.2.3]:80", "brackets are only for IPv6", "[fd00::5]:8443"},
		{"after bracket", "[fd00::5]x", "unexpected text after ]", "[fd00::5]:8443"},
		{"zone", "[fe80::1%eth0]", "has a zone", "without its zone"},
		{"mapped", "::ffff:10.1.2.3", "IPv4-mapped", "10.1.2.3"},
		{"documentation", "192.0.2.1", "documentation range 192.0.2.0/24 (TEST-NET-1), which is never reachable", "remove it"},
		{"multicast", "224.0.0.1", "multicast range", "remove it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseEntry(tt.in)
			var ee *EntryError
			if !errors.As(err, &ee) {
				t.Fatalf("ParseEntry(%q) = %v, want an *EntryError", tt.in, err)
			}
			if ee.Input != tt.in {
				t.Errorf("Input = %q, want %q", ee.Input, tt.in)
			}
			if !strings.Contains(ee.Problem, tt.problem) {
				t.Errorf("Problem = %q, want it to contain %q", ee.Problem, tt.problem)
			}
			if !strings.Contains(ee.Fix, tt.fix) {
				t.Errorf("Fix = %q, want it to contain %q", ee.Fix, tt.fix)
			}
			if !strings.Contains(err.Error(), ee.Problem) || !strings.Contains(err.Error(), ee.Fix) {
				t.Errorf("Error() = %q does not carry problem and fix", err)
			}
		})
	}
}

func TestParseEntriesReportsEveryBadLineAndSavesNothing(t *testing.T) {
	existing := []Entry{mustEntry(t, "status.example.com")}
	text := "ok.example.com\n\n  https://x/ \n*.com\nok.example.com\r\nstatus.example.com\nfine.example.com"
	got, errs := ParseEntries(text, existing)
	if got != nil {
		t.Fatalf("entries returned despite errors: %v", got)
	}
	want := map[int]string{3: "has a scheme", 4: "public suffix", 5: "listed twice", 6: "already on the list"}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(want), errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Problem, want[e.Line]) {
			t.Errorf("line %d: %q, want %q", e.Line, e.Problem, want[e.Line])
		}
		if !strings.HasPrefix(e.Error(), "line ") {
			t.Errorf("line error should name its line: %q", e.Error())
		}
	}
	good, errs := ParseEntries(" a.example.com \n\n*.b.example.com\n", existing)
	if len(errs) != 0 || len(good) != 2 || good[0].String() != "a.example.com" || good[1].String() != "*.b.example.com" {
		t.Fatalf("ParseEntries(valid) = %v, %v", good, errs)
	}
}

func TestNewAllowlistRefusesDuplicates(t *testing.T) {
	e := mustEntry(t, "a.example.com")
	_, err := NewAllowlist([]Entry{e, mustEntry(t, "b.example.com"), e})
	var ee *EntryError
	if !errors.As(err, &ee) || !strings.Contains(ee.Problem, "listed twice") || ee.Input != "a.example.com" {
		t.Fatalf("NewAllowlist with a duplicate: %v", err)
	}
}

func mustEntry(t testing.TB, s string) Entry {
	t.Helper()
	e, err := ParseEntry(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParseStoredEntries(t *testing.T) {
	got, err := ParseStoredEntries([]string{"status.example.com", "intranet.corp:8080"})
	if err != nil || len(got) != 2 || got[1].String() != "intranet.corp:8080" {
		t.Fatalf("ParseStoredEntries = %v, %v", got, err)
	}
	_, err = ParseStoredEntries([]string{"ok.example.com", "https://hand-edited.example/"})
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Input != "https://hand-edited.example/" {
		t.Fatalf("a bad stored text must come back as its *EntryError: %v", err)
	}
}
