package web

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// emptyNewerWindow is a store whose search pages in the Newer direction
// find nothing in their window while newer rows lie beyond it: what a
// search's Newer page meets above an Older page that the search index
// fetched from far below.
type emptyNewerWindow struct {
	Store
	asked []int64
}

func (s *emptyNewerWindow) ListRefusalsAfter(_ context.Context, _ models.RefusalQuery, after int64) ([]models.Refusal, bool, error) {
	s.asked = append(s.asked, after)
	return nil, true, nil
}

func (s *emptyNewerWindow) NewerWindow(models.RefusalQuery) int64 { return 60_000 }

// TestAnEmptyNewerSearchPageLeadsOn: a Newer page of a search that found
// nothing in its window, with newer rows beyond it, says which refusals
// it searched and links on to the next window and back to the page it
// came from, instead of a dead end (found in review).
func TestAnEmptyNewerSearchPageLeadsOn(t *testing.T) {
	store := &emptyNewerWindow{}
	h := newHarnessWith(t, func(d *Deps) {
		store.Store = d.Store
		d.Store = store
	})
	b := h.signedIn("sam", models.RoleSupport)
	p := b.get("/refusals?q=needle&after=5")
	if p.status != 200 {
		t.Fatalf("GET: %d\n%s", p.status, p.body)
	}
	body := html.UnescapeString(p.body)
	for _, want := range []string{
		"No refusals numbered 6 to 60005 match; Newer ‹ searches the ones after them.",
		"/refusals?after=60005&q=needle",
		"/refusals?before=6&q=needle",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)

		}
	}
	if len(store.asked) != 1 || store.asked[0] != 5 {
		t.Errorf("Newer pages asked for %v; want one, after 5", store.asked)
	}
}

// olderBeyondEmptyWindow is a store whose search's Newer page finds a row
// while the window below that row is empty but older matches remain: the
// older check returns no rows and a cursor to go on from.
type olderBeyondEmptyWindow struct {
	Store
}

func (s *olderBeyondEmptyWindow) ListRefusalsAfter(context.Context, models.RefusalQuery, int64) ([]models.Refusal, bool, error) {
	return []models.Refusal{{ID: 35}}, false, nil
}

func (s *olderBeyondEmptyWindow) ListRefusals(context.Context, models.RefusalQuery) ([]models.Refusal, int64, error) {
	return nil, 25, nil
}

// TestANewerSearchPageKeepsOlderPastAnEmptyWindow: a search's Newer page
// whose older check read an empty window but was told older refusals
// remain (a non-zero cursor) still links Older, instead of leaving the
// older matches reachable only through First (found in review).
func TestANewerSearchPageKeepsOlderPastAnEmptyWindow(t *testing.T) {
	store := &olderBeyondEmptyWindow{}
	h := newHarnessWith(t, func(d *Deps) {
		store.Store = d.Store
		d.Store = store
	})
	b := h.signedIn("sam", models.RoleSupport)
	p := b.get("/refusals?q=needle&after=32")
	if p.status != 200 {
		t.Fatalf("GET: %d\n%s", p.status, p.body)
	}
	body := html.UnescapeString(p.body)
	if want := "/refusals?before=35&q=needle"; !strings.Contains(body, want) {
		t.Errorf("the page lacks the Older link %q", want)
	}
}
