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
