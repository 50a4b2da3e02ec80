package guard

// Wording is how a refusal's Fix names the places an admin changes. The
// guard is a library: by default it speaks of "the allowlist" and "the
// timeout setting"; a product passes its own words (its menu paths) in
// Options.Wording, so a fix leads straight to the right control without
// the guard knowing any product's screens.
type Wording struct {
	// Allowlist is where entries are added, as the phrase that follows
	// "add ENTRY" in a sentence: "to the allowlist" by default, or e.g.
	// "under Integrations → Outbound web access".
	Allowlist string
	// Setting names the control of a settings key (timeout, max_bytes,
	// redirects, ports) as a noun phrase that follows "raise" or "in":
	// "the timeout setting" by default.
	Setting func(key string) string
}

// Settings keys a refusal's remedy may name.
const (
	SettingTimeout   = "timeout"
	SettingMaxBytes  = "max_bytes"
	SettingRedirects = "redirects"
	SettingPorts     = "ports"
)

// allowlist is the allowlist phrase, neutral when unset.
func (w Wording) allowlist() string {
	if w.Allowlist == "" {
		return "to the allowlist"
	}
	return w.Allowlist
}

// setting is the phrase for key, neutral when unset.
func (w Wording) setting(key string) string {
	if w.Setting != nil {
		if s := w.Setting(key); s != "" {
			return s
		}
	}
	return "the " + key + " setting"
}

// AllowlistPhrase is where entries are added, as w says it ("to the
// allowlist" by default): for callers that build refusals of their own on
// top of the guard, so their fixes name the same controls.
func (w Wording) AllowlistPhrase() string { return w.allowlist() }

// SettingPhrase names the control of a settings key as w says it ("the
// KEY setting" by default), for the same callers.
func (w Wording) SettingPhrase(key string) string { return w.setting(key) }

// raise is the common fix for a limit that stopped a request.
func (w Wording) raise(key string) string { return "raise " + w.setting(key) }

// WithWording returns a copy of p whose refusals name the admin's
// controls with w. A Guard applies its Options.Wording to every policy it
// is given; a caller deciding with a policy of its own (a preview) uses
// this to speak the same way. Policies are immutable once built, so the
// copy shares the allowlist and p itself is left as it is.
func (p *Policy) WithWording(w Wording) *Policy {
	c := *p
	c.wording = w
	return &c
}
