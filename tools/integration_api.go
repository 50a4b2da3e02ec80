package tools

import (
	"encoding/json"
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
	example := `{"name": "lookup_order", "params": {"order_id": "A-1"}, "thread": "T-1", "trigger": "msg-1"}`
	return toolAPI(agents, func(w http.ResponseWriter, r *http.Request, agent string) {
		var req integrationRequest
		if err := decodeBody(w, r, &req, example); err != nil {
			WriteAPIError(w, err)
			return
		}
		if strings.TrimSpace(req.Name) == "" {
			WriteAPIError(w, &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body has no name.", Fix: "Send a JSON object such as " + example + "."})
			return
		}
		res := x.Call(r.Context(), Turn{Agent: agent, Thread: req.Thread, Trigger: req.Trigger}, req.Name, req.Params)
		writeJSON(w, http.StatusOK, res.JSON())
	})
}
