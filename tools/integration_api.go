package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/outboundhq/outbound/guard"
)

// integrationRequest is the body of POST /api/v1/tools/call_integration.
type integrationRequest struct {
	Name    string                     `json:"name"`
	Params  map[string]json.RawMessage `json:"params"`
	Thread  string                     `json:"thread"`
	Trigger string                     `json:"trigger"`
}

// IntegrationResponse is the API's answer, shaped like fetch_url's: a
// refusal is a result (ok false, error set), not an API error.
type IntegrationResponse struct {
	OK          bool           `json:"ok"`
	Error       *guard.Refusal `json:"error,omitempty"`
	Name        string         `json:"name"`
	URL         string         `json:"url,omitempty"`
	Status      int            `json:"status,omitempty"`
	ContentType string         `json:"content_type,omitempty"`
	Text        string         `json:"text"`
	Truncated   bool           `json:"truncated"`
	Total       int            `json:"total"`
	// Answer is exactly the text an agent reads over MCP.
	Answer string `json:"answer"`
}

// JSON returns the result in the API's shape.
func (r *IntegrationResult) JSON() IntegrationResponse {
	out := IntegrationResponse{OK: r.OK(), Error: r.Refusal, Name: r.Name, Answer: r.Answer()}
	if r.Refusal != nil {
		return out
	}
	out.URL, out.Status, out.ContentType = r.URL, r.Status, r.ContentType
	out.Text, out.Truncated, out.Total = r.Body, r.Shown < r.Total, r.Total
	return out
}

// IntegrationAPI serves POST /api/v1/tools/call_integration for agents
// that speak plain HTTP, with the same token check as fetch_url's API.
func IntegrationAPI(x *Integrations, agents Agents) http.Handler {
	example := `Send a JSON object such as {"name": "lookup_order", "params": {"order_id": "A-1"}, "thread": "T-1", "trigger": "msg-1"}.`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			WriteAPIError(w, &APIError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: r.Method + " is not allowed here.", Fix: "Send POST. " + example})
			return
		}
		agent, err := authenticate(r, agents)
		if err != nil {
			WriteAPIError(w, err)
			return
		}
		var req integrationRequest
		if err := decodeJSONBody(w, r, &req, example); err != nil {
			WriteAPIError(w, err)
			return
		}
		if strings.TrimSpace(req.Name) == "" {
			WriteAPIError(w, &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body has no name.", Fix: example})
			return
		}
		res := x.Call(r.Context(), Turn{Agent: agent, Thread: req.Thread, Trigger: req.Trigger}, req.Name, req.Params)
		writeJSON(w, http.StatusOK, res.JSON())
	})
}

// decodeJSONBody reads one JSON object with no unknown fields into v.
func decodeJSONBody(w http.ResponseWriter, r *http.Request, v any, example string) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return &APIError{Status: http.StatusUnsupportedMediaType, Code: "bad_content_type",
			Message: fmt.Sprintf("The body is %s, not JSON.", ct), Fix: "Send Content-Type: application/json."}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: "The body is over 64 KB.", Fix: "Send shorter parameter values."}
		}
		msg := "The body is not valid JSON: " + err.Error() + "."
		if errors.Is(err, io.EOF) {
			msg = "The body is empty."
		}
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: msg, Fix: example}
	}
	if dec.More() {
		return &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body holds more than one JSON value.", Fix: "Send one JSON object."}
	}
	return nil
}
