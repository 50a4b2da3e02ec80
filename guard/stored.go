package guard

// ParseStoredEntries parses allowlist entries as a store keeps them: each
// text was normalised by ParseEntry when it was saved. A text that no
// longer parses means the store was edited by hand or by another version;
// the error is the *EntryError of the first such text.
func ParseStoredEntries(texts []string) ([]Entry, error) {
	out := make([]Entry, len(texts))
	for i, text := range texts {
		e, err := ParseEntry(text)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// StoredRule is a Rule as a store keeps it: the entry's normalised text,
// its scope's lists and its flags.
type StoredRule struct {
	Entry      string
	Agents     []string
	Tools      []string
	Internal   bool
	ReportOnly bool
}

// ParseStoredRules parses rules as a store keeps them; a text that no
// longer parses is the *EntryError of the first such text, as for
// ParseStoredEntries.
func ParseStoredRules(stored []StoredRule) ([]Rule, error) {
	out := make([]Rule, len(stored))
	for i, s := range stored {
		e, err := ParseEntry(s.Entry)
		if err != nil {
			return nil, err
		}
		out[i] = Rule{Entry: e, Scope: Scope{Agents: s.Agents, Tools: s.Tools}.Normalized(), Internal: s.Internal, ReportOnly: s.ReportOnly}
	}
	return out, nil
}
