package models

import (
	"errors"
	"testing"
	"time"
)

// A token and its one view are stored together or not at all, and an
// expired view's sealed token is deleted by the next view taken, not kept
// until another token is created.
func TestTokenViewsLiveAndDieWithTheirTokens(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		now := time.Now().UTC()
		view := func(hash string) ParkedView {
			return ParkedView{IDHash: hash, Session: 1, View: TokenView{Name: "bot", Sealed: "sealed:x"}, Now: now, Expires: now.Add(time.Minute)}
		}
		if _, err := s.CreateTokenWithView(ctx, "bot", "hash-1", view("view-1")); err != nil {
			t.Fatal(err)
		}
		// The same name again: the token is refused, and its view is not kept.
		if _, err := s.CreateTokenWithView(ctx, "bot", "hash-2", view("view-2")); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("a second token named bot: %v, want a duplicate", err)
		}
		if _, err := s.TakeTokenView(ctx, "view-2", 1, now, opens); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the refused token's view: %v, want not found", err)
		}
		if _, err := s.TakeTokenView(ctx, "unknown", 1, now.Add(2*time.Minute), opens); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an unknown view: %v", err)
		}
		var left int64
		if err := s.w.Table("token_views").Count(&left).Error; err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Fatalf("%d views left after they expired, want 0", left)
		}
	})
}

// opens is TakeTokenView's open for a caller that can open every token.
func opens(string) error { return nil }

// A view the caller cannot open is not spent: the next caller, which
// can, still gets the sealed token.
func TestATokenViewIsSpentOnlyWhenOpened(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		now := time.Now().UTC()
		view := ParkedView{IDHash: "view-1", Session: 1, View: TokenView{Name: "bot", Sealed: "sealed:x"}, Now: now, Expires: now.Add(time.Minute)}
		if _, err := s.CreateTokenWithView(ctx, "bot", "hash-1", view); err != nil {
			t.Fatal(err)
		}
		wrongKey := errors.New("wrong key")
		if _, err := s.TakeTokenView(ctx, "view-1", 1, now, func(string) error { return wrongKey }); !errors.Is(err, wrongKey) {
			t.Fatalf("a take that cannot open the token: %v, want its error", err)
		}
		got, err := s.TakeTokenView(ctx, "view-1", 1, now, opens)
		if err != nil || got.Sealed != "sealed:x" {
			t.Fatalf("the next take = %+v, %v; want the sealed token", got, err)
		}
		if got, err := s.TakeTokenView(ctx, "view-1", 1, now, func(string) error { t.Error("open asked for a view already shown"); return nil }); err != nil || got.Sealed != "" {
			t.Fatalf("a third take = %+v, %v; want the view without the token", got, err)
		}
	})
}
