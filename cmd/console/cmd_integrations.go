package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

const integrationsUsage = "integrations list [--json]\n" +
	"integrations show NAME [--json]\n" +
	"integrations add --name NAME --url URL --description TEXT [--method GET] [--header 'Name: value']… [--secret-header 'Name: value|-']… [--param 'name:type[:required]:description']… [--body JSON]\n" +
	"integrations rm NAME\n" +
	"integrations test NAME [param=value]…"

func runIntegrations(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, args, integrationsUsage, []subcommand{
		{[]string{"list", "ls"}, integrationsList},
		{[]string{"show"}, integrationsShow},
		{[]string{"add"}, integrationsAdd},
		{[]string{"rm", "remove"}, integrationsRemove},
		{[]string{"test"}, integrationsTest},
	})
}

// integrationJSON is an integration as list and show print it. A secret
// header's value is never printed, sealed or not.
type integrationJSON struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	Headers     []headerJSON `json:"headers"`
	Body        string       `json:"body,omitempty"`
	Params      []paramJSON  `json:"params"`
	UpdatedBy   string       `json:"updated_by"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

type headerJSON struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

type paramJSON struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

func integrationView(r models.Integration) integrationJSON {
	out := integrationJSON{Name: r.Name, Description: r.Description, Method: r.Method, URL: r.URLTemplate, Body: r.BodyTemplate,
		Headers: []headerJSON{}, Params: []paramJSON{}, UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt.UTC()}
	for _, h := range r.Headers {
		v := headerJSON{Name: h.Name, Secret: h.Secret}
		if !h.Secret {
			v.Value = h.Value
		}
		out.Headers = append(out.Headers, v)
	}
	for _, p := range r.Params {
		out.Params = append(out.Params, paramJSON{Name: p.Name, Type: p.Type, Required: p.Required, Description: p.Description})
	}
	return out
}

func integrationsList(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("integrations list", &db)
	fs.BoolVar(&asJSON, "json", false, "print the integrations as JSON (secret header values are never printed)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("integrations list takes no arguments")
	}
	a, err := openToRead(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	list, err := a.ListIntegrations(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]integrationJSON, len(list.Rows))
		for i, r := range list.Rows {
			out[i] = integrationView(r)
		}
		return printJSON(e.stdout, out)
	}
	if len(list.Rows) == 0 {
		fmt.Fprintln(e.stdout, "No HTTP integrations. Add one with console integrations add --name NAME --url URL --description TEXT.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD\tURL\tPARAMS")
	for _, r := range list.Rows {
		params := make([]string, len(r.Params))
		for i, p := range r.Params {
			params[i] = app.DescribeParam(p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Method, r.URLTemplate, dash(strings.Join(params, ", ")))
	}
	return tw.Flush()
}

func integrationsShow(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("integrations show", &db)
	fs.BoolVar(&asJSON, "json", false, "print the integration as JSON (secret header values are never printed)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("name one integration: console integrations show NAME [--json] (see console integrations list)")
	}
	a, err := openToRead(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.Integration(ctx, rest[0])
	if err != nil {
		return integrationNotFound(err)
	}
	if asJSON {
		return printJSON(e.stdout, integrationView(st.Row))
	}
	r := st.Row
	fmt.Fprintf(e.stdout, "%s\n  %s %s\n", r.Name, r.Method, r.URLTemplate)
	fmt.Fprintf(e.stdout, "  description: %s\n", r.Description)
	for _, h := range r.Headers {
		fmt.Fprintf(e.stdout, "  header:      %s\n", app.DescribeHeader(h))
	}
	for _, p := range r.Params {
		line := app.DescribeParam(p)
		if p.Description != "" {
			line += ": " + p.Description
		}
		fmt.Fprintf(e.stdout, "  param:       %s\n", line)
	}
	if r.BodyTemplate != "" {
		fmt.Fprintf(e.stdout, "  body:        %s\n", r.BodyTemplate)
	}
	fmt.Fprintf(e.stdout, "  updated:     %s by %s\n", r.UpdatedAt.Local().Format("2006-01-02 15:04"), dash(r.UpdatedBy))
	return nil
}

// repeated is a flag that may be given several times, e.g. --header.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func integrationsAdd(ctx context.Context, e env, args []string) error {
	var db string
	var in app.IntegrationInput
	var headers, secrets, params repeated
	fs := newFlags("integrations add", &db)
	fs.StringVar(&in.Name, "name", "", "the tool `name` agents call, e.g. lookup_order")
	fs.StringVar(&in.Description, "description", "", "what it does and when to use it, written for the agent")
	fs.StringVar(&in.Method, "method", "GET", "the HTTP `method`: GET, POST, PUT, PATCH or DELETE")
	fs.StringVar(&in.URL, "url", "", "the `URL` template, {param} placeholders in the path and query only, e.g. https://api.example.com/orders/{id}")
	fs.StringVar(&in.Body, "body", "", "the `JSON` body template, e.g. {\"id\": {id}} (not with GET)")
	fs.Var(&headers, "header", "a plain `header` as 'Name: value'; repeat for more")
	fs.Var(&secrets, "secret-header", "a secret `header` as 'Name: value', sealed at rest and never shown; 'Name: -' reads the value from stdin")
	fs.Var(&params, "param", "a parameter `spec`: name:type[:required]:description, the type string, integer, number or boolean; repeat for more")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("integrations add takes flags only, but got %q; quote a value containing spaces, e.g. --description \"Look up an order.\"", strings.Join(rest, " "))
	}
	for _, line := range headers {
		h, ok := app.ParseHeaderLine(line)
		if !ok {
			return usagef("--header %q has no colon; write it as 'Name: value', e.g. --header 'Accept: application/json'", line)
		}
		in.Headers = append(in.Headers, h)
	}
	fromStdin := false
	for _, line := range secrets {
		h, ok := app.ParseHeaderLine(line)
		if !ok {
			// Not quoted back: what was typed may be the secret itself.
			return usagef("a --secret-header has no colon; write it as 'Name: value', or 'Name: -' to read the value from stdin")
		}
		h.Secret = true
		if h.Value == "-" {
			if fromStdin {
				return usagef("only one --secret-header can read its value from stdin; give the other values on the command line")
			}
			fromStdin = true
			if h.Value, err = readSecret(e.stdin); err != nil {
				return err
			}
		}
		in.Headers = append(in.Headers, h)
	}
	for _, spec := range params {
		p, err := parseParamFlag(spec)
		if err != nil {
			return err
		}
		in.Params = append(in.Params, p)
	}
	a, err := openApp(ctx, db, app.Options{Repair: true, Log: quietLog(), MustExist: true})
	if err != nil {
		return err
	}
	defer a.Close()
	saved, err := a.CreateIntegration(ctx, app.SaveIntegration{Input: in, Actor: actor(), Version: models.AnyRevision})
	var invalid *app.ValidationError
	var dup *app.DuplicateError
	switch {
	case errors.As(err, &invalid):
		lines := make([]string, len(invalid.Problems))
		for i, p := range invalid.Problems {
			lines[i] = integrationFlagOf(p.Field) + ": " + p.Problem + "; " + p.Fix
		}
		return usagef("nothing was added:\n  %s", strings.Join(lines, "\n  "))
	case errors.As(err, &dup):
		return usagef("an integration named %s already exists; choose another --name, or remove it first with console integrations rm %s", dup.Name, dup.Name)
	case err != nil && !isNotReloaded(err):
		return err
	}
	fmt.Fprintf(e.stdout, "added integration %s: agents can call it as %s once the console picks the change up (within a second)\n", saved.Row.Name, saved.Row.Name)
	return notReloadedWarning(e, err)
}

// integrationFlagOf names the flag a problem's field came from.
func integrationFlagOf(field string) string {
	switch field {
	case "headers":
		return "--header/--secret-header"
	case "params":
		return "--param"
	case "", "name", "description", "method", "url", "body":
		if field == "" {
			return "the integration"
		}
		return "--" + field
	}
	return "--param " + field
}

// parseParamFlag reads --param name:type[:required]:description. The
// description is everything after the type (or after "required"), so it
// may hold colons itself.
func parseParamFlag(spec string) (tools.IntegrationParam, error) {
	name, rest, ok := strings.Cut(spec, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return tools.IntegrationParam{}, usagef("--param %q: write it as name:type[:required]:description, e.g. --param 'order_id:string:required:The order number'", spec)
	}
	typ, rest, _ := strings.Cut(rest, ":")
	p := tools.IntegrationParam{Name: strings.TrimSpace(name), Type: tools.ParamType(strings.ToLower(strings.TrimSpace(typ)))}
	switch {
	case rest == "required":
		p.Required = true
	case strings.HasPrefix(rest, "required:"):
		p.Required, p.Description = true, strings.TrimSpace(strings.TrimPrefix(rest, "required:"))
	default:
		p.Description = strings.TrimSpace(rest)
	}
	return p, nil
}

// readSecret reads one secret value from stdin: the first line, without
// its line ending, so `echo "$TOKEN" | console integrations add …` works.
func readSecret(r io.Reader) (string, error) {
	if r == nil {
		return "", usagef("--secret-header 'Name: -' reads the value from stdin, but there is no stdin; pipe the value in")
	}
	raw, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", fmt.Errorf("reading the secret from stdin: %w", err)
	}
	value, _, _ := strings.Cut(string(raw), "\n")
	value = strings.TrimSuffix(value, "\r")
	if value == "" {
		return "", usagef("--secret-header 'Name: -' read an empty value from stdin; pipe the value in, e.g. printf '%%s' \"$TOKEN\" | console integrations add …")
	}
	return value, nil
}

func integrationsRemove(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("integrations rm", &db)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("name one integration: console integrations rm NAME (see console integrations list)")
	}
	a, err := openForChange(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	err = a.DeleteIntegration(ctx, rest[0], actor(), models.AnyRevision)
	if err != nil && !isNotReloaded(err) {
		return integrationNotFound(err)
	}
	fmt.Fprintf(e.stdout, "removed integration %s: agents no longer see it\n", rest[0])
	return notReloadedWarning(e, err)
}

func integrationsTest(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("integrations test", &db)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("name the integration to call: console integrations test NAME [param=value]…")
	}
	samples := map[string]string{}
	for _, arg := range rest[1:] {
		k, v, ok := strings.Cut(arg, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("%q is not param=value; give each parameter as name=value, e.g. order_id=A-1", arg)
		}
		samples[strings.TrimSpace(k)] = v
	}
	// The call goes through the guard under the stored policy, so the
	// app is opened as the console runs it: a policy that does not load
	// stops the test rather than testing under another.
	a, err := openApp(ctx, db, app.Options{Log: quietLog(), MustExist: true})
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.TestIntegration(ctx, app.TestIntegration{Name: rest[0], Samples: samples, Agent: actor()})
	if err != nil {
		return integrationNotFound(err)
	}
	if res.URL != "" {
		// The agent's answer leaves the URL out; the admin testing it
		// wants to see what was called.
		fmt.Fprintf(e.stdout, "URL called: %s\n", safeText(res.URL))
	}
	fmt.Fprint(e.stdout, safeText(res.Answer())) // the service's own words
	if !res.OK() {
		printAdminFix(e.stderr, res.Refusal)
		return refusedError{}
	}
	return nil
}

// integrationNotFound words a missing integration as a usage mistake.
func integrationNotFound(err error) error {
	var nf *app.NotFoundError
	if errors.As(err, &nf) {
		return usagef("there is no integration named %s; see console integrations list", nf.Name)
	}
	return err
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
