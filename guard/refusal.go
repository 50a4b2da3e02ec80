package guard

import (
	"errors"
	"net/netip"
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
type Reason string

const (
	ReasonBadURL          Reason = "bad_url"             // not parseable as a URL
	ReasonScheme          Reason = "scheme"              // not http or https
	ReasonCredentials     Reason = "credentials"         // user:password@ in the URL
	ReasonEmptyHost       Reason = "empty_host"          // no host
	ReasonBadHost         Reason = "bad_host"            // not an IP literal or a valid DNS name
	ReasonNumericHost     Reason = "numeric_host"        // a non-canonical numeric IPv4 form
	ReasonZone            Reason = "zone"                // an IPv6 literal with a zone
	ReasonBadPort         Reason = "bad_port"            // not a number from 1 to 65535
	ReasonPort            Reason = "port"                // a port the policy does not open
	ReasonNotAllowlisted  Reason = "not_allowlisted"     // the allowlist does not name the host
	ReasonInternalName    Reason = "internal_name"       // localhost, *.internal, single labels…
	ReasonMetadata        Reason = "metadata"            // a cloud metadata endpoint
	ReasonInternalAddress Reason = "internal_address"    // resolves to a non-public address
	ReasonDNS             Reason = "dns"                 // the name did not resolve
	ReasonConnect         Reason = "connect"             // the connection failed
	ReasonConnectCheck    Reason = "connect_check"       // the connect-time address check refused
	ReasonRedirects       Reason = "redirects"           // more redirect hops than allowed
	ReasonBadRedirect     Reason = "bad_redirect"        // a redirect without a usable Location
	ReasonTimeout         Reason = "timeout"             // the overall deadline passed
	ReasonDeclaredSize    Reason = "declared_size"       // Content-Length over max_bytes
	ReasonStreamedSize    Reason = "streamed_size"       // the body grew past max_bytes
	ReasonContentType     Reason = "content_type"        // a type the tool cannot read
	ReasonReadsPerTurn    Reason = "reads_per_turn"      // the turn's page budget is spent
	ReasonProxyAuth       Reason = "proxy_auth"          // the proxy credential is missing or wrong
	ReasonBadStart        Reason = "bad_start"           // a tool's start offset is outside the page
	ReasonBadSize         Reason = "bad_size"            // a screenshot size outside the settings' limits
	ReasonBrowser         Reason = "browser"             // the screenshot browser failed
	ReasonUnknownTool     Reason = "unknown_integration" // no integration has that name
	ReasonBadParams       Reason = "bad_params"          // an integration's parameters are missing or mistyped
	ReasonCrossOriginBody Reason = "cross_origin_body"   // a 307/308 would carry a body to another origin
)

// Reasons lists every reason, for filters, documentation and the test that
// keeps the user guide complete.
var Reasons = []Reason{
	ReasonBadURL, ReasonScheme, ReasonCredentials, ReasonEmptyHost, ReasonBadHost, ReasonNumericHost, ReasonZone,
	ReasonBadPort, ReasonPort, ReasonNotAllowlisted, ReasonInternalName, ReasonMetadata, ReasonInternalAddress,
	ReasonDNS, ReasonConnect, ReasonConnectCheck, ReasonRedirects, ReasonBadRedirect, ReasonTimeout,
	ReasonDeclaredSize, ReasonStreamedSize, ReasonContentType, ReasonReadsPerTurn, ReasonProxyAuth, ReasonBadStart,
	ReasonBadSize, ReasonBrowser, ReasonUnknownTool, ReasonBadParams, ReasonCrossOriginBody,
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

// Refusal is a refused or failed outbound request, as a value. Its Message
// is one sentence the agent can read; its Fix names the setting that would
// change the outcome. Refusal implements error so that it travels through
// the standard library (a dialer's Control hook, an http.Transport) and is
// recovered with errors.As.
type Refusal struct {
	Code      Code         `json:"code"`
	Reason    Reason       `json:"reason"`
	Message   string       `json:"message"`
	Fix       string       `json:"fix"`
	URL       string       `json:"url,omitempty"`
	Host      string       `json:"host,omitempty"`
	Entry     string       `json:"entry,omitempty"`
	Addresses []netip.Addr `json:"addresses,omitempty"`
	// Range names the address range that refused the request, if any.
	Range string `json:"range,omitempty"`
	// Kind is KindNetwork for a failure of the network rather than a
	// refusal of the policy; empty means KindPolicy.
	Kind Kind `json:"kind,omitempty"`
}

// KindOf is r's kind, KindPolicy when unset.
func (r *Refusal) KindOf() Kind {
	if r.Kind == "" {
		return KindPolicy
	}
	return r.Kind
}

func (r *Refusal) Error() string { return r.Message }

// AsRefusal finds a *Refusal in err's chain.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}
