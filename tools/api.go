package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools/extract"
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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// fetchRequest is the body of POST /api/v1/tools/fetch_url.
type fetchRequest struct {
	URL     string `json:"url"`
	Start   int    `json:"start"`
	Thread  string `json:"thread"`
	Trigger string `json:"trigger"`
}

// FetchResponse is the API's answer. A refusal is a result, not an API
// error: ok is false and error carries the guard's value.
type FetchResponse struct {
	OK             bool           `json:"ok"`
	Error          *guard.Refusal `json:"error,omitempty"`
	URL            string         `json:"url,omitempty"`
	RedirectedFrom string         `json:"redirected_from,omitempty"`
	Status         int            `json:"status,omitempty"`
	Title          string         `json:"title,omitempty"`
	Start          int            `json:"start"`
	End            int            `json:"end"`
	Total          int            `json:"total"`
	NextStart      *int           `json:"next_start"`
	Text           string         `json:"text"`
	Links          []extract.Link `json:"links"`
	// Answer is exactly the text an agent reads over MCP.
	Answer string `json:"answer"`
}

// JSON returns the result in the API's shape.
func (r *FetchResult) JSON() FetchResponse {
	out := FetchResponse{OK: r.OK(), Error: r.Refusal, Answer: r.Answer(), Links: []extract.Link{}}
	if r.Refusal != nil {
		return out
	}
	out.URL, out.RedirectedFrom, out.Status, out.Title = r.URL, r.RedirectedFrom, r.Status, r.Title
	out.Start, out.End, out.Total, out.Text = r.Part.start, r.Part.end, r.Part.total, r.Part.text
	if r.Part.end < r.Part.total {
		next := r.Part.end
		out.NextStart = &next
	}
	if r.Links != nil {
		out.Links = r.Links
	}
	return out
}

const maxAPIBody = 64 << 10

// FetchAPI serves POST /api/v1/tools/fetch_url for agents that speak plain
// HTTP. The agent is the token's name; the turn is (agent, thread, trigger).
func FetchAPI(f *Fetcher, agents Agents) http.Handler {
	return toolAPI(agents, func(w http.ResponseWriter, r *http.Request, agent string) {
		req, err := decodeFetchRequest(w, r)
		if err != nil {
			WriteAPIError(w, err)
			return
		}
		res := f.Fetch(r.Context(), Turn{Agent: agent, Thread: req.Thread, Trigger: req.Trigger}, FetchInput{URL: req.URL, Start: req.Start})
		writeJSON(w, http.StatusOK, res.JSON())
	})
}

func authenticate(r *http.Request, agents Agents) (string, error) {
	token, ok := bearerToken(r)
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

func decodeFetchRequest(w http.ResponseWriter, r *http.Request) (fetchRequest, error) {
	var req fetchRequest
	err := decodeBody(w, r, &req, `{"url": "https://status.example.com/", "start": 0, "thread": "T-1", "trigger": "msg-1"}`)
	if err == nil && strings.TrimSpace(req.URL) == "" {
		err = &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body has no url.", Fix: `Add "url": "https://…" to the body.`}
	}
	return req, err
}

// decodeBody reads one JSON object into v, refusing unknown fields, other
// content types, oversized bodies and trailing values, each with a fix
// that shows example.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, example string) error {
	// curl -d sends application/x-www-form-urlencoded unless told
	// otherwise; the body is read as JSON either way.
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return &APIError{Status: http.StatusUnsupportedMediaType, Code: "bad_content_type",
			Message: fmt.Sprintf("The body is %s, not JSON.", ct), Fix: "Send Content-Type: application/json."}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: "The body is over 64 KB.", Fix: "Send a body like " + example + "."}
		}
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: jsonProblem(err), Fix: "Send a JSON object such as " + example + "."}
	}
	if dec.More() {
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body holds more than one JSON value.", Fix: "Send one JSON object."}
	}
	return nil
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

// toolAPI wraps a tool's handler with the API's method and token checks.
func toolAPI(agents Agents, serve func(w http.ResponseWriter, r *http.Request, agent string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			WriteAPIError(w, &APIError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: r.Method + " is not allowed here.", Fix: `Send POST with a JSON body such as {"url": "https://status.example.com/"}.`})
			return
		}
		agent, err := authenticate(r, agents)
		if err != nil {
			WriteAPIError(w, err)
			return
		}
		serve(w, r, agent)
	})
}
