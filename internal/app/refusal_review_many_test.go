package app

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

func TestReviewRefusalsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	now := time.Now().UTC()
	rows := []models.Refusal{
		{Time: now, Tool: "fetch_url", Host: "a.example", URL: "https://a.example/", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: now, Tool: "fetch_url", Host: "b.example", URL: "https://b.example/", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: now, Tool: "fetch_url", Host: "c.example", URL: "https://c.example/", Code: "forbidden", Reason: "not_allowlisted"},
	}
	if err := ta.Store().InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	all, _, _ := ta.Store().ListRefusals(ctx, models.RefusalQuery{Limit: 10})
	a, b, c := all[2].ID, all[1].ID, all[0].ID
	if err := ta.ReviewRefusal(ctx, "sam", a, models.StatusExpected, "old"); err != nil {
		t.Fatal(err)
	}
	before := len(ta.audits(t))

	// Refused input saves nothing.
	var problems ReviewProblems
	if _, err := ta.ReviewRefusals(ctx, "sam", nil, models.StatusReviewed, ""); !errors.As(err, &problems) || problems["refusals"] == "" {
		t.Errorf("no selection: %v", err)
	}
	if _, err := ta.ReviewRefusals(ctx, "sam", []int64{a}, models.StatusUnreviewed, ""); !errors.As(err, &problems) || problems["status"] == "" {
		t.Errorf("no verdict: %v", err)
	}
	too := make([]int64, MaxBulkReview+1)
	for i := range too {
		too[i] = int64(i + 1)
	}
	if _, err := ta.ReviewRefusals(ctx, "sam", too, models.StatusReviewed, ""); !errors.As(err, &problems) || problems["refusals"] == "" {
		t.Errorf("too many: %v", err)
	}
	var missing *models.NotFoundError
	if _, err := ta.ReviewRefusals(ctx, "sam", []int64{b, 99999}, models.StatusReviewed, ""); !errors.As(err, &missing) {
		t.Errorf("unknown refusal: %v", err)
	}
	if r, _ := ta.Store().RefusalByID(ctx, b); r.Status != models.StatusUnreviewed || len(ta.audits(t)) != before {
		t.Fatal("a refused bulk review saved something")
	}

	n, err := ta.ReviewRefusals(ctx, "sam", []int64{a, b, c, b}, models.StatusNeedsAccess, "OPS-12")
	if err != nil || n != 3 {
		t.Fatalf("bulk review: %d %v", n, err)
	}
	for _, id := range []int64{a, b, c} {
		if r, _ := ta.Store().RefusalByID(ctx, id); r.Status != models.StatusNeedsAccess || r.Comment != "OPS-12" || r.ReviewedBy != "sam" {
			t.Errorf("refusal %d: %+v", id, r)
		}
	}
	audits := ta.audits(t)[before:]
	if len(audits) != 3 {
		t.Fatalf("%d audit records, want one per refusal", len(audits))
	}
	for _, rec := range audits {
		want := "unreviewed"
		if rec.Target == "refusal "+strconv.FormatInt(a, 10) {
			want = "expected: old"
		}
		if rec.Action != ActionRefusalReview || rec.Actor != "sam" || rec.Before != want || rec.After != "needs_access: OPS-12" {
			t.Errorf("audit %+v", rec)
		}
	}
}
