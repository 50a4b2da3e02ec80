package tools

// A tool's input is checked against its schema before the tool runs, on
// every transport, so a bound written in the schema an MCP client sees is
// the bound the API and the CLI enforce too. The check covers what the
// tools' schemas use: an object of typed properties, required ones, no
// others, and minimum, maximum and maxLength.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outboundhq/outbound/guard"
)

// InputError is input that does not match a tool's schema, in sentences
// for the agent: what is wrong and how to fix it.
type InputError struct {
	Message string
	Fix     string
}

func (e *InputError) Error() string { return e.Message }

// input decodes raw as an object, takes the call's ticket out of it
// (registry_ticket.go), and checks the rest: with t.Check when set,
// otherwise against t.Schema. from names the input in messages.
func (t *Tool) input(raw json.RawMessage, fields map[string]json.RawMessage, from string) (map[string]json.RawMessage, string, error) {
	if from == "" {
		from = "input"
	}
	example := "Send an object such as " + t.Example + "."
	args := fields
	if args == nil {
		args = map[string]json.RawMessage{}
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
			if trimmed[0] != '{' || json.Unmarshal(trimmed, &args) != nil {
				return nil, "", &InputError{Message: fmt.Sprintf("The %s must be a JSON object.", from), Fix: example}
			}
		}
	}
	var ticket string
	if !t.ownsTicket() {
		var err error
		if ticket, err = takeTicket(args); err != nil {
			return nil, "", err
		}
	}
	if t.Check != nil {
		return args, ticket, t.Check(args)
	}
	return args, ticket, checkObject(t.Schema, args, from, example)
}

func checkObject(s *jsonschema.Schema, args map[string]json.RawMessage, from, example string) error {
	if s == nil {
		return nil
	}
	for _, name := range s.Required {
		if v, ok := args[name]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return &InputError{Message: fmt.Sprintf("The %s has no %s.", from, name), Fix: fmt.Sprintf("Add %q to the %s: %s", name, from, example)}
		}
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names) // the first problem reported is the same every time
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			if s.AdditionalProperties != nil {
				return &InputError{Message: fmt.Sprintf("The %s has an unknown field %q.", from, name), Fix: example}
			}
			continue
		}
		if err := checkValue(name, p, args[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one property's value against its type and bounds.
func checkValue(name string, p *jsonschema.Schema, raw json.RawMessage) error {
	if p.Type == "string" && plainString(raw) {
		// The string as sent is its text: checked without decoding,
		// which every call of a tool paid for its URL.
		if p.MaxLength != nil {
			return checkLength(name, utf8.RuneCount(raw[1:len(raw)-1]), *p.MaxLength)
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return &InputError{Message: fmt.Sprintf("The field %s is not valid JSON.", name), Fix: "Send " + name + " as " + typeWords(p.Type) + "."}
	}
	if v == nil {
		return nil // null is "not given"; a required field was checked before
	}
	wrong := func() error {
		return &InputError{Message: fmt.Sprintf("The field %s must be %s, not %s.", name, typeWords(p.Type), withArticle(jsonTypeOf(v))),
			Fix: "Send " + name + " as " + typeWords(p.Type) + "."}
	}
	switch p.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return wrong()
		}
		if p.MaxLength != nil {
			return checkLength(name, utf8.RuneCountInString(s), *p.MaxLength)
		}
	case "integer", "number":
		n, ok := v.(float64)
		if !ok || (p.Type == "integer" && n != math.Trunc(n)) {
			return wrong()
		}
		if (p.Minimum != nil && n < *p.Minimum) || (p.Maximum != nil && n > *p.Maximum) {
			return &InputError{Message: fmt.Sprintf("The field %s is %s; it must be %s.", name, formatNumber(n), rangeWords(p)),
				Fix: fmt.Sprintf("Send %s %s.", name, rangeWords(p))}
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return wrong()
		}
	case "object":
		if _, ok := v.(map[string]any); !ok {
			return wrong()
		}
	}
	return nil
}

// checkLength refuses a string field of n characters over limit.
func checkLength(name string, n, limit int) error {
	if n > limit {
		return &InputError{Message: fmt.Sprintf("The field %s has %d characters, over the limit of %d.", name, n, limit),
			Fix: fmt.Sprintf("Send at most %d characters.", limit)}
	}
	return nil
}

// plainString reports whether raw, a value a JSON decoder read, is a
// string without escapes (and no space around it): its bytes between the
// quotes are then exactly its text, each invalid UTF-8 byte counting as
// the one U+FFFD a decoder makes of it.
func plainString(raw json.RawMessage) bool {
	return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0
}

// plainText is the text of raw, a string a JSON decoder read, when its
// bytes are the text as they stand: a plainString in valid UTF-8 (a
// decoder turns each invalid byte into U+FFFD).
func plainText(raw []byte) (string, bool) {
	if !plainString(raw) || !utf8.Valid(raw[1:len(raw)-1]) {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

func typeWords(t string) string {
	switch t {
	case "integer":
		return "a whole number"
	case "boolean":
		return "true or false"
	case "object":
		return "an object"
	case "":
		return "a value"
	}
	return "a " + t
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}

// rangeWords says a property's bounds: "0 or more", "from 100 to 3840".
func rangeWords(p *jsonschema.Schema) string {
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		return fmt.Sprintf("from %s to %s", formatNumber(*p.Minimum), formatNumber(*p.Maximum))
	case p.Minimum != nil:
		return formatNumber(*p.Minimum) + " or more"
	case p.Maximum != nil:
		return "at most " + formatNumber(*p.Maximum)
	}
	return "in range"
}

func formatNumber(n float64) string { return fmt.Sprint(n) }

// inputRefusal is the result of a call refused for its input: a refusal
// like any other, recorded and shown to the agent, marked so that the
// API answers it as a bad request.
func inputRefusal(tool string, err error) Result {
	msg, fix := err.Error(), "Check the input against the tool's schema."
	switch e := err.(type) {
	case *InputError:
		msg, fix = e.Message, e.Fix
	case *IntegrationError:
		msg, fix = e.Sentences()
	}
	r := &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadParams, Message: msg, Fix: fix}
	return Result{Refusal: r, Text: RefusalAnswer(tool, r), API: refusedAPI{Error: r, Answer: RefusalAnswer(tool, r)}, input: true}
}

// refusedAPI is the API's answer for a call refused before its tool ran.
type refusedAPI struct {
	OK     bool           `json:"ok"`
	Error  *guard.Refusal `json:"error"`
	Answer string         `json:"answer"`
}

// object and bounds help the tools write their schemas.
func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: falseSchema()}
}

func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

func bounded(typ, description string, lo, hi *float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: typ, Description: description, Minimum: lo, Maximum: hi}
}

func text(description string, maxLength int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: description, MaxLength: &maxLength}
}
