package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/outboundhq/outbound/models"
)

// MaxReviewComment bounds a review comment: room for a paragraph of
// reasoning and a ticket link, not for pasting whole emails into the log.
const MaxReviewComment = 1000

// ReviewProblems are the parts of a review that cannot be saved, by form
// field ("status", "comment"), each a sentence naming the problem and its
// fix. Nothing is saved when there is any.
type ReviewProblems map[string]string

func (p ReviewProblems) Error() string {
	var parts []string
	for _, k := range []string{"refusals", "status", "comment"} {
		if msg := p[k]; msg != "" {
			parts = append(parts, k+": "+msg)
		}
	}
	return "the review was not saved: " + strings.Join(parts, " ")
}

// ReviewRefusal records actor's verdict on refusal id and its audit
// record in one transaction: a review is never saved unrecorded. status
// must be a verdict (not "unreviewed"), comment at most MaxReviewComment
// characters; otherwise it returns ReviewProblems and saves nothing. A
// missing refusal is a models.NotFoundError.
func (a *App) ReviewRefusal(ctx context.Context, actor string, id int64, status models.ReviewStatus, comment string) error {
	if problems := checkReview(status, comment); len(problems) > 0 {
		return problems
	}
	before, err := a.store.RefusalByID(ctx, id)
	if err != nil {
		return err
	}
	return a.store.ReviewRefusal(ctx, id, status, comment, actor, reviewRecord(actor, before, status, comment))
}

// MaxBulkReview bounds one bulk review: a page of the refusal log.
const MaxBulkReview = models.MaxRefusalPage

// ReviewRefusals gives every refusal in ids the same verdict, all or
// none, in one transaction with one audit record each (its own before).
// The checks are ReviewRefusal's, plus: at least one refusal, at most
// MaxBulkReview ("refusals" in ReviewProblems). A missing refusal is a
// models.NotFoundError naming it, and nothing is saved. It returns how
// many refusals were reviewed (ids without repeats).
func (a *App) ReviewRefusals(ctx context.Context, actor string, ids []int64, status models.ReviewStatus, comment string) (int, error) {
	problems := checkReview(status, comment)
	unique := make([]int64, 0, len(ids))
	seen := map[int64]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	switch {
	case len(unique) == 0:
		problems["refusals"] = "No refusal was selected. Tick the refusals to review in the log, then review them."
	case len(unique) > MaxBulkReview:
		problems["refusals"] = fmt.Sprintf("%d refusals were selected; review at most %d at once (one page of the log).", len(unique), MaxBulkReview)
	}
	if len(problems) > 0 {
		return 0, problems
	}
	reviews := make([]models.Audit, len(unique))
	for i, id := range unique {
		before, err := a.store.RefusalByID(ctx, id)
		if err != nil {
			return 0, err
		}
		reviews[i] = reviewRecord(actor, before, status, comment)
	}
	return len(unique), a.store.ReviewRefusals(ctx, unique, status, comment, actor, reviews...)
}

// checkReview is what is wrong with a verdict and its comment.
func checkReview(status models.ReviewStatus, comment string) ReviewProblems {
	problems := ReviewProblems{}
	switch {
	case status == models.StatusUnreviewed:
		problems["status"] = "Choose what this refusal was: Expected (attack), Needs access or Reviewed."
	case !status.Valid():
		problems["status"] = fmt.Sprintf("%q is not a review status; choose Expected (attack), Needs access or Reviewed.", string(status))
	}
	if n := utf8.RuneCountInString(comment); n > MaxReviewComment {
		problems["comment"] = fmt.Sprintf("The comment is %d characters; shorten it to at most %d, or link to a ticket instead.", n, MaxReviewComment)
	}
	return problems
}

// reviewRecord is the audit record of one review.
func reviewRecord(actor string, before models.Refusal, status models.ReviewStatus, comment string) models.Audit {
	return models.Audit{
		Actor: actor, Action: ActionRefusalReview, Target: "refusal " + strconv.FormatInt(before.ID, 10),
		Before: reviewText(before.Status, before.Comment), After: reviewText(status, comment),
	}
}

// reviewText is a review as the audit trail shows it.
func reviewText(status models.ReviewStatus, comment string) string {
	s := string(status)
	if s == "" {
		s = "unreviewed"
	}
	if comment != "" {
		s += ": " + comment
	}
	return s
}
