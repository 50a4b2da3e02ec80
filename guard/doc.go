// Package guard decides, and enforces, where a program may connect when
// the URL comes from a stranger.
//
// Outbound's agents answer help-desk tickets that arrive by email. A
// ticket names a URL and the agent opens it, so whoever writes the email
// chooses what the agent fetches. Without a guard one line of email turns
// the agent into a proxy onto the company's network: the router's admin
// page, a database on localhost, or the cloud metadata address
// 169.254.169.254 that hands out credentials.
//
// # What is refused
//
// Any public host is reachable by default (PUBLIC WEB). Refused are
// loopback, private, link-local, CGNAT, multicast and other special-purpose
// addresses (the IANA registries, kept as data in ranges.go), cloud metadata
// endpoints, internal names (localhost, *.local, *.internal, single labels),
// numeric host forms other than a canonical dotted quad, credentials in
// URLs, schemes other than http and https, and ports other than 80 and 443
// unless a setting or an allowlist entry opens them.
//
// An optional allowlist narrows the web to the hosts it names. A literal
// entry (status.example.com, intranet.corp:8080, 10.1.2.3) is an admin's
// deliberate choice of one host, so it may reach a private address; a
// wildcard (*.docs.example.com) covers names nobody looked at, so it never
// does. Link-local addresses and metadata endpoints are unlocked only by a
// literal IP entry for that very address.
//
// # Why checking the URL is not enough
//
// A name can resolve to a public address when checked and to 127.0.0.1 a
// moment later (DNS rebinding), and a public page can redirect anywhere.
// So the guard's client follows redirects itself and decides every hop
// from scratch, dials only the addresses its decision resolved, and checks
// the exact IP and port again in the socket's Control hook just before
// connect(2). It never uses environment proxies, which would bypass all
// of this.
//
// # Decisions are values
//
// A Decision, and a Refusal when it goes wrong, carries a Code (invalid,
// forbidden, unreachable, too_large, timeout, unsupported, too_many), a
// finer Reason, one sentence the agent can read, a Fix that names the
// setting an admin would change, and the same fix as data, a Remedy (add
// this entry, change that setting, or nothing helps), so that no program
// ever reads the Fix's prose to decide what to offer. A Refusal's Kind
// keeps failures of the network apart from refusals of the policy. The
// same value reaches the agent, the refusal log (through a Recorder, one
// Record per request), the CLI and the API.
//
// The guard speaks as a library: its fixes say "the allowlist" and "the
// timeout setting". A product names its own controls by passing a Wording
// in Options; the guard applies it to every policy it is given.
//
// # One record per request
//
// Every request the guard enforces, through the client or the proxy, is
// one Record for the Recorder: allowed, refused by the policy, or failed
// on the network (a Refusal of KindNetwork), never two. A client request
// is recorded when its outcome is known: when ReadAll ends (a body over
// max_bytes is one too_large record) or the body is closed. A caller that
// records its own calls, such as a tool that reads a page and then judges
// its type, runs under WithNotes: the guard then only notes what it
// decided, and the caller records the call once with Guard.Record.
//
// The Policy is an immutable snapshot, swapped atomically by SetPolicy:
// a reload applies to the next decision and the request path takes no lock.
//
// The package imports nothing else of Outbound's, so other Go programs can
// embed it; see the Example.
package guard
