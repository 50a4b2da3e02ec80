package guard

// TargetReasons are the reasons that refuse a request for where it
// points or how it hides that: an internal name or address, a cloud
// metadata endpoint, a numeric or zoned host written to slip past a name
// check, an address that changed between the check and the connection
// (DNS rebinding), a tunnel whose TLS or HTTP name is not its host. A
// burst of them is what probing looks like, where a not-allowlisted host,
// a closed port or an oversized page is an agent meeting the policy. A
// product's dashboards tell the two apart with this list.
var TargetReasons = []Reason{
	ReasonInternalName, ReasonInternalAddress, ReasonMetadata, ReasonConnectCheck,
	ReasonNumericHost, ReasonZone, ReasonTunnelName,
}

// TargetsReason reports whether r is one of TargetReasons.
func TargetsReason(r Reason) bool {
	for _, t := range TargetReasons {
		if r == t {
			return true
		}
	}
	return false
}
