package tools

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// Integration is an HTTP call an admin defined for the agents: a fixed
// host with a templated path, query and JSON body. The agent fills in the
// parameters and never the destination, so an integration is as safe as
// the host its admin chose, and the guard still decides that host.
type Integration struct {
	Name        string // the tool's name, e.g. lookup_order
	Description string // written for the agent
	Method      string
	URL         string // a template: {param} only in the path and query
	Headers     []IntegrationHeader
	Body        string // an optional JSON template
	Params      []IntegrationParam
}

// IntegrationHeader is one request header. A secret's Value is the
// plaintext only in memory: the store keeps it sealed, and no page, log,
// audit record or answer shows it.
type IntegrationHeader struct {
	Name   string
	Value  string
	Secret bool
}

// ParamType is the JSON type of a parameter.
type ParamType string

const (
	ParamString  ParamType = "string"
	ParamInteger ParamType = "integer"
	ParamNumber  ParamType = "number"
	ParamBoolean ParamType = "boolean"
)

// ParamTypes lists the types in the order the console offers them.
var ParamTypes = []ParamType{ParamString, ParamInteger, ParamNumber, ParamBoolean}

// IntegrationParam is one parameter the agent passes.
type IntegrationParam struct {
	Name        string
	Type        ParamType
	Required    bool
	Description string
}

// IntegrationMethods are the methods an integration may use.
var IntegrationMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

