package models

import (
	"errors"
	"testing"
	"time"
)

func TestUsersAndTheLastAdmin(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s, ctx := openTestStore(t), testCtx(t)
		if n, err := s.CountUsers(ctx); err != nil || n != 0 {
			t.Fatalf("CountUsers on a new store = %d, %v", n, err)
		}
		admin, err := s.CreateFirstAdmin(ctx, "ada", "hash-a")
		if err != nil || admin.Role != RoleAdmin {
			t.Fatalf("CreateFirstAdmin: %+v %v", admin, err)
		}
		if _, err := s.CreateFirstAdmin(ctx, "eve", "hash-e"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("a second first admin: %v", err)
		}
		sup, err := s.CreateUser(ctx, User{Name: "sam", PasswordHash: "hash-s", Role: RoleSupport})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateUser(ctx, User{Name: "sam", PasswordHash: "x", Role: RoleSupport}); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("duplicate name: %v", err)
		}
		if _, err := s.CreateUser(ctx, User{Name: "x", PasswordHash: "x", Role: "root"}); err == nil {
			t.Fatal("an unknown role was accepted")
		}
		if err := s.SetUserRole(ctx, admin.ID, RoleSupport); !errors.Is(err, ErrLastAdmin) {
			t.Fatalf("demoting the last admin: %v", err)
		}
		if err := s.DeleteUser(ctx, admin.ID); !errors.Is(err, ErrLastAdmin) {
			t.Fatalf("deleting the last admin: %v", err)
		}
		if err := s.SetUserRole(ctx, sup.ID, RoleAdmin); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteUser(ctx, admin.ID); err != nil {
			t.Fatalf("deleting an admin when another exists: %v", err)
		}
		if _, err := s.UserByName(ctx, "ada"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted user still found: %v", err)
		}
		users, err := s.ListUsers(ctx)
		if err != nil || len(users) != 1 || users[0].Name != "sam" || users[0].Role != RoleAdmin {
			t.Fatalf("ListUsers: %+v %v", users, err)
		}
	})
}

func TestSessionsExpireAndAPasswordChangeEndsThem(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s, ctx := openTestStore(t), testCtx(t)
		u, err := s.CreateFirstAdmin(ctx, "ada", "hash")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		for _, h := range []string{"h1", "h2"} {
			if err := s.CreateSession(ctx, u.ID, h, "127.0.0.1", "test", now); err != nil {
				t.Fatal(err)
			}
		}
		idle, maxAge := time.Hour, 24*time.Hour
		if _, got, err := s.SessionUser(ctx, "h1", now.Add(time.Minute), idle, maxAge); err != nil || got.Name != "ada" {
			t.Fatalf("SessionUser: %+v %v", got, err)
		}
		if _, _, err := s.SessionUser(ctx, "h1", now.Add(2*time.Hour), idle, maxAge); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an idle session still works: %v", err)
		}
		if _, _, err := s.SessionUser(ctx, "h1", now, idle, maxAge); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an expired session must be deleted: %v", err)
		}
		sess, _, err := s.SessionUser(ctx, "h2", now, idle, maxAge)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TouchSession(ctx, sess.ID, now.Add(50*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SessionUser(ctx, "h2", now.Add(100*time.Minute), idle, maxAge); err != nil {
			t.Fatalf("a touched session expired early: %v", err)
		}
		if err := s.SetPassword(ctx, u.ID, "new-hash"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SessionUser(ctx, "h2", now.Add(100*time.Minute), idle, maxAge); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a password change must end sessions: %v", err)
		}
		if got, _ := s.UserByID(ctx, u.ID); got.PasswordHash != "new-hash" {
			t.Fatalf("password hash = %q", got.PasswordHash)
		}
		if err := s.CreateSession(ctx, u.ID, "h3", "", "", now); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PurgeSessions(ctx, now.Add(time.Second)); err != nil || n != 1 {
			t.Fatalf("PurgeSessions = %d, %v", n, err)
		}
	})
}

func TestAuditPages(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s, ctx := openTestStore(t), testCtx(t)
		for i := 0; i < 7; i++ {
			if err := s.RecordAudit(ctx, Audit{Actor: "ada", Action: "allowlist.add", Target: "e", After: string(rune('a' + i))}); err != nil {
				t.Fatal(err)
			}
		}
		page, next, err := s.ListAudit(ctx, 0, 5)
		if err != nil || len(page) != 5 || page[0].After != "g" || next == 0 {
			t.Fatalf("first page: %+v next %d %v", page, next, err)
		}
		rest, next2, err := s.ListAudit(ctx, next, 5)
		if err != nil || len(rest) != 2 || rest[1].After != "a" || next2 != 0 {
			t.Fatalf("second page: %+v next %d %v", rest, next2, err)
		}
	})
}
