package guard

import (
	"encoding/json"
	"net/netip"
	"net/url"
)

// Decision is the guard's verdict on one URL: whether it may be fetched,
// and if not, a code, a reason, one sentence for the agent and a fix for
// the admin. It is one record per request in the sense of Smokescreen: the
// same value feeds the tool answer, the refusal log, the CLI and the API.
type Decision struct {
	// Input is the URL as it was given.
	Input string
	// URL is the parsed URL with its host normalised; nil when the input
	// could not be parsed.
	URL *url.URL
	// Host is the normalised host: a punycode DNS name or an IP address.
	Host string
	// Port is the port that would be dialled.
	Port uint16

	Allowed bool
	Code    Code
	Reason  Reason
	Message string
	Fix     string
	// Remedy is Fix as data; Kind tells a network failure (a name that
	// did not resolve in time) from a refusal of the policy.
	Remedy Remedy
	Kind   Kind
	// Range names the address range that refused the request, if any.
	Range string
	// Entry is the allowlist entry that admitted (or was considered for)
	// the host; zero under PUBLIC WEB.
	Entry Entry
	// WouldRefuse is set on an allowed decision that the caller's
	// report-only rules would have refused: what enforcing them would do.
	WouldRefuse *Refusal

	narrow   bool         // the caller's scope is in allowlist mode
	literal  netip.Addr   // the host, when it is an IP literal
	resolved []netip.Addr // the resolver's answers, unmapped
}

// Addresses returns the addresses the host stands for: the literal, or
// every answer of the resolver. It is empty when the decision was made
// before resolution (an invalid URL, a refused name).
func (d *Decision) Addresses() []netip.Addr {
	if d.resolved != nil {
		return d.resolved
	}
	if d.literal.IsValid() {
		return []netip.Addr{d.literal}
	}
	return nil
}

// Refusal returns the decision as a *Refusal, or nil when it is allowed.
func (d *Decision) Refusal() *Refusal {
	if d.Allowed {
		return nil
	}
	r := &Refusal{
		Code: d.Code, Reason: d.Reason, Message: d.Message, Fix: d.Fix, Remedy: d.Remedy, Kind: d.Kind,
		URL: d.urlString(), Host: d.Host, Port: d.Port, Entry: d.Entry.String(),
		Addresses: d.Addresses(), Range: d.Range,
	}
	// The only unreachable and timeout outcomes a decision has are a name
	// that did not resolve and a lookup that took too long: the network's
	// failures, not the policy's refusals.
	if d.Code == CodeUnreachable || d.Code == CodeTimeout {
		r.Kind = KindNetwork
	}
	return r
}

func (d *Decision) urlString() string {
	if d.URL != nil {
		return d.URL.String()
	}
	return d.Input
}

// decisionJSON is the stable JSON form used by `console check --json` and
// the API.
type decisionJSON struct {
	URL       string       `json:"url"`
	Allowed   bool         `json:"allowed"`
	Code      Code         `json:"code,omitempty"`
	Reason    Reason       `json:"reason,omitempty"`
	Message   string       `json:"message,omitempty"`
	Fix       string       `json:"fix,omitempty"`
	Remedy    Remedy       `json:"remedy,omitzero"`
	Kind      Kind         `json:"kind,omitempty"`
	Range     string       `json:"range,omitempty"`
	Entry     string       `json:"entry,omitempty"`
	Addresses []netip.Addr `json:"addresses"`
	// WouldRefuse is what the caller's report-only entries would refuse.
	WouldRefuse *Refusal `json:"would_refuse,omitempty"`
}

// MarshalJSON prints {"url","allowed","code","reason","message","fix","remedy","kind","range","entry","addresses"}.
func (d Decision) MarshalJSON() ([]byte, error) {
	addrs := d.Addresses()
	if addrs == nil {
		addrs = []netip.Addr{}
	}
	return json.Marshal(decisionJSON{
		URL: d.urlString(), Allowed: d.Allowed, Code: d.Code, Reason: d.Reason,
		Message: d.Message, Fix: d.Fix, Remedy: d.Remedy, Kind: d.Kind, Range: d.Range, Entry: d.Entry.String(), Addresses: addrs,
		WouldRefuse: d.WouldRefuse,
	})
}
