package guard

import "testing"

// TestWordingPhrasesForCallers: a tool on top of the guard words its own
// fixes with the guard's wording: the product's when given, neutral when
// not.
func TestWordingPhrasesForCallers(t *testing.T) {
	product := Wording{Allowlist: "under Integrations → Outbound web access", Setting: func(key string) string {
		if key == "reads_per_turn" {
			return "Settings → Reads per turn (reads_per_turn)"
		}
		return ""
	}}
	g := New(Options{Wording: product})
	defer g.Close()
	w := g.Wording()
	if got := w.AllowlistPhrase(); got != product.Allowlist {
		t.Errorf("AllowlistPhrase() = %q, want the product's", got)
	}
	if got := w.SettingPhrase("reads_per_turn"); got != "Settings → Reads per turn (reads_per_turn)" {
		t.Errorf("SettingPhrase(reads_per_turn) = %q", got)
	}
	if got := w.SettingPhrase("page_chars"); got != "the page_chars setting" {
		t.Errorf("a key the product does not name: %q, want the neutral phrase", got)
	}
	neutral := New(Options{})
	defer neutral.Close()
	if got := neutral.Wording().AllowlistPhrase(); got != "to the allowlist" {
		t.Errorf("neutral AllowlistPhrase() = %q", got)
	}
}
