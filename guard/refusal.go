package guard

import (
	"errors"
	"net/netip"
	"slices"
)

// Code is the coarse class of a refusal. Agents, the refusal log, the CLI
// and the API all show the same code, so it is a closed set.
type Code string

const (
	CodeInvalid     Code = "invalid"     // the URL or input is malformed
	CodeForbidden   Code = "forbidden"   // the policy refuses the target
	CodeUnreachable Code = "unreachable" // the target could not be resolved or reached
	CodeTooLarge    Code = "too_large"   // a size or hop limit was exceeded
	CodeTimeout     Code = "timeout"     // the target did not answer in time
	CodeUnsupported Code = "unsupported" // the content cannot be read by the tool
	CodeTooMany     Code = "too_many"    // a per-turn budget is spent
)

// Codes lists every code, for filters and documentation.
var Codes = []Code{CodeInvalid, CodeForbidden, CodeUnreachable, CodeTooLarge, CodeTimeout, CodeUnsupported, CodeTooMany}

// Reason is the finer cause within a code, stable enough to filter on.
// The guard's own reasons are below; a product that builds tools on the
// guard defines its tools' reasons itself, as values of this type.
type Reason string

const (
	ReasonBadURL          Reason = "bad_url"           // not parseable as a URL
	ReasonScheme          Reason = "scheme"            // not http or https
	ReasonCredentials     Reason = "credentials"       // user:password@ in the URL
	ReasonEmptyHost       Reason = "empty_host"        // no host
	ReasonBadHost         Reason = "bad_host"          // not an IP literal or a valid DNS name
	ReasonNumericHost     Reason = "numeric_host"      // a non-canonical numeric IPv4 form
	ReasonZone            Reason = "zone"              // an IPv6 literal with a zone
	ReasonBadPort         Reason = "bad_port"          // not a number from 1 to 65535
	ReasonPort            Reason = "port"              // a port the policy does not open
	ReasonNotAllowlisted  Reason = "not_allowlisted"   // the allowlist does not name the host
	ReasonInternalName    Reason = "internal_name"     // localhost, *.internal, single labels…
	ReasonMetadata        Reason = "metadata"          // a cloud metadata endpoint
	ReasonInternalAddress Reason = "internal_address"  // resolves to a non-public address
	ReasonDNS             Reason = "dns"               // the name did not resolve
	ReasonConnect         Reason = "connect"           // the connection failed
	ReasonConnectCheck    Reason = "connect_check"     // the connect-time address check refused
	ReasonRedirects       Reason = "redirects"         // more redirect hops than allowed
	ReasonBadRedirect     Reason = "bad_redirect"      // a redirect without a usable Location
	ReasonTimeout         Reason = "timeout"           // the overall deadline passed
	ReasonDeclaredSize    Reason = "declared_size"     // Content-Length over max_bytes
	ReasonStreamedSize    Reason = "streamed_size"     // the body grew past max_bytes
	ReasonProxyAuth       Reason = "proxy_auth"        // the proxy credential is missing or wrong
	ReasonCrossOriginBody Reason = "cross_origin_body" // a 307/308 would carry a body to another origin
	ReasonTunnelName      Reason = "tunnel_name"       // a CONNECT tunnel's TLS server_name or HTTP Host is not its host
)

// Reasons lists every reason the guard itself gives, for filters,
// documentation and the test that keeps the user guide complete.
var Reasons = []Reason{
	ReasonBadURL, ReasonScheme, ReasonCredentials, ReasonEmptyHost, ReasonBadHost, ReasonNumericHost, ReasonZone,
	ReasonBadPort, ReasonPort, ReasonNotAllowlisted, ReasonInternalName, ReasonMetadata, ReasonInternalAddress,
	ReasonDNS, ReasonConnect, ReasonConnectCheck, ReasonRedirects, ReasonBadRedirect, ReasonTimeout,
	ReasonDeclaredSize, ReasonStreamedSize, ReasonProxyAuth, ReasonCrossOriginBody, ReasonTunnelName,
}

// Kind keeps what the policy refused apart from what the network failed to
// do. A policy refusal is the guard (or a tool's limit) saying no; a network
// failure is a name that did not resolve, a connection that failed, a
// target or browser that did not answer. The log, its filters and the
// metrics count them apart, so an outage never reads as an attack.
type Kind string

const (
	KindPolicy  Kind = "policy"
	KindNetwork Kind = "network"
)

// Kinds lists every kind, for filters and documentation.
var Kinds = []Kind{KindPolicy, KindNetwork}

// RemedyKind says what, if anything, an admin can change so that the
// same request would pass.
type RemedyKind string

