package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// Access requests: support staff turn a refusal into a request for
// access, with a comment; an admin approves it, which adds the entry that
// admits the refused request in the scope of its agent and tool, or
// declines it with a reason. Either way the refusal's review closes with
// the outcome, and every step is audited.

// RequestAccess asks for access from refusal RefusalID.
type RequestAccess struct {
	RefusalID int64
	Comment   string
	Actor     string
}

// RequestAccess files an access request for a refusal that an entry can
// fix, marking the refusal "needs access". Errors: ReviewProblems (the
// comment), *ValidationError (no entry fixes the refusal), a
// models.NotFoundError, a models.DuplicateError (already requested).
func (a *App) RequestAccess(ctx context.Context, req RequestAccess) (models.AccessRequest, error) {
	comment := strings.TrimSpace(req.Comment)
	switch n := utf8.RuneCountInString(comment); {
	case n == 0:
		return models.AccessRequest{}, ReviewProblems{"comment": "Say why the agent needs this host, e.g. the ticket and what the customer asked."}
	case n > MaxReviewComment:
		return models.AccessRequest{}, ReviewProblems{"comment": fmt.Sprintf("The comment is %d characters; shorten it to at most %d, or link to a ticket instead.", n, MaxReviewComment)}
	}
	r, err := a.store.RefusalByID(ctx, req.RefusalID)
	if err != nil {
		return models.AccessRequest{}, err
	}
	v := LoggedRefusalOf(r)
	if v.Remedy.Kind != guard.RemedyAddEntry {
		return models.AccessRequest{}, &ValidationError{Problems: []Problem{{Field: "refusal", Problem: "no allowlist entry would make this request work",
			Fix: "mark the refusal Expected or Reviewed instead; " + strings.TrimSuffix(v.Fix, ".")}}}
	}
	tool := scopeTool(r)
	ar := models.AccessRequest{RefusalID: r.ID, Entry: v.Remedy.Entry, Host: r.Host, Agent: r.Agent, Tool: tool,
		Internal: a.wouldNarrow(r.Agent, tool), Comment: comment, RequestedBy: req.Actor}
	rec := models.Audit{Actor: req.Actor, Action: ActionAccessRequest, Target: "refusal " + strconv.FormatInt(r.ID, 10),
		After: ar.Entry + " for " + scopeOfRequest(ar).String() + ": " + comment}
	return a.store.CreateAccessRequest(ctx, ar, rec)
}

// scopeTool is the tool an approval's scope names for a refusal: the one
// integration the refused call was made for, so that approving admits
// that integration alone (not every integration through
// call_integration), or else the refused tool.
func scopeTool(r models.Refusal) string {
	if r.Integration != "" {
		return r.Integration
	}
	return r.Tool
}

// wouldNarrow reports whether agent's tool reaches the public web, so that
// a plain entry would narrow it and an internal host is what to add.
func (a *App) wouldNarrow(agent, tool string) bool {
	return a.guard.Policy().ReachOf(CallerAs(agent, tool)).PublicWeb
}

// scopeOfRequest is the scope an approval adds the entry in: the refused
// agent and tool.
func scopeOfRequest(r models.AccessRequest) guard.Scope {
	var s guard.Scope
	if r.Agent != "" {
		s.Agents = []string{r.Agent}
	}
	if r.Tool != "" {
		s.Tools = []string{r.Tool}
	}
	return s.Normalized()
}

// AccessRequests lists requests, the pending ones when pending is set.
func (a *App) AccessRequests(ctx context.Context, pending bool) ([]models.AccessRequest, error) {
	status := models.AccessRequestStatus("")
	if pending {
		status = models.AccessPending
	}
	return a.store.ListAccessRequests(ctx, status, 100)
}

// ApproveAccess approves request ID: it adds Entry (prefilled from the
// refusal; the admin may change it) in Scope, as an internal host when
// Internal, and closes the request and the refusal's review.
type ApproveAccess struct {
	ID       int64
	Entry    string
	Scope    guard.Scope
	Internal bool
	Actor    string
	Version  int64
}

