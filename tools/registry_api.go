package tools

import (
	"encoding/json"
	"net/http"
	"path"
	"strings"

	"github.com/outboundhq/outbound/guard"
)

// API serves POST /api/v1/tools/{name} for every tool of the registry,
// run-time ones included, for agents that speak plain HTTP. The name is
// the last element of the path; a name that is no tool is a JSON 404
// naming the tools. The agent is the token's name; the turn is (agent,
// thread, trigger), where "thread" and "trigger" are the API's own fields
// beside the tool's input. The ticket is the input's "ticket", or the
// X-Outbound-Ticket header.
func (r *Registry) API(agents Agents) *ToolAPI {
	return &ToolAPI{reg: r, agents: agents}
}

// ToolAPI is the registry's JSON API.
type ToolAPI struct {
	reg    *Registry
	agents Agents
	only   string
}

// ToolAPI serves one tool at whatever path it is mounted on.
func (r *Registry) ToolAPI(name string, agents Agents) *ToolAPI {
	return &ToolAPI{reg: r, agents: agents, only: name}
}

// Serves reports whether the API answers a call of the tool name: every
// tool Names lists, and a tool switched off (the browser tools while the
// browser setting is off), which answers with why, as over MCP. It is one
// lookup, where Names builds every tool (each integration's and its
// schema).
func (a *ToolAPI) Serves(name string) bool {
	if a.only != "" {
		return name == a.only
	}
	_, ok := a.reg.Lookup(name)
	return ok
}

// Names lists the tools the API serves.
func (a *ToolAPI) Names() []string {
	if a.only != "" {
		return []string{a.only}
	}
	return a.reg.Names()
}

func (a *ToolAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := a.only
	if name == "" {
		name = path.Base(r.URL.Path)
	}
	t, ok := a.reg.Lookup(name)
	if !ok {
		unknown := &UnknownToolError{Name: name, Known: a.reg.Names()}
		WriteAPIError(w, &APIError{Status: http.StatusNotFound, Code: "not_found", Message: unknown.Error(), Fix: unknown.Fix()})
		return
	}
	// The example is for the messages of a bad request, made only then.
	example := func() string { return apiExample(t.Example) }
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		WriteAPIError(w, &APIError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
			Message: r.Method + " is not allowed here.", Fix: "Send POST with a JSON body such as " + example() + "."})
		return
	}
	agent, err := authenticate(r, a.agents)
	if err != nil {
		WriteAPIError(w, err)
		return
	}
	var body map[string]json.RawMessage
	if err := decodeBody(w, r, &body, example); err != nil {
		WriteAPIError(w, err)
		return
	}
	turn := Turn{Agent: agent, Ticket: r.Header.Get(guard.TicketHeader)}
	for _, f := range [...]struct {
		field string
		into  *string
	}{{"thread", &turn.Thread}, {"trigger", &turn.Trigger}} {
		field, into := f.field, f.into
		raw, ok := body[field]
		if !ok {
			continue
		}
		delete(body, field)
		if json.Unmarshal(raw, into) != nil {
			WriteAPIError(w, &APIError{Status: http.StatusBadRequest, Code: "bad_request",
				Message: "The field " + field + " must be a string.", Fix: "Send a JSON object such as " + example() + "."})
			return
		}
	}
	ctx := WithConfirmer(r.Context(), apiNoPerson)
	res, err := a.reg.Call(ctx, Call{Tool: t.Name, Turn: turn, Fields: body, From: "body"})
	if err != nil {
		WriteAPIError(w, err)
		return
	}
	if res.InputError() {
		WriteAPIError(w, &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: res.Refusal.Message, Fix: res.Refusal.Fix})
		return
	}
	writeJSON(w, http.StatusOK, res.API)
}

// apiNoPerson answers a side effect's confirmation on the API: nobody is
// in the loop of an API call to confirm it.
var apiNoPerson = NoPerson("The JSON API has no person in the loop to ask.",
	"Tell the person this step needs their confirmation: they can do it themselves, or connect the agent through MCP with a client that supports elicitation, which asks them.")

// apiExample adds the API's own fields to a tool's example input.
func apiExample(input string) string {
	input = strings.TrimSpace(input)
	if input == "" || input == "{}" {
		return `{"thread": "T-1"}`
	}
	return strings.TrimSuffix(input, "}") + `, "thread": "T-1"}`
}
