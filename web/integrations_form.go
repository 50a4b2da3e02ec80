package web

import (
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// Blank rows the form offers for new secret headers and parameters; "Add
// another parameter" (integrations_addrow.go) offers more.
const (
	blankSecretRows = 2
	blankParamRows  = 3
)

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
	blank := blankParamRows
	if f.BlankParams > 0 {
		blank = f.BlankParams
	}
	for range blank {
		f.Params = append(f.Params, views.ParamRow{Type: string(tools.ParamString)})
	}
}

// integrationInput is a submitted form: the form to show again, and the
// integration as typed, for the operation that validates and saves it.
type integrationInput struct {
	form  views.IntegrationForm
	input app.IntegrationInput
	// keptRows are the secret rows the admin left empty to keep the
	// stored value.
	keptRows []int
}

// readIntegrationForm reads the submitted form over old (nil for a new
// integration). Problems of its own reading (a header line without a
// colon) are shown with every other problem the operation would find.
func readIntegrationForm(c echo.Context, old *models.Integration) integrationInput {
	var in integrationInput
	f := &in.form
	f.Name = strings.TrimSpace(c.FormValue("name"))
	f.Description = strings.TrimSpace(c.FormValue("description"))
	f.Method = c.FormValue("method")
	f.URL = strings.TrimSpace(c.FormValue("url"))
	f.Headers = strings.TrimSpace(c.FormValue("headers"))
	f.Body = strings.TrimSpace(c.FormValue("body"))
	f.AllowHost = c.FormValue("allow_host") == "yes"
	f.Revision, _ = strconv.ParseInt(c.FormValue("revision"), 10, 64)
	f.Errors = map[string]string{}
	in.input = app.IntegrationInput{Name: f.Name, Description: f.Description, Method: f.Method, URL: f.URL, Body: f.Body}

	for n, line := range strings.Split(f.Headers, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		h, ok := app.ParseHeaderLine(line)
		if !ok {
			f.Errors["headers"] = "Line " + strconv.Itoa(n+1) + " has no colon. Write each header as Name: value."
			continue
		}
		in.input.Headers = append(in.input.Headers, h)
	}

	stored := map[string]bool{}
	if old != nil {
		for _, h := range old.Headers {
			stored[h.Name] = h.Secret
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
		h := app.HeaderInput{Name: name, Value: value, Secret: true}
		if value == "" && stored[orig] {
			h.Keep = orig
			in.keptRows = append(in.keptRows, len(f.Secrets))
		}
		f.Secrets = append(f.Secrets, views.SecretRow{Name: name, Stored: stored[orig]})
		in.input.Headers = append(in.input.Headers, h)
	}

	rows, _ = strconv.Atoi(c.FormValue("param_rows"))
	for i := range min(rows, 100) {
		k := strconv.Itoa(i)
		p := tools.IntegrationParam{Name: strings.TrimSpace(c.FormValue("param_name_" + k)), Type: tools.ParamType(c.FormValue("param_type_" + k)),
			Required: c.FormValue("param_required_"+k) == "yes", Description: strings.TrimSpace(c.FormValue("param_desc_" + k))}
		if p.Name == "" && p.Description == "" {
			continue
		}
		// A row with a description but no name is shown again, so nothing
		// typed is lost; it is not a parameter until it has a name.
		f.Params = append(f.Params, views.ParamRow{Name: p.Name, Type: string(p.Type), Required: p.Required, Description: p.Description})
		if p.Name != "" {
			in.input.Params = append(in.input.Params, p)
		}
	}
	if len(f.Errors) > 0 {
		in.showProblems(app.CheckIntegration(in.input, old))
	}
	return in
}

// showProblems puts each problem beside its field, keeping one already
// there. A kept secret that cannot follow a moved URL is shown as not
// stored, so that its value is asked for again.
func (in *integrationInput) showProblems(problems []app.Problem) {
	f := &in.form
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	for _, p := range problems {
		if _, taken := f.Errors[p.Field]; taken {
			continue
		}
		problem, fix := p.Sentences()
		switch p.Code {
		case app.ProblemSecretMoved:
			fix = "Type each secret header again below, or remove it."
			for _, i := range in.keptRows {
				f.Secrets[i].Stored = false
			}
		case app.ProblemRenameUnconfirmed:
			fix = "Tick Rename " + f.OriginalName + " below to confirm."
		}
		f.Errors[p.Field] = problem + " " + fix
	}
}
