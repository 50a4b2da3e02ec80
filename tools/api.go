package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// APIError is an error of the API itself, as opposed to a tool refusal: a
// bad token, a malformed body. It keeps its HTTP status out of the JSON
// and names the fix, like every error the product shows.
type APIError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

func (e *APIError) Error() string { return e.Message }

// WriteAPIError writes err as {"error": {...}} with its status. Any error
// that is not an *APIError is a 500 whose cause stays in the server log.
func WriteAPIError(w http.ResponseWriter, err error) {
	var ae *APIError
	if !errors.As(err, &ae) {
		ae = &APIError{Status: http.StatusInternalServerError, Code: "internal", Message: "The server failed to handle the request.", Fix: "Try again; if it keeps failing, an admin can find the cause in the server log."}
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="outbound"`)
	}
	writeJSON(w, ae.Status, map[string]*APIError{"error": ae})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	// Canonical keys and shared one-element values that net/http only
	// reads: every answer sets them, and Set allocated both.
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	if a, ok := v.(jsonAppender); ok {
		bp := answerBuffers.Get().(*[]byte)
		b := append(a.appendJSON((*bp)[:0]), '\n') // the newline Encode ends with
		_, _ = w.Write(b)
		if cap(b) <= 64<<10 { // one long page's answer does not pin its buffer
			*bp = b
			answerBuffers.Put(bp)
		}
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// jsonAppender is an answer that writes its own JSON, as encoding/json
// would, without reflection: the answers the API writes most.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noStore         = []string{"no-store"}
	answerBuffers   = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
)

const maxAPIBody = 64 << 10

func authenticate(r *http.Request, agents Agents) (string, error) {
	token, ok := BearerToken(r)
	if !ok {
		return "", &APIError{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "The request has no bearer token.",
			Fix: "Send the agent's token as Authorization: Bearer TOKEN; an admin creates one under Agents or with `console token create NAME`."}
	}
	agent, err := agents.VerifyToken(r.Context(), token)
	if errors.Is(err, ErrBadToken) {
		return "", &APIError{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "The bearer token is unknown or revoked.",
			Fix: "Ask an admin for a new token under Agents, or with `console token create NAME`."}
	}
	return agent, err
}

// decodeBody reads one JSON object into v, refusing unknown fields, other
// content types, oversized bodies and trailing values, each with a fix
// that shows example().
func decodeBody(w http.ResponseWriter, r *http.Request, v any, example func() string) error {
	// curl -d sends application/x-www-form-urlencoded unless told
	// otherwise; the body is read as JSON either way.
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return &APIError{Status: http.StatusUnsupportedMediaType, Code: "bad_content_type",
			Message: fmt.Sprintf("The body is %s, not JSON.", ct), Fix: "Send Content-Type: application/json."}
	}
	body, err := readBody(w, r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: "The body is over 64 KB.", Fix: "Send a body like " + example() + "."}
		}
		// A body cut short says so as it always did ("ends in the
		// middle of a JSON value").
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: jsonProblem(err), Fix: "Send a JSON object such as " + example() + "."}
	}
	if fields, ok := v.(*map[string]json.RawMessage); ok {
		if *fields, ok = splitObject(body); ok {
			return nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: jsonProblem(err), Fix: "Send a JSON object such as " + example() + "."}
	}
	if dec.More() {
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body holds more than one JSON value.", Fix: "Send one JSON object."}
	}
	return nil
}

// readBody reads the whole body, at most maxAPIBody bytes: into a slice of
// its announced length when it has one.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	in := http.MaxBytesReader(w, r.Body, maxAPIBody)
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), maxAPIBody)+bytes.MinRead))
	_, err := buf.ReadFrom(in)
	return buf.Bytes(), err
}

// jsonProblem says what is wrong with a body in the API's terms, not in
// Go's ("cannot unmarshal number into Go struct field fetchRequest.url").
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return "The body is empty."
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("The field %s must be %s, not %s.", te.Field, jsonKind(te.Type.Kind().String()), withArticle(te.Value))
	case errors.As(err, &te):
		return fmt.Sprintf("The body must be a JSON object, not %s.", withArticle(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("The body is not valid JSON (at byte %d: %s).", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "The body has an unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") + "."
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The body ends in the middle of a JSON value."
	}
	return "The body is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ") + "."
}

// withArticle puts "a" or "an" before a JSON type name.
func withArticle(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "int32":
		return "a whole number"
	case "bool":
		return "true or false"
	case "map", "struct":
		return "an object"
	case "slice":
		return "a list"
	}
	return "a " + goKind
}
