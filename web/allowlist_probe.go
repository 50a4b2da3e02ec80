package web

// The Test a URL box: the guard's decision on a URL, shown with its entry,
// reason and addresses. It only decides (the guard resolves the name but
// sends no request), so support staff may use it too, and it is a GET so
// a result can be shared as a link.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/views"
)

// decideTimeout bounds the DNS lookup behind a decision shown on a page:
// a hung resolver must not hang the console.
const decideTimeout = 5 * time.Second

func (s *Server) testURL(c echo.Context) error {
	st, err := s.loadAllowlist(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	raw := strings.TrimSpace(c.QueryParam("url"))
	p.Test.URL = raw
	agent, tool := strings.TrimSpace(c.QueryParam("agent")), strings.TrimSpace(c.QueryParam("tool"))
	p.Test.Agent, p.Test.Tool = agent, tool
	caller := app.CallerAs(agent, tool)
	reach := st.ReachOf(guard.Scope{})
	if agent != "" || tool != "" {
		// What this agent reaches with this tool: its mode and the
		// entries that apply to it, with or without a URL to decide.
		if pol, err := st.Policy(); err == nil {
			reach = pol.ReachOf(caller)
			for _, r := range pol.RulesFor(caller) {
				p.Test.ReachRules = append(p.Test.ReachRules, ruleWords(r))
			}
		}
		p.Test.Reach = "As " + callerWords(caller) + ": " + app.BadgeOf(reach)
		if raw == "" {
			return s.renderEgress(c, http.StatusOK, p)
		}
	}
	if raw == "" {
		p.Test.Error = "Type a URL to test, e.g. https://intranet.corp:8080/status, or an agent and a tool to see what they reach."
		return s.renderEgress(c, http.StatusUnprocessableEntity, p)
	}
	d := s.decide(guard.WithCaller(c.Request().Context(), caller), raw)
	p.Test.Result = decisionView(d, reach.PublicWeb)
	if full := bareHostURL(raw); full != "" && d.Reason == guard.ReasonScheme {
		p.Test.Suggest = full
		p.Test.SuggestHref = "/integrations/test?" + url.Values{"url": {full}}.Encode() + "#url-test"
		p.Test.Result.Fix = "Test " + full + " instead: the guard reads a URL without its scheme as something else."
	}
	return s.renderEgress(c, http.StatusOK, p)
}

// bareHostURL is the https URL a host typed without its scheme stands
// for (status.example.com → https://status.example.com/), or "" when raw
// is not a bare host, with or without a port and path.
func bareHostURL(raw string) string {
	if strings.Contains(raw, "://") || strings.ContainsAny(raw, " \t@") {
		return ""
	}
	u, err := url.Parse("https://" + raw)
	if err != nil || u.Hostname() == "" || (!strings.Contains(u.Hostname(), ".") && u.Port() == "") {
		return ""
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// decide asks the running guard, bounded by decideTimeout.
func (s *Server) decide(ctx context.Context, raw string) guard.Decision {
	ctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	return s.d.Guard.Decide(ctx, raw)
}

// decisionView turns a decision into what the Test a URL box shows.
func decisionView(d guard.Decision, publicWeb bool) *views.URLDecision {
	v := &views.URLDecision{
		Allowed: d.Allowed, URL: d.Input, Code: string(d.Code), Reason: string(d.Reason),
		Message: d.Message, Fix: d.Fix, Range: d.Range,
	}
	if d.Host != "" && d.Port != 0 {
		v.Target = d.Host + " port " + strconv.Itoa(int(d.Port))
	}
	if d.Allowed {
		v.Message = fmt.Sprintf("Agents may fetch this URL: %s on port %d passes every check.", d.Host, d.Port)
	}
	switch {
	case d.Code == guard.CodeInvalid:
		// The URL never got as far as the allowlist: naming "no entry"
		// would send the admin to the list instead of to the URL.
	case !d.Entry.IsZero() && d.Allowed:
		v.Entry = d.Entry.String()
	case !d.Entry.IsZero() && d.Kind == guard.KindNetwork:
		// The entry admitted the host; the name did not resolve or the
		// lookup timed out. Saying the entry "does not admit" it would
		// send the admin to fix a list that is right.
		v.Entry = d.Entry.String() + " (it admits this host; the network failed, not the list)"
	case !d.Entry.IsZero():
		v.Entry = d.Entry.String() + " (considered, but it does not admit this URL)"
	case publicWeb && d.Allowed:
		v.Entry = "PUBLIC WEB: no entry needed"
	case publicWeb:
		v.Entry = "None: the list is empty (PUBLIC WEB)"
	default:
		v.Entry = "None: no entry matches this host and port"
	}
	for _, a := range d.Addresses() {
		v.Addresses = append(v.Addresses, addrView(a))
	}
	return v
}

// callerWords names the caller a test decided as.
func callerWords(c guard.Caller) string {
	agent, tool := "any agent", "any tool"
	if c.Agent != "" {
		agent = "agent " + c.Agent
	}
	switch {
	case c.Service != "":
		tool = "integration " + c.Service
	case c.Tool != "":
		tool = c.Tool
	}
	return agent + " with " + tool
}

// ruleWords is one entry that applies to a caller, for the reach list.
func ruleWords(r guard.Rule) string {
	s := r.Entry.String()
	if r.Internal {
		s += " (internal host)"
	}
	if r.ReportOnly {
		s += " (report-only)"
	}
	if !r.Scope.IsZero() {
		s += " for " + r.Scope.String()
	}
	return s
}