var (
	integrationNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{1,40}$`)
	paramNameRE       = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)
)

// IntegrationError is one problem with an integration's definition or a
// call's parameters: the field, the offending input, what is wrong and how
// to fix it.
type IntegrationError struct {
	Field   string // name, description, method, url, headers, body, params, or a parameter's name
	Input   string
	Problem string
	Fix     string
}

// Sentences returns the problem and the fix as sentences for a page or an
// agent: capitalised, each ending with a full stop.
func (e *IntegrationError) Sentences() (problem, fix string) {
	return Sentence(e.Problem), Sentence(e.Fix)
}

func (e *IntegrationError) Error() string {
	if e.Input == "" {
		return fmt.Sprintf("%s: %s; %s", e.Field, e.Problem, e.Fix)
	}
	return fmt.Sprintf("%s %q: %s; %s", e.Field, e.Input, e.Problem, e.Fix)
}

// Validate returns every problem with the definition, at most one per
// field, so that a form can show each beside its input.
func (in *Integration) Validate() []*IntegrationError {
	var errs []*IntegrationError
	add := func(field, input, problem, fix string) {
		for _, e := range errs {
			if e.Field == field {
				return
			}
		}
		errs = append(errs, &IntegrationError{Field: field, Input: input, Problem: problem, Fix: fix})
	}
	switch {
	case in.Name == "":
		add("name", "", "the name is empty", "write a tool name such as lookup_order")
	case slices.Contains(BuiltinNames(), in.Name):
		add("name", in.Name, "the name is taken by a built-in tool", "choose another name, such as "+in.Name+"_api")
	case !integrationNameRE.MatchString(in.Name):
		add("name", in.Name, "a tool name is 2 to 41 characters: a lowercase letter, then lowercase letters, digits or _", "write it like lookup_order")
	}
	switch d := strings.TrimSpace(in.Description); {
	case d == "":
		add("description", "", "the description is empty", "tell the agent what the integration does and when to use it")
	case utf8.RuneCountInString(d) > 2000:
		add("description", "", fmt.Sprintf("the description has %d characters", utf8.RuneCountInString(d)), "keep it under 2000")
	}
	if !slices.Contains(IntegrationMethods, in.Method) {
		add("method", in.Method, "not a supported method", "choose one of "+strings.Join(IntegrationMethods, ", "))
	}
	seen := map[string]bool{}
	for _, p := range in.Params {
		field := "params"
		switch {
		case !paramNameRE.MatchString(p.Name):
			add(field, p.Name, "a parameter name is a lowercase letter, then up to 40 lowercase letters, digits or _", "write it like order_id")
		case seen[p.Name]:
			add(field, p.Name, "the parameter is defined twice", "remove one of them")
		case !slices.Contains(ParamTypes, p.Type):
			add(field, string(p.Type), "parameter "+p.Name+" has an unknown type", "choose string, integer, number or boolean")
		}
		seen[p.Name] = true
	}
	used := map[string]bool{}
	if err := checkURLTemplate(in.URL, seen, used); err != nil {
		add("url", in.URL, err.Problem, err.Fix)
	}
	if err := checkBodyTemplate(in.Body, in.Params, used); err != nil {
		add("body", "", err.Problem, err.Fix)
	}
	if in.Body != "" && in.Method == "GET" {
		add("body", "", "a GET request has no body", "choose POST, PUT or PATCH, or clear the body")
	}
	for _, p := range in.Params {
		if seen[p.Name] && paramNameRE.MatchString(p.Name) && !used[p.Name] {
			add("params", p.Name, "parameter "+p.Name+" is not used in the URL or the body", "place {"+p.Name+"} in the URL or the body, or remove the parameter")
		}
	}
	for _, h := range in.Headers {
		if err := checkHeader(h); err != nil {
			add("headers", h.Name, err.Problem, err.Fix)
		}
	}
	return errs
}

// forbiddenHeaders are set by the HTTP client or describe the connection;
// letting an admin set them would let a definition smuggle a request.
var forbiddenHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Cookie", "User-Agent"}

func checkHeader(h IntegrationHeader) *IntegrationError {
	name := strings.TrimSpace(h.Name)
	switch {
	case name == "" || !httpguts.ValidHeaderFieldName(name):
		return &IntegrationError{Problem: fmt.Sprintf("%q is not a valid header name", h.Name), Fix: "write headers as Name: value, e.g. Accept: application/json"}
	case slices.ContainsFunc(forbiddenHeaders, func(f string) bool { return strings.EqualFold(f, name) }):
		return &IntegrationError{Problem: "the header " + name + " is set by Outbound itself", Fix: "remove it"}
	case !httpguts.ValidHeaderFieldValue(h.Value):
		return &IntegrationError{Problem: "the value of " + name + " holds a line break or control character", Fix: "write the value on one line"}
	case h.Secret && h.Value == "":
		return &IntegrationError{Problem: "the secret header " + name + " has no value", Fix: "type its value, or remove the header"}
	case !h.Secret && credentialHeader(name):
		return &IntegrationError{Problem: "the header " + name + " looks like a credential, and plain headers are shown to every console user and kept in the audit trail",
			Fix: "move it under Secret headers, where it is encrypted and never shown again"}
	}
	return nil
}

// credentialHeader reports header names that carry secrets by convention.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "x-auth" || strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "-token") ||
		strings.HasSuffix(n, "-secret") || strings.HasSuffix(n, "-password") || strings.HasSuffix(n, "apikey") || n == "x-api-key"
}

// placeholderAt reports the parameter name of a {name} placeholder that
// starts at s[i] == '{', and the placeholder's length.
func placeholderAt(s string, i int) (string, int, bool) {
	end := strings.IndexByte(s[i:], '}')
	if end < 2 {
		return "", 0, false
	}
	name := s[i+1 : i+end]
	if !paramNameRE.MatchString(name) {
		return "", 0, false
	}
	return name, end + 1, true
}

// checkURLTemplate checks that the template is an absolute http(s) URL
// whose scheme, host and port are literal text, with placeholders only in
// the path and query, each naming a defined parameter.
func checkURLTemplate(tmpl string, params, used map[string]bool) *IntegrationError {
	fixExample := "write it like https://api.example.com/orders/{order_id}?expand={expand}"
	if strings.TrimSpace(tmpl) == "" {
		return &IntegrationError{Problem: "the URL is empty", Fix: fixExample}
	}
	if strings.ContainsAny(tmpl, " \t\r\n") {
		return &IntegrationError{Problem: "the URL holds whitespace", Fix: "remove the spaces; a parameter's value is escaped when the call is made"}
	}
	scheme, rest, ok := strings.Cut(tmpl, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return &IntegrationError{Problem: "the URL must start with https:// or http://", Fix: fixExample}
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if strings.ContainsAny(authority, "{}") {
		return &IntegrationError{Problem: "a placeholder sits in the host or port", Fix: "write the host and port literally; placeholders may fill only the path and the query"}
	}
	if strings.Contains(tmpl, "#") {
		return &IntegrationError{Problem: "the URL has a #fragment, which is never sent to the server", Fix: "remove the # and what follows it"}
	}
	var sample strings.Builder
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '{':
			name, n, ok := placeholderAt(tmpl, i)
			if !ok {
				return &IntegrationError{Problem: fmt.Sprintf("the { at character %d does not open a {parameter} placeholder", i+1), Fix: "write placeholders as {order_id}; a literal brace must be written %7B or %7D"}
			}
			if !params[name] {
				return &IntegrationError{Problem: "{" + name + "} names no parameter", Fix: "add a parameter named " + name + ", or fix the placeholder's spelling"}
			}
			used[name] = true
			sample.WriteString("x")
			i += n - 1
		case '}':
			return &IntegrationError{Problem: fmt.Sprintf("the } at character %d closes no placeholder", i+1), Fix: "write placeholders as {order_id}; a literal brace must be written %7D"}
		default:
			sample.WriteByte(tmpl[i])
		}
	}
	u, err := url.Parse(sample.String())
	switch {
	case err != nil:
		return &IntegrationError{Problem: "the URL cannot be parsed: " + strings.TrimPrefix(err.Error(), "parse "), Fix: fixExample}
	case u.User != nil:
		return &IntegrationError{Problem: "the URL holds a user name or password", Fix: "remove user:password@ and send credentials as a secret header, e.g. Authorization"}
	case u.Hostname() == "":
		return &IntegrationError{Problem: "the URL has no host", Fix: fixExample}
	}
	return nil
}
