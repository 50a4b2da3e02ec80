package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func TestMetricsForSupportIsForbiddenNotSignIn(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "outbound_decisions_total 0\n") })
	h := newHarnessWith(t, func(d *Deps) { d.Metrics = metrics })
	tests := []struct {
		name    string
		b       *browser
		status  int
		message string
	}{
		{"support user", h.signedIn("sam", models.RoleSupport), http.StatusForbidden, "Only admins (or an agent token) can read /metrics."},
		{"nobody signed in", h.browser(), http.StatusUnauthorized, "needs an agent's API token"},
		{"admin", h.signedIn("ada", models.RoleAdmin), http.StatusOK, "outbound_decisions_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.get("/metrics")
			if p.status != tt.status || !strings.Contains(p.doc.Text(), tt.message) {
				t.Errorf("status %d, body %q; want %d with %q", p.status, p.doc.Text(), tt.status, tt.message)
			}
		})
	}
}
