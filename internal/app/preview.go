package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// A safe preview lets support staff see what a link from a ticket holds
// without their own browser touching the site: the server reads it the
// way an agent would, through the tool registry and so through the guard
// under the policy in force, and the console shows the text and a
// screenshot inlined. Going through Registry.Call (not the fetcher
// directly) is what makes a preview one decision record like any agent
// call: its log line, its metric and, if refused, its refusal row.

// MaxPreviewTicket bounds the ticket id a preview is filed under: the
// guard's bound for every ticket, so a preview is found by the ticket it
// was filed under (the timeline and `console ticket` accept the same ids).
const MaxPreviewTicket = guard.MaxTicketLen

// PreviewThread is the thread every preview's calls are recorded in, so
// the refusal log and the decision log tell previews from agents' calls.
const PreviewThread = "preview"

// Preview viewport: what a person's laptop shows.
const (
	previewWidth  = 1280
	previewHeight = 800
)

// PreviewRequest is one preview: a person (Actor, a console user) reads
// URL, optionally for a help-desk Ticket.
type PreviewRequest struct {
	Actor  string
	URL    string
	Ticket string
}

// PreviewProblems are the fields of a preview request that cannot be
// used, by form field ("url", "ticket"), each a sentence naming the
// problem and its fix. Nothing is read when there is any.
type PreviewProblems map[string]string

func (p PreviewProblems) Error() string {
	var parts []string
	for _, k := range []string{"url", "ticket"} {
		if msg := p[k]; msg != "" {
			parts = append(parts, k+": "+msg)
		}
	}
	return "nothing was read: " + strings.Join(parts, " ")
}

// Preview is what a preview found: fetch_url's answer exactly as an agent
// reads it (Text) or its refusal, and a screenshot when the browser is
// available (PNG), or why there is none.
type Preview struct {
	URL    string
	Ticket string
	// Agent is the name the calls were recorded under.
	Agent string
	// Refusal is fetch_url's refusal, as the admin surfaces render it
	// (the full value, not ForAgent). Nil when the page was read.
	Refusal *guard.Refusal
	// Text is fetch_url's answer, the very text an agent reads.
	Text string
	// PNG is take_screenshot's image; nil with ShotProblem saying why.
	PNG         []byte
	ShotProblem *guard.Refusal
	// NoBrowser is set when this console runs no screenshot tool at all.
	NoBrowser bool
}

// Previews runs previews through one tool registry: the console's own,
// which serves MCP and the API, so a preview shares its page cache and
// its records with agents' calls.
type Previews struct {
	app *App
	reg *tools.Registry
	// seq makes each preview its own turn, so that one person's previews
	// never spend the reads_per_turn budget of the next.
	seq atomic.Int64
}

// Previews returns the preview operation over reg.
func (a *App) Previews(reg *tools.Registry) *Previews { return &Previews{app: a, reg: reg} }

// PreviewAgent is the agent name a console user's previews are recorded
// under, the same as their tests of an integration.
func PreviewAgent(user string) string { return "console:" + user }

// Preview reads req.URL with fetch_url and, if that was not refused and
// the console runs a browser, photographs it with take_screenshot; both
// calls go through the registry under the policy in force. Every preview
// is audited (ActionPreview), with its ticket and outcome, whether it was
// read or refused. Errors: PreviewProblems for unusable input (nothing is
// read or audited), or the audit's store error.
func (p *Previews) Preview(ctx context.Context, req PreviewRequest) (Preview, error) {
	req.URL, req.Ticket = strings.TrimSpace(req.URL), strings.TrimSpace(req.Ticket)
	if problems := previewProblems(req); len(problems) > 0 {
		return Preview{}, problems
	}
	// A person previews a link agents may not read yet: the allowlist
	// admits what it lists but narrows nothing (PublicOnly); the
	// internal-address floor and every other check apply as for agents.
	turn := tools.Turn{Agent: PreviewAgent(req.Actor), Thread: PreviewThread,
		Trigger: "preview " + strconv.FormatInt(p.seq.Add(1), 10) + " by " + req.Actor, Ticket: req.Ticket, PublicOnly: true}
	out := Preview{URL: req.URL, Ticket: req.Ticket, Agent: turn.Agent}
	args, _ := json.Marshal(map[string]string{"url": req.URL})
	res, err := p.reg.Call(ctx, tools.Call{Tool: tools.FetchURLName, Turn: turn, Args: args, From: "input"})
	if err != nil {
		return Preview{}, err
	}
	out.Refusal, out.Text = res.Refusal, res.Text
	if res.Refusal == nil {
		p.screenshot(ctx, turn, &out)
	}
	if err := p.app.store.RecordAudit(ctx, previewAudit(req, out)); err != nil {
		return Preview{}, err
	}
	return out, nil
}

// screenshot adds take_screenshot's image of out.URL, or why there is
// none. A console without the tool says so rather than failing.
func (p *Previews) screenshot(ctx context.Context, turn tools.Turn, out *Preview) {
	if _, ok := p.reg.Lookup(tools.TakeScreenshotName); !ok {
		out.NoBrowser = true
		return
	}
	args, _ := json.Marshal(map[string]any{"url": out.URL, "width": previewWidth, "height": previewHeight})
	res, err := p.reg.Call(ctx, tools.Call{Tool: tools.TakeScreenshotName, Turn: turn, Args: args, From: "input"})
	switch {
	case err != nil:
		out.ShotProblem = &guard.Refusal{Code: guard.CodeUnreachable, Reason: tools.ReasonBrowser, Kind: guard.KindNetwork,
			Message: "The screenshot could not be taken: " + err.Error() + ".", Fix: "Try again; the text above is complete without it."}
	case res.Refusal != nil:
		out.ShotProblem = res.Refusal
	default:
		out.PNG = res.PNG
	}
}

// previewProblems checks a request before anything is read. The URL's own
// faults (scheme, host, port) are the guard's to word, as a refusal: only
// what the form itself must supply is checked here.
func previewProblems(req PreviewRequest) PreviewProblems {
	problems := PreviewProblems{}
	switch {
	case req.URL == "":
		problems["url"] = "Paste the link from the ticket, e.g. https://status.example.com/."
	case len(req.URL) > 8192:
		problems["url"] = fmt.Sprintf("The link is %d characters long; a link in a ticket is at most 8192. Paste only the link.", len(req.URL))
	case !strings.Contains(req.URL, "://"):
		if u, err := url.Parse("https://" + req.URL); err == nil && u.Hostname() != "" && !strings.ContainsAny(req.URL, " \t") {
			problems["url"] = "Write the whole link with its scheme: https://" + req.URL
		} else {
			problems["url"] = "This is not a link; paste one that starts with https:// or http://."
		}
	}
	var te *guard.TicketError
	if errors.As(guard.CheckTicket(req.Ticket), &te) {
		problems["ticket"] = te.Message + " " + te.Fix
	}
	return problems
}

// previewAudit is a preview's audit record: who read what, for which
// ticket, and what came of it.
func previewAudit(req PreviewRequest, out Preview) models.Audit {
	outcome := "read"
	if r := out.Refusal; r != nil {
		outcome = "refused: " + string(r.Code)
		if r.Reason != "" {
			outcome += " (" + string(r.Reason) + ")"
		}
	}
	after := outcome
	if req.Ticket != "" {
		after = "ticket " + req.Ticket + "; " + outcome
	}
	return models.Audit{Time: time.Now().UTC(), Actor: req.Actor, Action: ActionPreview, Target: req.URL, After: after}
}
