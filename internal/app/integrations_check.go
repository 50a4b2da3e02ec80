package app

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// IntegrationInput is an HTTP integration as an admin gives it, on the
// form or on the command line: new secret values in plain text.
type IntegrationInput struct {
	Name, Description, Method string
	URL                       string // the template
	Body                      string // the JSON template, or ""
	Headers                   []HeaderInput
	Params                    []tools.IntegrationParam
}

// Normalized is in as it is checked and stored, whichever front end read
// it: text fields without surrounding space, the method in capitals
// ("post" is POST).
func (in IntegrationInput) Normalized() IntegrationInput {
	in.Name, in.Description = strings.TrimSpace(in.Name), strings.TrimSpace(in.Description)
	in.Method = strings.ToUpper(strings.TrimSpace(in.Method))
	in.URL, in.Body = strings.TrimSpace(in.URL), strings.TrimSpace(in.Body)
	return in
}

// HeaderInput is one header as given. A secret header with an empty
// Value and Keep set keeps the sealed value stored under the header named
// Keep: an edit that leaves a secret untouched.
type HeaderInput struct {
	Name, Value string
	Secret      bool
	Keep        string
}

// keptSecret stands in for a kept secret's value while the definition is
// validated: it is not empty, and it is never stored.
const keptSecret = "(kept)"

// reservedNewName is the name the console's create page lives under.
const reservedNewName = "new"

// ParseHeaderLine reads one "Name: value" header, as the form's lines and
// the command line's --header take it.
func ParseHeaderLine(line string) (HeaderInput, bool) {
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return HeaderInput{}, false
	}
	return HeaderInput{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}, true
}

// CheckIntegration returns every problem with in, at most one per field,
// without storing anything. old is the stored integration an update
// replaces, nil for a new one. The form calls it on its own to show these
// problems next to ones of its own parsing.
func CheckIntegration(in IntegrationInput, old *models.Integration) []Problem {
	in = in.Normalized()
	var problems []Problem
	add := func(p Problem) {
		for _, q := range problems {
			if q.Field == p.Field {
				return
			}
		}
		problems = append(problems, p)
	}
	def, _, moved := definition(in, old)
	if moved {
		// A stored secret was typed for one origin. Keeping it while the
		// URL points at another would let anyone who can edit the
		// integration send it to a server of their choice and read it
		// back with Test: it must be typed again.
		add(Problem{Field: "url", Input: in.URL, Code: ProblemSecretMoved,
			Problem: fmt.Sprintf("the URL now points at %s instead of %s, and stored secrets are only sent where they were typed for", templateOrigin(in.URL), templateOrigin(old.URLTemplate)),
			Fix:     "type each secret header again, or remove it"})
	}
	for _, e := range def.Validate() {
		add(Problem{Field: e.Field, Input: e.Input, Problem: e.Problem, Fix: e.Fix})
	}
	if in.Name == reservedNewName {
		add(Problem{Field: "name", Input: in.Name, Problem: "the name new is kept for the page that creates integrations", Fix: "choose another name"})
	}
	return problems
}

// definition is in as the tools validate and run it, with kept secrets
// standing in as keptSecret, and the sealed values kept by header name.
// moved reports a kept secret whose URL now points at another origin; such
// a secret is not kept.
func definition(in IntegrationInput, old *models.Integration) (def tools.Integration, kept map[string]string, moved bool) {
	def = tools.Integration{Name: in.Name, Description: in.Description, Method: in.Method, URL: in.URL, Body: in.Body, Params: in.Params}
	kept = map[string]string{}
	stored := map[string]string{}
	if old != nil {
		for _, h := range old.Headers {
			if h.Secret {
				stored[h.Name] = h.Value
			}
		}
	}
	sameOrigin := old == nil || old.URLTemplate == "" || templateOrigin(old.URLTemplate) == templateOrigin(in.URL)
	for _, h := range in.Headers {
		value := h.Value
		if sealed, ok := stored[h.Keep]; ok && h.Secret && value == "" {
			if sameOrigin {
				kept[h.Name], value = sealed, keptSecret
			} else {
				moved = true
			}
		}
		def.Headers = append(def.Headers, tools.IntegrationHeader{Name: h.Name, Value: value, Secret: h.Secret})
	}
	return def, kept, moved
}

// templateOrigin is a URL template's scheme://host:port, the only part no
// parameter can change.
func templateOrigin(tmpl string) string {
	u, err := url.Parse(tmpl)
	if err != nil {
		return tmpl
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// DescribeIntegration is the audit trail's text for an integration. It
// starts with the name, so a rename reads as one in before → after. A
// secret header shows as "(secret)", never its value, sealed or not.
func DescribeIntegration(r models.Integration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\n%s %s", r.Name, r.Method, r.URLTemplate)
	for _, h := range r.Headers {
		b.WriteString("\nheader " + DescribeHeader(h))
	}
	for _, p := range r.Params {
		b.WriteString("\nparam " + DescribeParam(p))
	}
	if r.BodyTemplate != "" {
		b.WriteString("\nbody " + r.BodyTemplate)
	}
	b.WriteString("\ndescription " + r.Description)
	return b.String()
}

// DescribeHeader is a header as lists and the audit trail show it.
func DescribeHeader(h models.IntegrationHeader) string {
	if h.Secret {
		return h.Name + ": (secret)"
	}
	return h.Name + ": " + h.Value
}

// DescribeParam is a parameter as lists and the audit trail show it.
func DescribeParam(p models.IntegrationParam) string {
	s := p.Name + " (" + p.Type
	if p.Required {
		s += ", required"
	}
	return s + ")"
}
