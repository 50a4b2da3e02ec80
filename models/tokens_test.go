package models

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const (
	hashA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	hashB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

func TestTokensLifecycle(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		tok, err := s.CreateToken(ctx, "triage-bot", hashA)
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID == 0 || tok.CreatedAt.IsZero() || !tok.Active() || tok.LastUsedAt != nil {
			t.Errorf("new token = %+v", tok)
		}
		if _, err := s.CreateToken(ctx, "billing-bot", hashB); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListTokens(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "billing-bot" || list[1].Name != "triage-bot" {
			t.Fatalf("ListTokens = %+v, %v; want billing-bot, triage-bot", list, err)
		}
		found, err := s.FindActiveToken(ctx, hashA)
		if err != nil || found.ID != tok.ID {
			t.Fatalf("FindActiveToken = %+v, %v; want token %d", found, err, tok.ID)
		}

		if before, err := s.RevokeToken(ctx, "triage-bot"); err != nil || before.RevokedAt != nil {
			t.Fatalf("RevokeToken = %+v, %v; want the active token as it was", before, err)
		}
		_, err = s.FindActiveToken(ctx, hashA)
		if !errors.Is(err, ErrNotFound) || strings.Contains(err.Error(), hashA) {
			t.Errorf("revoked token lookup = %v; want ErrNotFound that does not print the whole hash", err)
		}
		list, _ = s.ListTokens(ctx)
		firstRevoked := *list[1].RevokedAt
		if before, err := s.RevokeToken(ctx, "triage-bot"); err != nil || before.RevokedAt == nil || !before.RevokedAt.Equal(firstRevoked) {
			t.Errorf("revoking twice: %+v, %v; want no error and the first revocation time", before, err)
		}
		list, _ = s.ListTokens(ctx)
		if !list[1].RevokedAt.Equal(firstRevoked) {
			t.Errorf("second revoke moved RevokedAt from %v to %v", firstRevoked, *list[1].RevokedAt)
		}
		var nf *NotFoundError
		if _, err := s.RevokeToken(ctx, "ghost"); !errors.As(err, &nf) || nf.Value != "ghost" {
			t.Errorf("RevokeToken(ghost) = %v, want *NotFoundError naming ghost", err)
		}
	})
}

func TestCreateTokenRejects(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		if _, err := s.CreateToken(ctx, "triage-bot", hashA); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, tokName, hash string
			dupKind             string // "" when not a duplicate
		}{
			{"empty name", "", hashB, ""},
			{"empty hash", "x", "", ""},
			{"same name", "triage-bot", hashB, "agent token"},
			{"same hash", "other-bot", hashA, "agent token secret (hash) for"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.CreateToken(ctx, tt.tokName, tt.hash)
				if err == nil {
					t.Fatal("want an error")
				}
				var dup *DuplicateError
				if isDup := errors.As(err, &dup); isDup != (tt.dupKind != "") {
					t.Fatalf("err = %v; duplicate = %v, want %v", err, isDup, tt.dupKind != "")
				}
				if dup != nil && (dup.Kind != tt.dupKind || dup.Value != tt.tokName) {
					t.Errorf("DuplicateError = %+v, want kind %q value %q", dup, tt.dupKind, tt.tokName)
				}
			})
		}
	})
}

func TestTouchTokensWritesAtMostOncePerMinute(t *testing.T) {
	path := t.TempDir() + "/o.db"
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := testCtx(t)
	tok, err := s.CreateToken(ctx, "bot", hashA)
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func(st *Store) time.Time {
		t.Helper()
		got, err := st.FindActiveToken(ctx, hashA)
		if err != nil || got.LastUsedAt == nil {
			t.Fatalf("token after touch = %+v, %v", got, err)
		}
		return *got.LastUsedAt
	}
	steps := []struct {
		name  string
		at    time.Duration
		store *Store
		want  time.Duration // expected LastUsedAt after the step
	}{
		{"first use is written", 0, s, 0},
		{"30s later is skipped", 30 * time.Second, s, 0},
		{"61s later is written", 61 * time.Second, s, 61 * time.Second},
		{"another process within the minute is skipped", 90 * time.Second, nil, 61 * time.Second},
		{"another process after the minute is written", 125 * time.Second, nil, 125 * time.Second},
	}
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, st := range steps {
		store := st.store
		if store == nil {
			store = other
		}
		if err := store.TouchTokens(ctx, map[int64]time.Time{tok.ID: t0.Add(st.at), 999: t0}); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := lastUsed(s); !got.Equal(t0.Add(st.want)) {
			t.Errorf("%s: LastUsedAt = %v, want %v", st.name, got, t0.Add(st.want))
		}
	}
}
