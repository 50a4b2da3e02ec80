package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

const goodPassword = "correct horse battery"

// signsIn reports whether the session with this hash still signs its user in.
func signsIn(t *testing.T, a *App, hash string) bool {
	t.Helper()
	_, _, err := a.Store().SessionUser(context.Background(), hash, time.Now().UTC(), time.Hour, 24*time.Hour)
	return err == nil
}

func newSession(t *testing.T, a *App, userID int64, hash string) {
	t.Helper()
	if err := a.Store().CreateSession(context.Background(), userID, hash, "127.0.0.1", "test", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
}

func passwordWorks(t *testing.T, a *App, name, pw string) bool {
	t.Helper()
	u, err := a.Store().UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(pw)) == nil
}

func TestCreateFirstAdminOnlyOnce(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	u, err := a.CreateFirstAdmin(ctx, "ada", goodPassword)
	if err != nil || u.Role != models.RoleAdmin || u.Name != "ada" {
		t.Fatalf("first admin: %+v %v", u, err)
	}
	if !passwordWorks(t, a, "ada", goodPassword) {
		t.Fatal("the first admin's password does not work")
	}
	if _, err := a.CreateFirstAdmin(ctx, "eve", goodPassword); !errors.Is(err, ErrSetupDone) {
		t.Fatalf("a second first admin: %v, want ErrSetupDone", err)
	}
	var pe *PasswordError
	if _, err := a.CreateFirstAdmin(ctx, "eve", "short"); !errors.As(err, &pe) {
		t.Fatalf("a weak password: %v", err)
	}
	if got := strings.Join(auditTrail(t, a), ", "); got != "user.add ada" {
		t.Fatalf("audit trail %q", got)
	}
}

func TestAddUserReportsEveryProblemAndWritesNothing(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	_, err := a.AddUser(ctx, "ada", "sam smith", "root", "short")
	var ne *UserNameError
	var re *RoleError
	var pe *PasswordError
	if !errors.As(err, &ne) || !errors.As(err, &re) || !errors.As(err, &pe) {
		t.Fatalf("AddUser with three problems: %v; want a name, role and password error", err)
	}
	if n, _ := a.CountUsers(ctx); n != 0 {
		t.Fatalf("%d users after a refused add", n)
	}
	u, err := a.AddUser(ctx, "ada", "sam", models.RoleSupport, goodPassword)
	if err != nil || u.Role != models.RoleSupport {
		t.Fatalf("add sam: %+v %v", u, err)
	}
	stored, _ := a.Store().UserByName(ctx, "sam")
	if cost, err := bcrypt.Cost([]byte(stored.PasswordHash)); err != nil || cost != bcrypt.MinCost {
		t.Fatalf("hash cost %d %v, want the App's %d", cost, err, bcrypt.MinCost)
	}
	if _, err := a.AddUser(ctx, "ada", "sam", models.RoleAdmin, goodPassword); !errors.Is(err, models.ErrDuplicate) {
		t.Fatalf("a taken name: %v", err)
	}
	users, err := a.ListUsers(ctx)
	if err != nil || len(users) != 1 || users[0].Name != "sam" {
		t.Fatalf("ListUsers = %+v, %v", users, err)
	}
	rows, _, _ := a.Store().ListAudit(ctx, 0, 10)
	if len(rows) != 1 || rows[0].Actor != "ada" || rows[0].Action != ActionUserAdd || rows[0].After != "role support" {
		t.Fatalf("audit %+v", rows)
	}
}

func TestSetUserRoleKeepsAnAdmin(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	ada, _ := a.CreateFirstAdmin(ctx, "ada", goodPassword)
	sam, _ := a.AddUser(ctx, "ada", "sam", models.RoleSupport, goodPassword)
	if _, err := a.SetUserRole(ctx, "ada", ada.ID, models.RoleSupport); !errors.Is(err, models.ErrLastAdmin) {
		t.Fatalf("demoting the last admin: %v", err)
	}
	if before, err := a.SetUserRole(ctx, "ada", sam.ID, models.RoleSupport); err != nil || before.Role != models.RoleSupport {
		t.Fatalf("the same role again: %+v %v", before, err)
	}
	if _, err := a.SetUserRole(ctx, "ada", sam.ID, "root"); err == nil {
		t.Fatal("an unknown role was set")
	}
	if _, err := a.SetUserRole(ctx, "ada", 999, models.RoleAdmin); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("role of nobody: %v", err)
	}
	if before, err := a.SetUserRole(ctx, "ada", sam.ID, models.RoleAdmin); err != nil || before.Role != models.RoleSupport {
		t.Fatalf("promote sam: %+v %v", before, err)
	}
	if got, _ := a.UserByID(ctx, sam.ID); got.Role != models.RoleAdmin {
		t.Fatalf("sam is %s", got.Role)
	}
	rows, _, _ := a.Store().ListAudit(ctx, 0, 10)
	if len(rows) != 3 || rows[0].Action != ActionUserRole || rows[0].Before != "role support" || rows[0].After != "role admin" {
		t.Fatalf("audit %+v; want add, add, one role change", rows)
	}
}

