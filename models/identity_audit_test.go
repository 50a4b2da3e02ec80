package models

import (
	"errors"
	"testing"
)

// TestIdentityChangesCommitWithTheirAudit: every user and token mutation
// writes its audit record in its own transaction. A change that fails
// writes no record; a record that cannot be written undoes the change.
func TestIdentityChangesCommitWithTheirAudit(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s, ctx := openTestStore(t), testCtx(t)
		rec := func(action, target string) Audit { return Audit{Actor: "ada", Action: action, Target: target} }
		want := 0
		expect := func(step string) {
			t.Helper()
			if got := auditCount(t, s); got != want {
				t.Fatalf("%s: %d audit records, want %d", step, got, want)
			}
		}

		admin, err := s.CreateFirstAdmin(ctx, "ada", "hash-a", rec("user.add", "ada"))
		if err != nil {
			t.Fatal(err)
		}
		want++
		expect("first admin")
		if _, err := s.CreateFirstAdmin(ctx, "eve", "hash-e", rec("user.add", "eve")); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("second first admin: %v", err)
		}
		expect("a refused first admin")

		sam, err := s.CreateUser(ctx, User{Name: "sam", PasswordHash: "hash-s", Role: RoleSupport}, rec("user.add", "sam"))
		if err != nil {
			t.Fatal(err)
		}
		want++
		expect("add sam")
		if _, err := s.CreateUser(ctx, User{Name: "sam", PasswordHash: "x", Role: RoleSupport}, rec("user.add", "sam")); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate user: %v", err)
		}
		expect("a duplicate user")

		if err := s.SetUserRole(ctx, admin.ID, RoleSupport, rec("user.role", "ada")); !errors.Is(err, ErrLastAdmin) {
			t.Fatalf("demote the last admin: %v", err)
		}
		if err := s.DeleteUser(ctx, admin.ID, rec("user.remove", "ada")); !errors.Is(err, ErrLastAdmin) {
			t.Fatalf("remove the last admin: %v", err)
		}
		if err := s.SetPassword(ctx, 999, "h", rec("user.password", "ghost")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("password of nobody: %v", err)
		}
		expect("refused user changes")

		if err := s.SetUserRole(ctx, sam.ID, RoleAdmin, rec("user.role", "sam")); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPassword(ctx, sam.ID, "hash-s2", rec("user.password", "sam")); err != nil {
			t.Fatal(err)
		}
		want += 2
		expect("role and password")

		if _, err := s.CreateToken(ctx, "bot", "hash-1", rec("token.create", "bot")); err != nil {
			t.Fatal(err)
		}
		want++
		expect("create token")
		if _, err := s.CreateToken(ctx, "bot", "hash-2", rec("token.create", "bot")); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate token: %v", err)
		}
		if _, err := s.RevokeToken(ctx, "ghost", rec("token.revoke", "ghost")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("revoke unknown: %v", err)
		}
		expect("refused token changes")
		if before, err := s.RevokeToken(ctx, "bot", rec("token.revoke", "bot")); err != nil || before.RevokedAt != nil {
			t.Fatalf("revoke: %+v %v", before, err)
		}
		want++
		expect("revoke")
		if before, err := s.RevokeToken(ctx, "bot", rec("token.revoke", "bot")); err != nil || before.RevokedAt == nil {
			t.Fatalf("revoke again: %+v %v", before, err)
		}
		expect("a second revoke, which changes nothing")

		// From here every audit insert fails: each change must roll back.
		if err := failAuditWrites(t, s); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUser(ctx, User{Name: "tom", PasswordHash: "h", Role: RoleSupport}, rec("user.add", "tom")); err == nil {
			t.Fatal("user added although its audit failed")
		}
		if _, err := s.UserByName(ctx, "tom"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("tom exists after a rolled-back add: %v", err)
		}
		if err := s.SetUserRole(ctx, sam.ID, RoleSupport, rec("user.role", "sam")); err == nil {
			t.Fatal("role changed although its audit failed")
		}
		if err := s.SetPassword(ctx, sam.ID, "hash-s3", rec("user.password", "sam")); err == nil {
			t.Fatal("password changed although its audit failed")
		}
		if err := s.DeleteUser(ctx, sam.ID, rec("user.remove", "sam")); err == nil {
			t.Fatal("user removed although its audit failed")
		}
		if got, err := s.UserByID(ctx, sam.ID); err != nil || got.Role != RoleAdmin || got.PasswordHash != "hash-s2" {
			t.Fatalf("sam after rolled-back changes: %+v %v; want admin with hash-s2", got, err)
		}
		if _, err := s.CreateToken(ctx, "bot-2", "hash-3", rec("token.create", "bot-2")); err == nil {
			t.Fatal("token created although its audit failed")
		}
		if err := s.DeleteUser(ctx, admin.ID, rec("user.remove", "ada")); err == nil {
			t.Fatal("ada removed although her audit failed")
		}
		toks, err := s.ListTokens(ctx)
		if err != nil || len(toks) != 1 || toks[0].Name != "bot" {
			t.Fatalf("tokens after a rolled-back create: %+v %v", toks, err)
		}
		if n, _ := s.CountUsers(ctx); n != 2 {
			t.Fatalf("%d users, want ada and sam", n)
		}
		if err := allowAuditWrites(t, s); err != nil {
			t.Fatal(err)
		}
		expect("rolled-back changes")

		// A revoke whose audit fails leaves the token active.
		if _, err := s.CreateToken(ctx, "bot-3", "hash-4", rec("token.create", "bot-3")); err != nil {
			t.Fatal(err)
		}
		if err := failAuditWrites(t, s); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RevokeToken(ctx, "bot-3", rec("token.revoke", "bot-3")); err == nil {
			t.Fatal("token revoked although its audit failed")
		}
		if _, err := s.FindActiveToken(ctx, "hash-4"); err != nil {
			t.Fatalf("bot-3 is not active after a rolled-back revoke: %v", err)
		}
	})
}

// TestFirstAdminRollsBackWithItsAudit: the first admin's record failing
// leaves no user, so setup can be tried again.
func TestFirstAdminRollsBackWithItsAudit(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s, ctx := openTestStore(t), testCtx(t)
		if err := failAuditWrites(t, s); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateFirstAdmin(ctx, "ada", "h", Audit{Actor: "ada", Action: "user.add", Target: "ada"}); err == nil {
			t.Fatal("first admin created although the audit failed")
		}
		if n, _ := s.CountUsers(ctx); n != 0 {
			t.Fatalf("%d users after a rolled-back setup, want 0", n)
		}
	})
}
