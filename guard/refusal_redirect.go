package guard

import "strings"

// Redirected says, for a refusal reached by following redirects, where the
// request started and where it was refused: "Redirected from A to B." with
// the hops in between, if any. An agent, a support engineer and an admin
// otherwise read only B, a URL nobody asked for, and cannot tell the page
// that sent them there. It is "" when the first URL was refused.
func (r *Refusal) Redirected() string {
	if r == nil || len(r.Redirects) == 0 {
		return ""
	}
	s := "Redirected from " + r.Redirects[0] + " to " + r.URL
	if via := r.Redirects[1:]; len(via) > 0 {
		s += ", through " + strings.Join(via, ", ")
	}
	return s + "."
}
