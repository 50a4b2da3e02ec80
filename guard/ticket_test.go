package guard

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckTicket(t *testing.T) {
	for _, ok := range []string{"", "SUP-4521", "#4521", "INC0012345", "zd:4521", "case_77.2", "ops+4521@desk", strings.Repeat("a", MaxTicketLen)} {
		if err := CheckTicket(ok); err != nil {
			t.Errorf("CheckTicket(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"SUP 4521", "a/b", "<b>", "x\r\nSet-Cookie: a", "tické", "50%", strings.Repeat("a", MaxTicketLen+1)} {
		err := CheckTicket(bad)
		var te *TicketError
		if !errors.As(err, &te) || te.Message == "" || !strings.Contains(te.Fix, TicketExample) {
			t.Errorf("CheckTicket(%q) = %v, want a TicketError with a fix", bad, err)
		}
	}
}

func TestRefusalRedirected(t *testing.T) {
	for _, tt := range []struct {
		r    *Refusal
		want string
	}{
		{nil, ""},
		{&Refusal{URL: "http://10.0.0.1/"}, ""},
		{&Refusal{URL: "http://10.0.0.1/", Redirects: []string{"https://a.example/"}}, "Redirected from https://a.example/ to http://10.0.0.1/."},
		{&Refusal{URL: "http://10.0.0.1/", Redirects: []string{"https://a.example/", "https://b.example/x"}},
			"Redirected from https://a.example/ to http://10.0.0.1/, through https://b.example/x."},
	} {
		if got := tt.r.Redirected(); got != tt.want {
			t.Errorf("Redirected() = %q, want %q", got, tt.want)
		}
	}
}
