package guard

// A refusal's Fix and Remedy are written for the admin: "add 127.0.0.1:6379
// to the allowlist". Read by an agent, that sentence is an instruction a
// prompt-injected agent relays to an admin ("the ticket needs 127.0.0.1:6379
// on the allowlist"), and the admin sees the product itself asking for it.
// So whatever an agent reads (a tool's answer, the API's error, the proxy's
// refusal body) renders the refusal through ForAgent: for an internal target
// it says the target is internal and whom to ask, never which entry would
// open it. The value itself is unchanged: the refusal log, its page and a
// preview of the policy keep the exact entry for the admin.

// AgentInternalFix is the fix an agent reads when an internal host or
// address (loopback, private, link-local, an internal name) was refused.
const AgentInternalFix = "This host is internal; ask an admin only if the task really needs it."

// AgentMetadataFix is the fix an agent reads for a cloud metadata
// endpoint, which hands out credentials: nobody should be asked to open it.
const AgentMetadataFix = "This is a cloud metadata endpoint, which is never opened for agents; do not ask for it."

// Internal reports whether r refused an internal target: its reason says
// so (internal_name, internal_address, metadata, connect_check), or its
// remedy would add an entry for a host that is not public (a port refusal
// for localhost:6379, say) or for a host that resolved to a non-public
// address. It reads the typed value only, never the Fix sentence.
func (r *Refusal) Internal() bool {
	switch r.Reason {
	case ReasonInternalName, ReasonInternalAddress, ReasonMetadata, ReasonConnectCheck:
		return true
	}
	if r.Remedy.Kind != RemedyAddEntry {
		return false
	}
	for _, a := range r.Addresses {
		if !ClassifyAddr(a).Public() {
			return true
		}
	}
	return !entryPublic(r.Remedy.Entry)
}

// entryPublic reports whether an entry names a public host: a public
// address, or a name that is not internal. An entry that does not parse
// is not public: nothing unknown is shown to an agent.
func entryPublic(text string) bool {
	e, err := ParseEntry(text)
	if err != nil {
		return false
	}
	if e.ip.IsValid() {
		return ClassifyAddr(e.ip).Public()
	}
	return !classifyName(e.name).internal
}

// AgentFix is the fix an agent reads: AgentMetadataFix or AgentInternalFix
// for an internal target, the Fix itself otherwise (a public host that is
// not on the allowlist may be named: asking for it opens nothing inside).
func (r *Refusal) AgentFix() string {
	switch {
	case r.Reason == ReasonMetadata:
		return AgentMetadataFix
	case r.Internal():
		return AgentInternalFix
	}
	return r.Fix
}

// ForAgent returns r as an agent may read it: r itself when its fix names
// nothing internal, otherwise a copy whose Fix is AgentFix and which has no
// Remedy (the entry is exactly what must not reach the agent). A nil r
// stays nil, so a result's JSON can render its refusal unconditionally.
func (r *Refusal) ForAgent() *Refusal {
	if r == nil || !r.Internal() {
		return r
	}
	c := *r
	c.Fix, c.Remedy = r.AgentFix(), Remedy{}
	return &c
}
