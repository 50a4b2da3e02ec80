package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// paramValue is one checked parameter value in its two forms: text for
// the URL, JSON for the body.
type paramValue struct {
	text string
	json []byte
}

// ParamsFromJSON checks the parameters an agent passed as JSON against
// in's parameters: no unknown names, every required one present, each of
// its declared type.
func (in *Integration) ParamsFromJSON(raw map[string]json.RawMessage) (map[string]paramValue, error) {
	if err := in.checkNames(keys(raw)); err != nil {
		return nil, err
	}
	out := map[string]paramValue{}
	for _, p := range in.Params {
		r, ok := raw[p.Name]
		if !ok || string(bytes.TrimSpace(r)) == "null" {
			if p.Required {
				return nil, in.missing(p)
			}
			continue
		}
		v, err := p.fromJSON(r)
		if err != nil {
			return nil, err
		}
		out[p.Name] = v
	}
	return out, nil
}

// ParamsFromText checks parameters typed into a form: an empty field is an
// absent value.
func (in *Integration) ParamsFromText(text map[string]string) (map[string]paramValue, error) {
	if err := in.checkNames(keys(text)); err != nil {
		return nil, err
	}
	out := map[string]paramValue{}
	for _, p := range in.Params {
		s := text[p.Name]
		if s == "" {
			if p.Required {
				return nil, in.missing(p)
			}
			continue
		}
		var r json.RawMessage
		if p.Type == ParamString {
			r = jsonText(s)
		} else {
			r = json.RawMessage(strings.TrimSpace(s))
		}
		v, err := p.fromJSON(r)
		if err != nil {
			return nil, err
		}
		out[p.Name] = v
	}
	return out, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (in *Integration) paramNames() string {
	if len(in.Params) == 0 {
		return "it takes no parameters"
	}
	names := make([]string, len(in.Params))
	for i, p := range in.Params {
		names[i] = p.Name
	}
	return "its parameters are " + strings.Join(names, ", ")
}

func (in *Integration) checkNames(given []string) error {
	for _, k := range given {
		if !slices.ContainsFunc(in.Params, func(p IntegrationParam) bool { return p.Name == k }) {
			return &IntegrationError{Field: k, Problem: in.Name + " has no parameter " + k, Fix: "remove it; " + in.paramNames()}
		}
	}
	return nil
}

func (in *Integration) missing(p IntegrationParam) error {
	fix := fmt.Sprintf("pass %s (%s)", p.Name, p.Type)
	if d := strings.TrimSpace(p.Description); d != "" {
		fix += ": " + d
	}
	return &IntegrationError{Field: p.Name, Problem: "the required parameter " + p.Name + " is missing", Fix: fix}
}

// fromJSON checks that r is a value of p's type.
func (p IntegrationParam) fromJSON(r json.RawMessage) (paramValue, error) {
	s := string(bytes.TrimSpace(r))
	bad := func(want string) error {
		return &IntegrationError{Field: p.Name, Input: s, Problem: "parameter " + p.Name + " must be " + want, Fix: "pass " + want + " for " + p.Name}
	}
	switch p.Type {
	case ParamString:
		var v string
		if err := json.Unmarshal(r, &v); err != nil {
			return paramValue{}, bad("a string")
		}
		return paramValue{text: v, json: jsonText(v)}, nil
	case ParamInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return paramValue{}, bad("a whole number, such as 42")
		}
		t := strconv.FormatInt(n, 10)
		return paramValue{text: t, json: []byte(t)}, nil
	case ParamNumber:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !json.Valid([]byte(s)) {
			return paramValue{}, bad("a number, such as 4.5")
		}
		t := strconv.FormatFloat(f, 'f', -1, 64)
		return paramValue{text: t, json: []byte(t)}, nil
	case ParamBoolean:
		if s != "true" && s != "false" {
			return paramValue{}, bad("true or false")
		}
		return paramValue{text: s, json: []byte(s)}, nil
	}
	return paramValue{}, bad("a value of a known type")
}
