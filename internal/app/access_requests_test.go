package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// storedRefusal makes the guard refuse url as agent's tool and returns the
// refusal-log row it left.
func storedRefusal(t *testing.T, ta testApp, agent, tool, url string) models.Refusal {
	t.Helper()
	ctx := guard.WithCaller(context.Background(), guard.Caller{Agent: agent, Tool: tool})
	d := ta.Guard().Decide(ctx, url)
	if d.Allowed {
		t.Fatalf("%s was allowed", url)
	}
	r := d.Refusal()
	r.Agent, r.Tool = agent, tool
	ta.record(guard.Record{Time: time.Now(), Caller: guard.Caller{Agent: agent, Tool: tool}, Refusal: r, URL: url, Host: d.Host, Port: d.Port})
	// The writer batches: wait for the row.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows, _, err := ta.store.ListRefusals(context.Background(), models.RefusalQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			return rows[0]
		}
	}
	t.Fatal("no refusal row was written")
	return models.Refusal{}
}

func TestAccessRequestApprovedAddsAScopedInternalHost(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	ta.resolver.Answer("wiki.intranet.example.com", "10.4.0.2").Answer("news.example.net", "93.184.216.35")
	ref := storedRefusal(t, ta, "helpdesk-bot", "fetch_url", "https://wiki.intranet.example.com/page")

	if _, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Actor: "sam"}); err == nil {
		t.Fatal("a request without a comment was filed")
	}
	ar, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Comment: "ticket 42 needs the wiki", Actor: "sam"})
	if err != nil || ar.Entry != "wiki.intranet.example.com" || !ar.Internal || ar.Agent != "helpdesk-bot" || ar.Tool != "fetch_url" {
		t.Fatalf("RequestAccess = %+v, %v", ar, err)
	}
	if _, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Comment: "again", Actor: "sam"}); !errors.Is(err, models.ErrDuplicate) {
		t.Fatalf("a second pending request: %v", err)
	}
	if got, _ := ta.store.RefusalByID(ctx, ref.ID); got.Status != models.StatusNeedsAccess {
		t.Fatalf("the refusal is %q, want needs_access", got.Status)
	}
	res, err := ta.ApproveAccess(ctx, ApproveAccess{ID: ar.ID, Entry: ar.Entry, Scope: scopeOfRequest(ar), Internal: ar.Internal, Actor: "ada", Version: models.AnyRevision})
	if err != nil || res.LeftPublicWeb {
		t.Fatalf("ApproveAccess = %+v, %v", res, err)
	}
	bot := guard.WithCaller(ctx, guard.Caller{Agent: "helpdesk-bot", Tool: "fetch_url"})
	if d := ta.Guard().Decide(bot, "https://wiki.intranet.example.com/page"); !d.Allowed {
		t.Fatalf("the approved host is refused: %s", d.Message)
	}
	if d := ta.Guard().Decide(bot, "https://news.example.net/"); !d.Allowed {
		t.Fatalf("the approval narrowed the agent's public web: %s", d.Message)
	}
	other := guard.WithCaller(ctx, guard.Caller{Agent: "other-bot", Tool: "fetch_url"})
	if d := ta.Guard().Decide(other, "https://wiki.intranet.example.com/page"); d.Allowed {
		t.Fatal("another agent reaches the host approved for one")
	}
	got, _ := ta.store.RefusalByID(ctx, ref.ID)
	if got.Status != models.StatusReviewed || !strings.Contains(got.Comment, "Access approved") {
		t.Fatalf("the refusal's review: %q %q", got.Status, got.Comment)
	}
	var actions []string
	for _, a := range ta.audits(t) {
		actions = append(actions, a.Action)
	}
	if j := strings.Join(actions, " "); !strings.Contains(j, ActionAccessRequest) || !strings.Contains(j, ActionAccessApprove) || !strings.Contains(j, ActionAllowlistAdd) {
		t.Fatalf("audit: %v", actions)
	}
	if err := ta.DeclineAccess(ctx, ar.ID, "ada", "no"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("declining a closed request: %v", err)
	}
}

