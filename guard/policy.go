package guard

// Policy is one immutable snapshot of what may be reached: the allowlist
// and the settings. The Guard swaps whole snapshots atomically, so a
// decision never sees half of a reload and the request path takes no lock.
type Policy struct {
	list     *Allowlist
	settings Settings
	// wording names the admin's controls in refusals' fixes.
	wording Wording
}

// NewPolicy validates the settings and builds the allowlist.
func NewPolicy(entries []Entry, s Settings) (*Policy, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	list, err := NewAllowlist(entries)
	if err != nil {
		return nil, err
	}
	s.ExtraPorts = append([]uint16(nil), s.ExtraPorts...)
	return &Policy{list: list, settings: s}, nil
}

// Allowlist returns the policy's allowlist.
func (p *Policy) Allowlist() *Allowlist { return p.list }

// Settings returns a copy of the policy's settings.
func (p *Policy) Settings() Settings {
	s := p.settings
	s.ExtraPorts = append([]uint16(nil), s.ExtraPorts...)
	return s
}

// PublicWeb reports whether the allowlist is empty, so that any public
// host on an open port may be reached.
func (p *Policy) PublicWeb() bool { return p.list.Len() == 0 }
