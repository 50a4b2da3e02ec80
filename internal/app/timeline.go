package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// A ticket's timeline is every egress decision made for it, allowed and
// refused, in the order they were made: the refusals from the refusal log
// and the allowed decisions from the decisions store, merged by time.
// Each source is read newest first and bounded, so a ticket with a
// runaway agent shows its latest activity, and says that older is left out.

// MaxTimelineEvents bounds each source of one timeline.
const MaxTimelineEvents = 500

// The outcomes of a timeline's events.
const (
	OutcomeAllowed = "allowed"
	OutcomeRefused = "refused"
	// OutcomeFailed is a failure of the network, not the policy.
	OutcomeFailed = "failed"
)

// TimelineEvent is one decision of a ticket's timeline.
type TimelineEvent struct {
	Time    time.Time `json:"time"`
	Outcome string    `json:"outcome"`
	Tool    string    `json:"tool,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Thread  string    `json:"thread,omitempty"`
	URL     string    `json:"url"`
	Host    string    `json:"host,omitempty"`
	// Code and Reason are a refusal's; RefusalID links to its page.
	Code      string `json:"code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	RefusalID int64  `json:"refusal_id,omitempty"`
	// Redirected says where a refused request started, when it followed
	// redirects ("Redirected from A to B.").
	Redirected string `json:"redirected,omitempty"`
	Cached     bool   `json:"cached,omitempty"`
	Proxied    bool   `json:"proxied"`
}

// Timeline is a ticket's timeline, oldest event first.
type Timeline struct {
	Ticket string          `json:"ticket"`
	Events []TimelineEvent `json:"events"`
	// Truncated says older events of the ticket were left out.
	Truncated bool `json:"truncated"`
	// RefusalDays and DecisionDays are how long each kind is kept, so a
	// page can say why an old ticket shows refusals only. DecisionDays 0
	// means allowed decisions are not stored.
	RefusalDays  int `json:"refusal_retention_days"`
	DecisionDays int `json:"decision_retention_days"`
}

// timelineSource is what a timeline reads; *models.Store implements it.
type timelineSource interface {
	ListRefusals(ctx context.Context, q models.RefusalQuery) ([]models.Refusal, int64, error)
	DecisionsOfTicket(ctx context.Context, ticket string, limit int) ([]models.Decision, bool, error)
}

// ErrNoTicket is asking for the timeline of an empty ticket.
var ErrNoTicket = errors.New("app: a timeline needs a ticket")

// TicketTimeline reads the timeline of ticket from src, with the settings
// s in force (for the retention it reports). A ticket that no agent could
// have sent is a *guard.TicketError.
func TicketTimeline(ctx context.Context, src timelineSource, s TimelineSettings, ticket string) (Timeline, error) {
	if ticket == "" {
		return Timeline{}, ErrNoTicket
	}
	if err := guard.CheckTicket(ticket); err != nil {
		return Timeline{}, err // a *guard.TicketError, with its fix
	}
	tl := Timeline{Ticket: ticket, RefusalDays: s.RefusalDays, DecisionDays: s.DecisionDays}
	refusals, next, err := src.ListRefusals(ctx, models.RefusalQuery{Ticket: ticket, Limit: MaxTimelineEvents})
	if err != nil {
		return Timeline{}, err
	}
	decisions, more, err := src.DecisionsOfTicket(ctx, ticket, MaxTimelineEvents)
	if err != nil {
		return Timeline{}, err
	}
	tl.Truncated = next != 0 || more
	for _, row := range refusals {
		r := LoggedRefusalOf(row)
		outcome := OutcomeRefused
		if r.KindOf() == guard.KindNetwork {
			outcome = OutcomeFailed
		}
		tl.Events = append(tl.Events, TimelineEvent{
			Time: r.Time, Outcome: outcome, Tool: r.Tool, Agent: r.Agent, Thread: r.Thread, URL: r.URL, Host: r.Host,
			Code: string(r.Code), Reason: string(r.Reason), Message: r.Message, RefusalID: r.ID,
			Redirected: r.Redirected(), Proxied: r.Proxied,
		})
	}
	for _, d := range decisions {
		tl.Events = append(tl.Events, TimelineEvent{
			Time: d.Time.UTC(), Outcome: OutcomeAllowed, Tool: d.Tool, Agent: d.Agent, Thread: d.Thread, URL: d.URL, Host: d.Host,
			Cached: d.Cached, Proxied: d.Proxied,
		})
	}
	if tl.Truncated {
		// Each source kept its newest; drop what is older than the oldest
		// event both still hold, so no gap hides inside the timeline.
		tl.Events = slices.DeleteFunc(tl.Events, func(e TimelineEvent) bool { return e.Time.Before(oldestKept(refusals, decisions, next != 0, more)) })
	}
	slices.SortStableFunc(tl.Events, func(a, b TimelineEvent) int { return a.Time.Compare(b.Time) })
	if tl.Events == nil {
		tl.Events = []TimelineEvent{}
	}
	return tl, nil
}

// oldestKept is the time from which both sources are complete: the oldest
// row of each source that was cut off, the later of the two.
func oldestKept(refusals []models.Refusal, decisions []models.Decision, refusalsCut, decisionsCut bool) time.Time {
	var from time.Time
	if refusalsCut && len(refusals) > 0 {
		from = refusals[len(refusals)-1].Time
	}
	if decisionsCut && len(decisions) > 0 {
		if t := decisions[len(decisions)-1].Time; t.After(from) {
			from = t
		}
	}
	return from
}

// TimelineSettings are the retentions a timeline reports.
type TimelineSettings struct {
	RefusalDays, DecisionDays int
}

// TicketTimeline is the timeline of ticket under the settings in force.
func (a *App) TicketTimeline(ctx context.Context, ticket string) (Timeline, error) {
	s := a.Settings()
	return TicketTimeline(ctx, a.store, TimelineSettings{RefusalDays: s.RetentionDays, DecisionDays: s.DecisionRetentionDays}, ticket)
}
