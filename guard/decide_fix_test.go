package guard

import (
	"context"
	"strings"
	"testing"
)

func TestFixesAreEntriesThatWork(t *testing.T) {
	r := newResolver("printer.example.com", []string{"169.254.10.10"})
	p := mustPolicy(t, DefaultSettings())
	d := p.Decide(context.Background(), r, "http://printer.example.com/")
	if d.Allowed || !strings.Contains(d.Fix, "A host name never reaches a link-local address") || !strings.Contains(d.Fix, "169.254.10.10") {
		t.Fatalf("link-local by name: %q", d.Fix)
	}
	d = p.Decide(context.Background(), r, "http://[::ffff:127.0.0.1]:8080/")
	if d.Allowed || !strings.Contains(d.Fix, "add 127.0.0.1:8080 as an internal host") {
		t.Fatalf("a mapped address must be suggested in IPv4 form: %q", d.Fix)
	}
	if _, err := ParseEntry("127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
}

func TestEntryLengthAndRangeMessages(t *testing.T) {
	// 255 characters: past the 253 a name may have, but under the early
	// check on the whole entry's length.
	long := strings.Repeat("a", 62) + "." + strings.Repeat("b", 62) + "." + strings.Repeat("c", 62) + "." + strings.Repeat("d", 62) + ".abc"
	tests := []struct{ in, problem string }{
		{long, "characters long, over the 253"},
		{long + ":8080", "characters long, over the 253"},
		{"10.0.0.0/8", "is an address range"},
		{"[fd00::/8]", "is an address range"},
	}
	for _, tt := range tests {
		_, err := ParseEntry(tt.in)
		ee, ok := err.(*EntryError)
		if !ok || !strings.Contains(ee.Problem, tt.problem) {
			t.Errorf("ParseEntry(%d chars %.20q…) = %v, want %q", len(tt.in), tt.in, err, tt.problem)
		}
	}
}
