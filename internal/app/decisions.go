package app

import (
	"context"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// The decisions store keeps every allowed decision that names a ticket,
// for the decision_retention_days setting (default 7 days; 0 keeps none),
// so that a ticket's timeline shows what its agent reached beside what it
// was refused. Refusals stay in the refusal log only, which already has them
// with their review and a longer retention: a timeline reads both
// (timeline.go) rather than writing every refusal twice.

// decisionRows takes the decisions store's rows: the store's batched
// *models.DecisionWriter, which queues them and never blocks a decision.
type decisionRows interface {
	Write(models.Decision) bool
	Close(ctx context.Context) error
	Stats() models.RefusalWriterStats
}

// recordDecision queues an allowed record's row, when it names a ticket
// and the store is on. A decision with no ticket is on no timeline, so the
// proxy's unlabelled traffic costs nothing here; a labelled one costs a
// copy into a bounded queue and its share of a batched INSERT.
func (a *App) recordDecision(rec guard.Record) {
	if rec.Refusal != nil || rec.Caller.Ticket == "" || a.decisions == nil {
		return
	}
	if s := a.settings.Load(); s == nil || s.DecisionRetentionDays <= 0 {
		return
	}
	a.decisions.Write(decisionRow(rec))
}

// decisionRow is the decisions store's row for an allowed Record.
func decisionRow(rec guard.Record) models.Decision {
	c := rec.Caller
	return models.Decision{
		Time: rec.Time, Tool: c.Tool, Agent: c.Agent, Ticket: c.Ticket, Thread: c.Thread, Trigger: c.Trigger,
		Host: rec.Host, Port: int(rec.Port), URL: rec.URL, Outcome: models.DecisionAllowed,
		Cached: rec.Cached, Proxied: rec.Proxied, ElapsedMS: rec.Elapsed.Milliseconds(),
	}
}

// purgeDecisions trims the decisions store to its retention; with the
// store off, it empties it.
func (a *App) purgeDecisions(ctx context.Context) {
	days := a.Settings().DecisionRetentionDays
	now := purgeClock()
	cutoff := retentionCutoff(now, days)
	if days <= 0 {
		cutoff = now.Add(time.Minute)
	}
	n, err := a.store.PurgeDecisionsBefore(ctx, cutoff)
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.Error("decisions purge failed", "err", err)
	case n > 0:
		a.log.Info("decisions purged", "deleted", n, "decision_retention_days", days)
	}
}
