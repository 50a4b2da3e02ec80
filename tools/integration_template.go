package tools

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// A template is filled by escaping each value for the place it lands, so
// that a value is always data and never structure: path-escaped in the
// path (a / or .. cannot add a segment), query-escaped in the query (an &
// or = cannot add a parameter), JSON-encoded in the body (a quote cannot
// end its string). The scheme, host and port are literal text that no
// value reaches, which Validate checks.

// fillURL fills the URL template with vals.
func fillURL(tmpl string, vals map[string]paramValue) string {
	var b strings.Builder
	inQuery := false
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c == '?' {
			inQuery = true
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		name, n, ok := placeholderAt(tmpl, i)
		if !ok {
			b.WriteByte(c)
			continue
		}
		text := vals[name].text
		if inQuery {
			b.WriteString(url.QueryEscape(text))
		} else {
			b.WriteString(escapePathValue(text))
		}
		i += n - 1
	}
	return b.String()
}

// escapePathValue path-escapes v, and also escapes a value made only of
// dots, so that "." or ".." cannot become a dot segment that a server
// resolves to another path.
func escapePathValue(v string) string {
	if v != "" && strings.Trim(v, ".") == "" {
		return strings.Repeat("%2E", len(v))
	}
	return url.PathEscape(v)
}

// fillBody fills the JSON body template with vals: a placeholder inside a
// JSON string gets the value's text escaped for that string; one outside
// a string gets the value as JSON (a string quoted, a number bare, a
// missing optional value null).
func fillBody(tmpl string, vals map[string]paramValue) []byte {
	return expandBody(tmpl, func(name string, inString bool) []byte {
		v, present := vals[name]
		switch {
		case inString:
			quoted := jsonText(v.text)
			return quoted[1 : len(quoted)-1]
		case !present:
			return []byte("null")
		}
		return v.json
	})
}

// expandBody copies the body template, replacing each {name} placeholder
// with what fill returns for it. It tracks JSON strings, so fill knows
// whether the placeholder sits inside one.
func expandBody(tmpl string, fill func(name string, inString bool) []byte) []byte {
	var b bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case c == '{':
			if name, n, ok := placeholderAt(tmpl, i); ok {
				b.Write(fill(name, inString))
				i += n - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

// jsonText encodes s as a JSON string without HTML escaping, so that the
// body says exactly what the agent passed.
func jsonText(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// checkBodyTemplate checks that the body template is valid JSON once
// every placeholder is filled, and marks the parameters it uses.
func checkBodyTemplate(tmpl string, params []IntegrationParam, used map[string]bool) *IntegrationError {
	if strings.TrimSpace(tmpl) == "" {
		return nil
	}
	types := map[string]ParamType{}
	for _, p := range params {
		types[p.Name] = p.Type
	}
	undefined := ""
	filled := expandBody(tmpl, func(name string, inString bool) []byte {
		t, defined := types[name]
		if !defined && undefined == "" {
			undefined = name
		}
		if defined {
			used[name] = true
		}
		v := sampleValue(t)
		if inString {
			return []byte(v.text)
		}
		return v.json
	})
	if undefined != "" {
		return &IntegrationError{Problem: "{" + undefined + "} names no parameter", Fix: "add a parameter named " + undefined + ", or fix the placeholder's spelling"}
	}
	var v any
	if err := json.Unmarshal(filled, &v); err != nil {
		return &IntegrationError{Problem: "the body is not valid JSON once its placeholders are filled (" + err.Error() + ")",
			Fix: `write JSON with bare placeholders for whole values, e.g. {"order": {order_id}, "note": "Ticket {ticket}"}`}
	}
	return nil
}

// sampleValue is a value of type t, for checking templates.
func sampleValue(t ParamType) paramValue {
	switch t {
	case ParamInteger, ParamNumber:
		return paramValue{text: "1", json: []byte("1")}
	case ParamBoolean:
		return paramValue{text: "true", json: []byte("true")}
	}
	return paramValue{text: "x", json: []byte(`"x"`)}
}
