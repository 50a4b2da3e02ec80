package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// Blank rows the form offers for new secret headers and parameters. A
// plain form cannot add rows without script; saving offers more.
const (
	blankSecretRows = 2
	blankParamRows  = 3
)

// keptSecret stands in for a stored secret's value while the form is
// validated: the admin left the field empty to keep it.
const keptSecret = "(kept)"

func newIntegrationForm() views.IntegrationForm {
	return views.IntegrationForm{New: true, Method: "GET"}
}

// formFromRow fills the form from a stored integration, without any
// secret value.
func formFromRow(r models.Integration) views.IntegrationForm {
	f := views.IntegrationForm{OriginalName: r.Name, Name: r.Name, Description: r.Description, Method: r.Method, URL: r.URLTemplate, Body: r.BodyTemplate}
	var plain []string
	for _, h := range r.Headers {
		if h.Secret {
			f.Secrets = append(f.Secrets, views.SecretRow{Name: h.Name, Stored: true})
			continue
		}
		plain = append(plain, h.Name+": "+h.Value)
	}
	f.Headers = strings.Join(plain, "\n")
	for _, p := range r.Params {
		f.Params = append(f.Params, views.ParamRow{Name: p.Name, Type: p.Type, Required: p.Required, Description: p.Description})
		f.Samples = append(f.Samples, views.SampleRow{Name: p.Name, Type: p.Type, Required: p.Required})
	}
	return f
}

// padIntegrationForm adds the choices and the blank rows.
func padIntegrationForm(f *views.IntegrationForm) {
	f.Methods = tools.IntegrationMethods
	f.Types = f.Types[:0]
	for _, t := range tools.ParamTypes {
		f.Types = append(f.Types, string(t))
	}
	for range blankSecretRows {
		f.Secrets = append(f.Secrets, views.SecretRow{})
	}
	for range blankParamRows {
		f.Params = append(f.Params, views.ParamRow{Type: string(tools.ParamString)})
	}
}

// integrationInput is a submitted form: the form to show again, and the
// definition with new secrets in plaintext, to be sealed once valid.
type integrationInput struct {
	form views.IntegrationForm
	def  tools.Integration
	// kept maps a header name to its stored sealed value, for secrets the
	// admin left empty.
	kept map[string]string
}

// readIntegrationForm reads the submitted form over old (zero for a new
// integration) and validates it.
func readIntegrationForm(c echo.Context, old models.Integration) integrationInput {
	in := integrationInput{kept: map[string]string{}}
	f := &in.form
	f.Name = strings.TrimSpace(c.FormValue("name"))
	f.Description = strings.TrimSpace(c.FormValue("description"))
	f.Method = c.FormValue("method")
	f.URL = strings.TrimSpace(c.FormValue("url"))
	f.Headers = strings.TrimSpace(c.FormValue("headers"))
	f.Body = strings.TrimSpace(c.FormValue("body"))
	f.Revision, _ = strconv.ParseInt(c.FormValue("revision"), 10, 64)
	f.Errors = map[string]string{}
	in.def = tools.Integration{Name: f.Name, Description: f.Description, Method: f.Method, URL: f.URL, Body: f.Body}

	for n, line := range strings.Split(f.Headers, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			f.Errors["headers"] = "Line " + strconv.Itoa(n+1) + " has no colon. Write each header as Name: value."
			continue
		}
		in.def.Headers = append(in.def.Headers, tools.IntegrationHeader{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}

	// A stored secret was typed for one origin. If the URL now points at
	// another (scheme, host or port), keeping it would let anyone who can
	// edit the integration send it to a server of their choice and read it
	// back with Test: the admin must type it again.
	stored := map[string]string{}
	moved := old.URLTemplate != "" && templateOrigin(old.URLTemplate) != templateOrigin(f.URL)
	for _, h := range old.Headers {
		if h.Secret {
			stored[h.Name] = h.Value
		}
	}
	rows, _ := strconv.Atoi(c.FormValue("secret_rows"))
	for i := range min(rows, 50) {
		k := strconv.Itoa(i)
		name := strings.TrimSpace(c.FormValue("secret_name_" + k))
		orig := c.FormValue("secret_orig_" + k)
		value := c.FormValue("secret_value_" + k)
		if c.FormValue("secret_remove_"+k) == "yes" || name == "" {
			continue
		}
		_, wasStored := stored[orig]
		if value == "" && wasStored && moved {
			f.Errors["url"] = fmt.Sprintf("The URL now points at %s instead of %s, and stored secrets are only sent where they were typed for. Type each secret header again below, or remove it.",
				templateOrigin(f.URL), templateOrigin(old.URLTemplate))
			wasStored = false
		}
		f.Secrets = append(f.Secrets, views.SecretRow{Name: name, Stored: wasStored})
		if value == "" && wasStored {
			in.kept[name] = stored[orig]
			value = keptSecret
		}
		in.def.Headers = append(in.def.Headers, tools.IntegrationHeader{Name: name, Value: value, Secret: true})
	}

	rows, _ = strconv.Atoi(c.FormValue("param_rows"))
	for i := range min(rows, 100) {
		k := strconv.Itoa(i)
		p := tools.IntegrationParam{Name: strings.TrimSpace(c.FormValue("param_name_" + k)), Type: tools.ParamType(c.FormValue("param_type_" + k)),
			Required: c.FormValue("param_required_"+k) == "yes", Description: strings.TrimSpace(c.FormValue("param_desc_" + k))}
		if p.Name == "" {
			continue
		}
		in.def.Params = append(in.def.Params, p)
		f.Params = append(f.Params, views.ParamRow{Name: p.Name, Type: string(p.Type), Required: p.Required, Description: p.Description})
	}

	for _, e := range in.def.Validate() {
		if _, taken := f.Errors[e.Field]; !taken {
			problem, fix := e.Sentences()
			f.Errors[e.Field] = problem + " " + fix
		}
	}
	if f.Name == "new" {
		f.Errors["name"] = "The name new is kept for the page that creates integrations. Choose another name."
	}
	return in
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

// seal returns the row to store: new secret values sealed, kept ones as
// they were stored.
func (in integrationInput) seal(box *tools.SecretBox, actor string) (models.Integration, error) {
	d := in.def
	row := models.Integration{Name: d.Name, Description: d.Description, Method: d.Method, URLTemplate: d.URL, BodyTemplate: d.Body, UpdatedBy: actor,
		Headers: []models.IntegrationHeader{}, Params: []models.IntegrationParam{}}
	for _, h := range d.Headers {
		value := h.Value
		if h.Secret {
			sealed, kept := in.kept[h.Name]
			if !kept {
				var err error
				if sealed, err = box.Seal(h.Value); err != nil {
					return row, err
				}
			}
			value = sealed
		}
		row.Headers = append(row.Headers, models.IntegrationHeader{Name: h.Name, Value: value, Secret: h.Secret})
	}
	for _, p := range d.Params {
		row.Params = append(row.Params, models.IntegrationParam{Name: p.Name, Type: string(p.Type), Required: p.Required, Description: p.Description})
	}
	return row, nil
}
