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
	for _, k := range []string{"status", "comment"} {
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
	if len(problems) > 0 {
		return problems
	}
	before, err := a.store.RefusalByID(ctx, id)
	if err != nil {
		return err
	}
	record := models.Audit{
		Actor: actor, Action: ActionRefusalReview, Target: "refusal " + strconv.FormatInt(id, 10),
		Before: reviewText(before.Status, before.Comment), After: reviewText(status, comment),
	}
	return a.store.ReviewRefusal(ctx, id, status, comment, actor, record)
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
