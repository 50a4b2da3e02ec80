package tools

import "github.com/outboundhq/outbound/guard"

// BuildPolicy turns the stored configuration (allowlist entry texts and
// setting values) into the guard's policy and the tools' settings. Every
// process that runs the guard builds its policy here, so they all read
// the store the same way. A bad entry is a *guard.EntryError, a bad
// setting a *SettingError; callers add where to fix it.
func BuildPolicy(entryTexts []string, values map[string]string) (*guard.Policy, Settings, error) {
	entries, err := guard.ParseStoredEntries(entryTexts)
	if err != nil {
		return nil, Settings{}, err
	}
	s, err := ParseSettings(values)
	if err != nil {
		return nil, Settings{}, err
	}
	p, err := guard.NewPolicy(entries, s.Guard)
	if err != nil {
		return nil, Settings{}, err
	}
	return p, s, nil
}