// ApproveAccess validates the entry and scope as an add does, then adds
// the entry, closes the request and the refusal's review, with audit
// records, in one transaction, and reloads the guard.
func (a *App) ApproveAccess(ctx context.Context, req ApproveAccess) (EntriesAdded, error) {
	ar, err := a.store.AccessRequestByID(ctx, req.ID)
	if err != nil {
		return EntriesAdded{}, err
	}
	if ar.Status != models.AccessPending {
		return EntriesAdded{}, &NotFoundError{Kind: "pending access request", Name: strconv.FormatInt(req.ID, 10)}
	}
	st, err := a.Allowlist(ctx)
	if err != nil {
		return EntriesAdded{}, err
	}
	if req.Version != models.AnyRevision && req.Version != st.Version {
		return EntriesAdded{}, &ConflictError{Section: models.SectionAllowlist, Expected: req.Version, Current: st.Version}
	}
	add := AddEntries{Entries: []string{req.Entry}, Scope: req.Scope.Normalized(), Internal: req.Internal, Actor: req.Actor}
	entries, _, verr := CheckNewEntries(add, st.EntriesIn(add.Scope))
	if verr == nil {
		verr = a.checkRuleFlags(ctx, add, entries)
	}
	if verr != nil {
		return EntriesAdded{}, verr
	}
	e := entries[0]
	row := models.AllowlistEntry{Entry: e.String(), ScopeKey: add.Scope.Key(), Agents: add.Scope.Agents, Tools: add.Scope.Tools, Internal: add.Internal,
		Note: fmt.Sprintf("Access request #%d (refusal #%d) by %s", ar.ID, ar.RefusalID, ar.RequestedBy), AddedBy: req.Actor, CreatedAt: time.Now().UTC()}
	outcome := "added " + RowText(row)
	records := []models.Audit{
		{Actor: req.Actor, Action: ActionAccessApprove, Target: "access request " + strconv.FormatInt(ar.ID, 10), Before: "pending", After: outcome},
		{Actor: req.Actor, Action: ActionAllowlistAdd, Target: row.Entry, After: EntryWithNote(RowText(row), row.Note)},
	}
	v, err := a.store.DecideAccessRequest(ctx, req.Version, models.AccessDecision{ID: ar.ID, Status: models.AccessApproved, By: req.Actor, Outcome: outcome,
		Review: models.StatusReviewed, ReviewComment: "Access approved: " + outcome + ".", Add: &row}, records...)
	if err != nil {
		return EntriesAdded{}, a.allowlistRace(ctx, req.Version, err)
	}
	after := st
	after.Rows = append(append([]models.AllowlistEntry(nil), st.Rows...), row)
	res := EntriesAdded{Added: entries, Listed: len(after.Rows), Version: v, Mode: ModeChange{Scope: add.Scope, Was: st.ReachOf(add.Scope), Now: after.ReachOf(add.Scope)}}
	res.LeftPublicWeb = res.Mode.Was.PublicWeb && !res.Mode.Now.PublicWeb
	return res, a.reloadAfter(ctx, "allowlist")
}

// DeclineAccess declines request id with a reason, which closes the
// refusal's review as expected, with the audit record.
func (a *App) DeclineAccess(ctx context.Context, id int64, actor, reason string) error {
	reason = strings.TrimSpace(reason)
	switch n := utf8.RuneCountInString(reason); {
	case n == 0:
		return ReviewProblems{"comment": "Give the reason for declining, so the requester knows what to do instead."}
	case n > MaxReviewComment:
		return ReviewProblems{"comment": fmt.Sprintf("The reason is %d characters; shorten it to at most %d.", n, MaxReviewComment)}
	}
	rec := models.Audit{Actor: actor, Action: ActionAccessDecline, Target: "access request " + strconv.FormatInt(id, 10), Before: "pending", After: "declined: " + reason}
	_, err := a.store.DecideAccessRequest(ctx, 0, models.AccessDecision{ID: id, Status: models.AccessDeclined, By: actor, Outcome: reason,
		Review: models.StatusExpected, ReviewComment: "Access declined: " + reason}, rec)
	return err
}

// closeNeedsAccess closes the "needs access" reviews and pending access
// requests that added entries settle: refusals of each literal entry's
// host. It runs after the entries are stored; a failure is logged, not
// returned, since the entries are in force either way.
func (a *App) closeNeedsAccess(ctx context.Context, actor string, rows []models.AllowlistEntry) {
	for _, r := range rows {
		e, err := guard.ParseEntry(r.Entry)
		if err != nil || e.Wildcard() || r.ReportOnly {
			continue
		}
		comment := "Access granted: " + RowText(r) + " was added."
		rec := models.Audit{Actor: actor, Action: ActionRefusalReview, Target: "refusals of " + e.Host(), Before: string(models.StatusNeedsAccess), After: "reviewed: " + comment}
		if _, err := a.store.CloseNeedsAccess(ctx, e.Host(), actor, comment, rec); err != nil {
			a.log.Error("closing needs-access reviews failed", "host", e.Host(), "err", err)
		}
	}
}
