package web

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// The safe preview shows support staff what a link from a ticket holds
// while their own browser never touches the site: the server reads it
// through the tool registry (app.Previews), and the page shows the text
// as text and the screenshot as a data: URI, under a Content-Security-
// Policy that lets the page load nothing but the console's stylesheet and
// inline images. Even a page whose text smuggled markup through would
// find no way out: no script, no frame, no connection, no remote image.

// Previewer runs a safe preview; *app.Previews implements it.
type Previewer interface {
	Preview(ctx context.Context, req app.PreviewRequest) (app.Preview, error)
}

// previewCSP is the preview page's policy: nothing may load except the
// console's own stylesheet and data: images, and forms post only here.
const previewCSP = "default-src 'none'; img-src data:; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// previewHref links to the preview form, prefilled; never with an empty
// parameter.
func previewHref(rawURL, ticket string) string {
	v := url.Values{}
	if rawURL != "" {
		v.Set("url", rawURL)
	}
	if ticket != "" {
		v.Set("ticket", ticket)
	}
	if len(v) == 0 {
		return "/preview"
	}
	return "/preview?" + v.Encode()
}

// previewPage shows the form, prefilled from the query (the refusal
// page's Preview safely link). It reads nothing: only the form's POST
// does, so a link can never make a person's console fetch a site.
func (s *Server) previewPage(c echo.Context) error {
	c.Response().Header().Set("Content-Security-Policy", previewCSP)
	vm := views.PreviewView{Form: views.PreviewForm{
		URL: strings.TrimSpace(c.QueryParam("url")), Ticket: strings.TrimSpace(c.QueryParam("ticket")), Errors: map[string]string{},
	}, Available: s.d.Preview != nil}
	return render(c, http.StatusOK, views.PreviewPage(s.shell(c, "Safe preview", "preview"), vm))
}

// preview reads the URL and shows what the server found. The result is
// the response itself (no redirect): it is not stored anywhere to show
// again, and the audit trail already holds the preview.
func (s *Server) preview(c echo.Context) error {
	c.Response().Header().Set("Content-Security-Policy", previewCSP)
	form := views.PreviewForm{URL: strings.TrimSpace(c.FormValue("url")), Ticket: strings.TrimSpace(c.FormValue("ticket")), Errors: map[string]string{}}
	vm := views.PreviewView{Form: form, Available: s.d.Preview != nil}
	sh := s.shell(c, "Safe preview", "preview")
	if s.d.Preview == nil {
		return render(c, http.StatusServiceUnavailable, views.PreviewPage(sh, vm))
	}
	p, err := s.d.Preview.Preview(c.Request().Context(), app.PreviewRequest{Actor: userOf(c).Name, URL: form.URL, Ticket: form.Ticket})
	var problems app.PreviewProblems
	if errors.As(err, &problems) {
		vm.Form.Errors = problems
		return render(c, http.StatusUnprocessableEntity, views.PreviewPage(sh, vm))
	}
	if err != nil {
		return err
	}
	vm.Result = previewResult(p)
	return render(c, http.StatusOK, views.PreviewPage(sh, vm))
}

// previewResult turns a preview into its view model: text as text, the
// image as a data: URI, a refusal as the refusal page shows it.
func previewResult(p app.Preview) *views.PreviewResult {
	out := &views.PreviewResult{URL: p.URL, Ticket: p.Ticket, Agent: p.Agent, Text: p.Text, NoBrowser: p.NoBrowser}
	if p.Refusal != nil {
		r := refusalFacts(p.Refusal)
		out.Refusal = &r
	}
	if len(p.PNG) > 0 {
		out.ShotSrc = "data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG)
	}
	if p.ShotProblem != nil {
		out.ShotProblem = p.ShotProblem.Message
		if p.ShotProblem.Reason == tools.ReasonBrowser {
			out.ShotProblem += " " + p.ShotProblem.Fix
		}
	}
	return out
}

// refusalFacts is a refusal as the refusal page's "What was refused" and
// "Why" cards show it: the full value, as admins and support read it.
func refusalFacts(r *guard.Refusal) views.RefusalFacts {
	return views.RefusalFacts{
		URL: r.URL, Host: r.Host, Port: int(r.Port), Addresses: addrTexts(r.Addresses), Redirects: r.Redirects,
		Code: string(r.Code), Reason: string(r.Reason), Kind: string(r.KindOf()), Message: r.Message, Fix: r.Fix,
		Remedy: tools.RemedyText(r.Remedy), Entry: r.Entry, Range: r.Range,
	}
}

// previewHelps reports whether a refusal is one a safe preview can show
// more about: a public host the policy refused only because the
// allowlist does not name it. Never for an internal name or address or a
// metadata endpoint (r.Internal), nor for a network failure: there is
// nothing to see there, and no reason to point anyone at it.
func previewHelps(r *guard.Refusal) bool {
	return r.KindOf() == guard.KindPolicy && r.Reason == guard.ReasonNotAllowlisted &&
		r.Remedy.Kind == guard.RemedyAddEntry && !r.Internal()
}

// previewLinkFor is the refusal page's Preview safely link, or "".
func previewLinkFor(r *guard.Refusal) string {
	if !previewHelps(r) {
		return ""
	}
	return previewHref(r.URL, "")
}