func TestResetPasswordEndsSessions(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	a.CreateFirstAdmin(ctx, "ada", goodPassword)
	sam, _ := a.AddUser(ctx, "ada", "sam", models.RoleSupport, goodPassword)
	newSession(t, a, sam.ID, "s1")
	var pe *PasswordError
	if _, err := a.ResetPassword(ctx, "ada", sam.ID, "short"); !errors.As(err, &pe) {
		t.Fatalf("a weak password: %v", err)
	}
	if !signsIn(t, a, "s1") || !passwordWorks(t, a, "sam", goodPassword) {
		t.Fatal("a refused reset changed something")
	}
	if _, err := a.ResetPassword(ctx, "ada", 999, "a new password 1"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("password of nobody: %v", err)
	}
	if _, err := a.ResetPassword(ctx, "ada", sam.ID, "a new password 1"); err != nil {
		t.Fatal(err)
	}
	if signsIn(t, a, "s1") || !passwordWorks(t, a, "sam", "a new password 1") {
		t.Fatal("after a reset the old session still works or the new password does not")
	}
	rows, _, _ := a.Store().ListAudit(ctx, 0, 10)
	if rows[0].Action != ActionUserPassword || rows[0].Target != "sam" || strings.Contains(rows[0].After, "a new password") {
		t.Fatalf("audit %+v", rows[0])
	}
}

func TestChangeOwnPassword(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	ada, _ := a.CreateFirstAdmin(ctx, "ada", goodPassword)
	newSession(t, a, ada.ID, "s1")

	err := a.ChangeOwnPassword(ctx, ada.ID, "wrong", "short", "short")
	var pe *PasswordError
	if !errors.Is(err, ErrWrongPassword) || !errors.As(err, &pe) {
		t.Fatalf("wrong current and weak new: %v; want both reported", err)
	}
	err = a.ChangeOwnPassword(ctx, ada.ID, goodPassword, "a new password 1", "a new password 2")
	if !errors.Is(err, ErrPasswordsDiffer) || errors.Is(err, ErrWrongPassword) {
		t.Fatalf("differing repetition: %v", err)
	}
	if !signsIn(t, a, "s1") || !passwordWorks(t, a, "ada", goodPassword) {
		t.Fatal("a refused change changed something")
	}
	if err := a.ChangeOwnPassword(ctx, ada.ID, goodPassword, "a new password 1", "a new password 1"); err != nil {
		t.Fatal(err)
	}
	if signsIn(t, a, "s1") || !passwordWorks(t, a, "ada", "a new password 1") {
		t.Fatal("after a change the old session still works or the new password does not")
	}
	rows, _, _ := a.Store().ListAudit(ctx, 0, 10)
	if len(rows) != 2 || rows[0].Actor != "ada" || rows[0].Action != ActionUserPassword {
		t.Fatalf("audit %+v; want the setup and one change", rows)
	}
}

func TestRemoveUser(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	ada, _ := a.CreateFirstAdmin(ctx, "ada", goodPassword)
	sam, _ := a.AddUser(ctx, "ada", "sam", models.RoleSupport, goodPassword)
	newSession(t, a, sam.ID, "s1")
	if _, err := a.RemoveUser(ctx, "ada", ada.ID); !errors.Is(err, models.ErrLastAdmin) {
		t.Fatalf("removing the last admin: %v", err)
	}
	if _, err := a.RemoveUser(ctx, "ada", 999); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("removing nobody: %v", err)
	}
	removed, err := a.RemoveUser(ctx, "ada", sam.ID)
	if err != nil || removed.Name != "sam" {
		t.Fatalf("remove sam: %+v %v", removed, err)
	}
	if _, err := a.UserByName(ctx, "sam"); !errors.Is(err, models.ErrNotFound) || signsIn(t, a, "s1") {
		t.Fatalf("sam is still there (%v) or still signed in", err)
	}
	if got := strings.Join(auditTrail(t, a), ", "); got != "user.add ada, user.add sam, user.remove sam" {
		t.Fatalf("audit trail %q", got)
	}
}

// TestUserChangesRollBackWhenTheirAuditFails: no user change commits
// without its record.
func TestUserChangesRollBackWhenTheirAuditFails(t *testing.T) {
	a, path := identityApp(t)
	ctx := context.Background()
	ada, _ := a.CreateFirstAdmin(ctx, "ada", goodPassword)
	sam, _ := a.AddUser(ctx, "ada", "sam", models.RoleSupport, goodPassword)
	failAudits(t, path)
	if _, err := a.AddUser(ctx, "ada", "tom", models.RoleSupport, goodPassword); err == nil {
		t.Fatal("tom was added although the audit failed")
	}
	if _, err := a.SetUserRole(ctx, "ada", sam.ID, models.RoleAdmin); err == nil {
		t.Fatal("sam was promoted although the audit failed")
	}
	if _, err := a.ResetPassword(ctx, "ada", sam.ID, "a new password 1"); err == nil {
		t.Fatal("sam's password was reset although the audit failed")
	}
	if err := a.ChangeOwnPassword(ctx, ada.ID, goodPassword, "a new password 1", "a new password 1"); err == nil {
		t.Fatal("ada's password changed although the audit failed")
	}
	if _, err := a.RemoveUser(ctx, "ada", sam.ID); err == nil {
		t.Fatal("sam was removed although the audit failed")
	}
	users, _ := a.ListUsers(ctx)
	if len(users) != 2 || users[1].Name != "sam" || users[1].Role != models.RoleSupport {
		t.Fatalf("users %+v; want ada and sam (support), unchanged", users)
	}
	if !passwordWorks(t, a, "ada", goodPassword) || !passwordWorks(t, a, "sam", goodPassword) {
		t.Fatal("a password changed although its audit failed")
	}
}
