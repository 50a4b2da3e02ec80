package tools

import "github.com/outboundhq/outbound/guard"

// BuildPolicy turns the stored configuration (allowlist rules: entry
// texts with their scopes and flags, and setting values) into the guard's
// policy and the tools' settings. Every process that runs the guard
// builds its policy here, so they all read the store the same way. A bad
// entry is a *guard.EntryError, a bad setting a *SettingError; callers
// add where to fix it.
func BuildPolicy(stored []guard.StoredRule, values map[string]string) (*guard.Policy, Settings, error) {
	rules, err := guard.ParseStoredRules(stored)
	if err != nil {
		return nil, Settings{}, err
	}
	s, err := ParseSettings(values)
	if err != nil {
		return nil, Settings{}, err
	}
	p, err := guard.NewPolicyRules(rules, s.Guard)
	if err != nil {
		return nil, Settings{}, err
	}
	return p, s, nil
}