func TestAccessRequestDeclined(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	ta.resolver.Answer("wiki.intranet.example.com", "10.4.0.2")
	ref := storedRefusal(t, ta, "bot", "fetch_url", "https://wiki.intranet.example.com/")
	ar, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Comment: "please", Actor: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.DeclineAccess(ctx, ar.ID, "ada", ""); err == nil {
		t.Fatal("declined without a reason")
	}
	if err := ta.DeclineAccess(ctx, ar.ID, "ada", "the wiki holds HR data"); err != nil {
		t.Fatal(err)
	}
	got, _ := ta.store.RefusalByID(ctx, ref.ID)
	if got.Status != models.StatusExpected || !strings.Contains(got.Comment, "HR data") {
		t.Fatalf("the refusal's review: %q %q", got.Status, got.Comment)
	}
	if st, _ := ta.Allowlist(ctx); len(st.Rows) != 0 {
		t.Fatalf("a decline added %v", st.Rows)
	}
}

// Allow this host (any add of a literal entry) closes the host's "needs
// access" reviews.
func TestAddingTheHostClosesNeedsAccess(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	ta.resolver.Answer("wiki.intranet.example.com", "10.4.0.2")
	ref := storedRefusal(t, ta, "bot", "fetch_url", "https://wiki.intranet.example.com/")
	if err := ta.ReviewRefusal(ctx, "sam", ref.ID, models.StatusNeedsAccess, "ticket 7"); err != nil {
		t.Fatal(err)
	}
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"wiki.intranet.example.com"}, Internal: true, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	got, _ := ta.store.RefusalByID(ctx, ref.ID)
	if got.Status != models.StatusReviewed || !strings.Contains(got.Comment, "Access granted") {
		t.Fatalf("the review after the add: %q %q", got.Status, got.Comment)
	}
	if st, _ := ta.Allowlist(ctx); !st.PublicWeb() || BadgeOf(st.ReachOf(guard.Scope{})) != "PUBLIC WEB · 1 INTERNAL" {
		t.Fatalf("an internal host narrowed the default scope: %+v", st.ReachOf(guard.Scope{}))
	}
}

func TestReportOnlyRecordsWouldRefuseAndEnforces(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	res, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"status.example.com"}, ReportOnly: true, Actor: "ada", Version: models.AnyRevision})
	if err != nil || res.LeftPublicWeb || !strings.Contains(res.Mode.Sentence(), "report-only") {
		t.Fatalf("add report-only: %+v %v", res, err)
	}
	ta.record(guard.Record{Time: time.Now(), Caller: guard.Caller{Agent: "bot", Tool: "fetch_url"}, URL: "https://news.example.net/", Host: "news.example.net", Port: 443,
		WouldRefuse: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Message: "news.example.net is not on the outbound allowlist."}})
	var sum WouldRefuseSummary
	for deadline := time.Now().Add(10 * time.Second); sum.Requests == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sum, err = ta.WouldRefuse(ctx)
	}
	if err != nil || sum.Requests != 1 || sum.Agents != 1 {
		t.Fatalf("WouldRefuse = %+v, %v", sum, err)
	}
	if n, _ := ta.store.CountRefusalsSince(ctx, time.Now().Add(-time.Hour)); n != 0 {
		t.Fatalf("a would-be refusal counted as a refusal: %d", n)
	}
	st, _ := ta.Allowlist(ctx)
	en, err := ta.EnforceEntries(ctx, EnforceEntries{IDs: []int64{st.Rows[0].ID}, Actor: "ada", Version: st.Version})
	if err != nil || len(en.Modes) != 1 || !en.Modes[0].Switched() {
		t.Fatalf("EnforceEntries = %+v, %v", en, err)
	}
	if ta.Guard().Policy().PublicWeb() {
		t.Fatal("the enforced entry does not narrow the running guard")
	}
}