const (
	// RemedyNone: nothing an admin changes makes this request pass (a
	// malformed URL, a metadata endpoint, a host that does not resolve).
	RemedyNone RemedyKind = ""
	// RemedyAddEntry: adding Remedy.Entry to the allowlist admits it.
	RemedyAddEntry RemedyKind = "add_entry"
	// RemedyChangeSetting: raising or changing the setting Remedy.Setting
	// (a settings key such as "max_bytes") would let it through.
	RemedyChangeSetting RemedyKind = "change_setting"
)

// Remedy is a refusal's fix as data, for programs: the Fix sentence says
// the same thing to people. "Can an allowlist entry fix this refusal?" is
// Kind == RemedyAddEntry and nothing else.
type Remedy struct {
	Kind RemedyKind `json:"kind"`
	// Entry is the literal allowlist entry to add, for RemedyAddEntry.
	Entry string `json:"entry,omitempty"`
	// Setting is the settings key to change, for RemedyChangeSetting.
	Setting string `json:"setting,omitempty"`
	// Internal says the entry is best added as an internal host: the
	// caller's scope reaches the public web, and a plain entry would
	// narrow it to the listed hosts.
	Internal bool `json:"internal,omitempty"`
}

// AddEntry is the remedy "add entry to the allowlist".
func AddEntry(entry string) Remedy { return Remedy{Kind: RemedyAddEntry, Entry: entry} }

// AddInternal is the remedy "add entry as an internal host".
func AddInternal(entry string) Remedy {
	return Remedy{Kind: RemedyAddEntry, Entry: entry, Internal: true}
}

// ChangeSetting is the remedy "change the setting key".
func ChangeSetting(key string) Remedy { return Remedy{Kind: RemedyChangeSetting, Setting: key} }

// Value is the remedy's one argument: the entry, the setting key, or "".
func (r Remedy) Value() string {
	switch r.Kind {
	case RemedyAddEntry:
		return r.Entry
	case RemedyChangeSetting:
		return r.Setting
	}
	return ""
}

// RemedyOf rebuilds a remedy from its kind and Value, as a store keeps it.
// An unknown kind is no remedy: nothing would be offered for it.
func RemedyOf(kind, value string) Remedy {
	switch RemedyKind(kind) {
	case RemedyAddEntry:
		return AddEntry(value)
	case RemedyChangeSetting:
		return ChangeSetting(value)
	}
	return Remedy{}
}

// Refusal is a refused or failed outbound request, as a value. Its Message
// is one sentence the agent can read; its Fix is the sentence for the
// admin, and Remedy the same fix as data. Refusal implements error so that
// it travels through the standard library (a dialer's Control hook, an
// http.Transport) and is recovered with errors.As.
//
// The JSON field names are part of the API (the tool answers, `console
// refusals --json`) and do not change: code, reason, message, fix, remedy
// {kind, entry, setting}, kind, tool, agent, service, url, host, port, entry,
// addresses, redirects, range. Lists are always lists, never joined text.
type Refusal struct {
	Code    Code   `json:"code"`
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
	// Remedy is absent from the JSON when nothing would help.
	Remedy Remedy `json:"remedy,omitzero"`
	// Kind is KindNetwork for a failure of the network rather than a
	// refusal of the policy; empty means KindPolicy.
	Kind Kind `json:"kind,omitempty"`
	// Tool and Agent say who asked, when the refusal is shown apart from
	// its caller.
	Tool  string `json:"tool,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Service is the named service behind the tool, when there is one
	// (Caller.Service): what a scope narrowed to that one service names.
	Service string `json:"service,omitempty"`
	URL     string `json:"url,omitempty"`
	Host    string `json:"host,omitempty"`
	Port    uint16 `json:"port,omitempty"`
	// Entry is the allowlist entry that matched the host, if any.
	Entry     string       `json:"entry,omitempty"`
	Addresses []netip.Addr `json:"addresses,omitempty"`
	// Redirects are the URLs that redirected to URL, oldest first.
	Redirects []string `json:"redirects,omitempty"`
	// Range names the address range that refused the request, if any.
	Range string `json:"range,omitempty"`
}

// KindOf is r's kind, KindPolicy when unset.
func (r *Refusal) KindOf() Kind {
	if r.Kind == "" {
		return KindPolicy
	}
	return r.Kind
}

// stamp fills in who asked and where the request went, as the guard
// records it, leaving what the refusal's maker already set.
func (r *Refusal) stamp(c Caller, port uint16, redirects []string) {
	if r.Tool == "" {
		r.Tool = c.Tool
	}
	if r.Agent == "" {
		r.Agent = c.Agent
	}
	if r.Service == "" {
		r.Service = c.Service
	}
	if r.Port == 0 {
		r.Port = port
	}
	if r.Redirects == nil && len(redirects) > 0 {
		r.Redirects = slices.Clone(redirects)
	}
}

func (r *Refusal) Error() string { return r.Message }

// AsRefusal finds a *Refusal in err's chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}
