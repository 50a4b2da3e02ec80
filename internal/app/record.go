package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// The decision log: one JSON line per guard.Record, that is per tool call
// and per proxied request, in the manner of Smokescreen's canonical
// decision line. The field names are constants so that log queries, tests
// and docs spell them one way.
const (
	LogTool = "tool"
	// LogIntegration is the integration a call_integration request was
	// made for ("" for other tools): Caller.Service.
	LogIntegration = "integration"
	LogAgent       = "agent"
	LogThread      = "thread"
	LogTicket      = "ticket"
	LogTrigger     = "trigger"
	LogURL         = "url"
	LogHost        = "host"
	LogPort        = "port"
	LogDecision    = "decision" // allowed or refused; also the line's message
	LogCode        = "code"
	LogReason      = "reason"
	LogKind        = "kind" // policy or network, for a refusal
	LogRemedy      = "remedy"
	LogAddresses   = "addresses"
	LogRedirects   = "redirects"
	LogCached      = "cached"
	LogProxied     = "proxied"
	LogMS          = "ms"
)

// refusalRows takes the refusal log's rows: the store's batched
// *models.RefusalWriter, which queues them and never blocks a decision.
type refusalRows interface {
	Write(models.Refusal) bool
	Close(ctx context.Context) error
	Stats() models.RefusalWriterStats
}

// The values of LogDecision.
const (
	DecisionAllowed = "allowed"
	DecisionRefused = "refused"
	// DecisionWouldRefuse is an allowed request that a report-only
	// allowlist entry would have refused.
	DecisionWouldRefuse = "would_refuse"
)

// record is the one sink of every decision the guard and the tools
// enforce: one log line, one metric increment, and for a refusal or a
// network failure one refusal-log row. The row writer queues and never
// blocks the decision.
func (a *App) record(rec guard.Record) {
	a.logRecord(&rec)
	if a.metrics != nil {
		a.metrics.Record(rec)
	}
	if rec.Refusal != nil && !rec.Burst {
		a.refusals.Write(refusalRow(rec))
	}
	a.recordDecision(rec) // an allowed one, into the decisions store (decisions.go)
	if rec.Refusal == nil && rec.WouldRefuse != nil && a.would != nil {
		a.would.Write(wouldRefusalRow(rec))
	}
}

// logRecord writes rec's line, as a.writeDecisionLine or through slog.
// rec is a pointer to the Recorder's copy: passed by value it was one
// more copy of a Record on the request's stack at each call.
func (a *App) logRecord(rec *guard.Record) {
	if !a.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	if a.decisionLog != nil {
		now := rec.Time // the guard stamps it; one reading of the clock fewer
		if now.IsZero() {
			now = time.Now()
		}
		a.writeDecisionLine(now, rec)
		return
	}
	decision := decisionOf(*rec)
	// Typed attributes: this runs once per proxied request.
	attrs := []slog.Attr{
		slog.String(LogTool, rec.Caller.Tool), slog.String(LogIntegration, rec.Caller.Service), slog.String(LogAgent, rec.Caller.Agent),
		slog.String(LogThread, rec.Caller.Thread), slog.String(LogTicket, rec.Caller.Ticket), slog.String(LogTrigger, rec.Caller.Trigger),
		slog.String(LogURL, rec.URL), slog.String(LogHost, rec.Host), slog.Int(LogPort, int(rec.Port)),
		slog.String(LogDecision, decision),
	}
	if r := rec.WouldRefuse; r != nil && rec.Refusal == nil {
		attrs = append(attrs, slog.String(LogCode, string(r.Code)), slog.String(LogReason, string(r.Reason)))
	}
	if r := rec.Refusal; r != nil {
		attrs = append(attrs, slog.String(LogCode, string(r.Code)), slog.String(LogReason, string(r.Reason)), slog.String(LogKind, string(r.KindOf())),
			slog.String(LogRemedy, string(r.Remedy.Kind)), slog.Any(LogAddresses, addrTexts(r.Addresses)), slog.Any(LogRedirects, rec.Redirects))
	}
	attrs = append(attrs, slog.Bool(LogCached, rec.Cached), slog.Bool(LogProxied, rec.Proxied), slog.Int64(LogMS, rec.Elapsed.Milliseconds()))
	a.log.LogAttrs(context.Background(), slog.LevelInfo, decision, attrs...)
}
