package guard

import "testing"

// Every target reason is a reason the guard gives, and the policy's
// ordinary refusals are not among them.
func TestTargetReasons(t *testing.T) {
	known := map[Reason]bool{}
	for _, r := range Reasons {
		known[r] = true
	}
	for _, r := range TargetReasons {
		if !known[r] {
			t.Errorf("%s is not one of guard.Reasons", r)
		}
	}
	for _, r := range []Reason{ReasonNotAllowlisted, ReasonPort, ReasonStreamedSize, ReasonDNS, ReasonScheme} {
		if TargetsReason(r) {
			t.Errorf("%s counts as a target reason; it is the policy's ordinary refusal or a network failure", r)
		}
	}
	if !TargetsReason(ReasonMetadata) || !TargetsReason(ReasonConnectCheck) {
		t.Error("metadata and connect_check must count as target reasons")
	}
}
