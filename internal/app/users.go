package app

import (
	"context"
	"errors"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

// User is a console user as the front ends show them: never the password
// hash.
type User struct {
	ID                int64
	Name              string
	Role              models.Role
	CreatedAt         time.Time
	PasswordChangedAt time.Time
}

func userOf(u models.User) User {
	return User{ID: u.ID, Name: u.Name, Role: u.Role, CreatedAt: u.CreatedAt, PasswordChangedAt: u.PasswordChangedAt}
}

// Errors of the user operations, beside the rules' own (rules.go):
//   - a user that does not exist: *models.NotFoundError (models.ErrNotFound);
//   - a name in use: *models.DuplicateError (models.ErrDuplicate);
//   - a change that would leave no admin: models.ErrLastAdmin.

// ListUsers returns every user by name.
func (a *App) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := a.store.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, len(rows))
	for i, u := range rows {
		out[i] = userOf(u)
	}
	return out, nil
}

// UserByID returns the user with id.
func (a *App) UserByID(ctx context.Context, id int64) (User, error) {
	u, err := a.store.UserByID(ctx, id)
	return userOf(u), err
}

// UserByName returns the named user.
func (a *App) UserByName(ctx context.Context, name string) (User, error) {
	u, err := a.store.UserByName(ctx, name)
	return userOf(u), err
}

// CountUsers returns how many users exist; zero means first-run setup.
func (a *App) CountUsers(ctx context.Context) (int64, error) { return a.store.CountUsers(ctx) }

// AddUser adds a user who signs in with password. Every problem with the
// input is returned at once (errors.Join of a *UserNameError, a *RoleError
// and a *PasswordError), and nothing is written.
func (a *App) AddUser(ctx context.Context, actor, name string, role models.Role, password string) (User, error) {
	var roleErr error
	if !role.Valid() {
		roleErr = &RoleError{Input: string(role)}
	}
	if err := errors.Join(CheckUserName(name), roleErr, CheckPassword(password)); err != nil {
		return User{}, err
	}
	hash, err := a.hashPassword(password)
	if err != nil {
		return User{}, err
	}
	record := models.Audit{Actor: actor, Action: ActionUserAdd, Target: name, After: "role " + string(role)}
	u, err := a.store.CreateUser(ctx, models.User{Name: name, PasswordHash: hash, Role: role}, record)
	return userOf(u), err
}

// CreateFirstAdmin is first-run setup: it adds an admin only while no
// user exists, so a setup link used twice cannot make a second one. Once
// a user exists it is ErrSetupDone.
func (a *App) CreateFirstAdmin(ctx context.Context, name, password string) (User, error) {
	if err := errors.Join(CheckUserName(name), CheckPassword(password)); err != nil {
		return User{}, err
	}
	hash, err := a.hashPassword(password)
	if err != nil {
		return User{}, err
	}
	record := models.Audit{Actor: name, Action: ActionUserAdd, Target: name, After: "role admin (first-run setup)"}
	u, err := a.store.CreateFirstAdmin(ctx, name, hash, record)
	if errors.Is(err, models.ErrDuplicate) {
		return User{}, ErrSetupDone
	}
	return userOf(u), err
}

// SetUserRole gives user id role and returns the user as they were. The
// same role again changes and records nothing (the returned user already
// has it). Demoting the last admin is models.ErrLastAdmin.
func (a *App) SetUserRole(ctx context.Context, actor string, id int64, role models.Role) (User, error) {
	if !role.Valid() {
		return User{}, &RoleError{Input: string(role)}
	}
	before, err := a.UserByID(ctx, id)
	if err != nil || before.Role == role {
		return before, err
	}
	record := models.Audit{Actor: actor, Action: ActionUserRole, Target: before.Name, Before: "role " + string(before.Role), After: "role " + string(role)}
	return before, a.store.SetUserRole(ctx, id, role, record)
}

// ResetPassword gives user id a new password, set by an admin, and ends
// all the user's sessions in the same transaction: whoever knew the old
// password is out now, not at their idle timeout.
func (a *App) ResetPassword(ctx context.Context, actor string, id int64, password string) (User, error) {
	if err := CheckPassword(password); err != nil {
		return User{}, err
	}
	u, err := a.UserByID(ctx, id)
	if err != nil {
		return User{}, err
	}
	hash, err := a.hashPassword(password)
	if err != nil {
		return User{}, err
	}
	record := models.Audit{Actor: actor, Action: ActionUserPassword, Target: u.Name, Before: "(secret)", After: "(secret) reset by an admin; sessions ended"}
	return u, a.store.SetPassword(ctx, id, hash, record)
}

// ChangeOwnPassword is a user changing their own password: current must be
// their password now, and repeat the new one again. Every problem is
// returned at once (errors.Join of ErrWrongPassword, a *PasswordError and
// ErrPasswordsDiffer) and nothing is written. On success all the user's
// sessions are ended, this one included.
func (a *App) ChangeOwnPassword(ctx context.Context, id int64, current, password, repeat string) error {
	stored, err := a.store.UserByID(ctx, id)
	if err != nil {
		return err
	}
	var wrong, differ error
	if bcrypt.CompareHashAndPassword([]byte(stored.PasswordHash), []byte(current)) != nil {
		wrong = ErrWrongPassword
	}
	policy := CheckPassword(password)
	if policy == nil && password != repeat {
		differ = ErrPasswordsDiffer
	}
	if err := errors.Join(wrong, policy, differ); err != nil {
		return err
	}
	hash, err := a.hashPassword(password)
	if err != nil {
		return err
	}
	record := models.Audit{Actor: stored.Name, Action: ActionUserPassword, Target: stored.Name, After: "password changed; sessions ended"}
	return a.store.SetPassword(ctx, id, hash, record)
}

// RemoveUser removes user id and ends their sessions, and returns who
// they were. Removing the last admin is models.ErrLastAdmin.
func (a *App) RemoveUser(ctx context.Context, actor string, id int64) (User, error) {
	u, err := a.UserByID(ctx, id)
	if err != nil {
		return User{}, err
	}
	record := models.Audit{Actor: actor, Action: ActionUserRemove, Target: u.Name, Before: "role " + string(u.Role), After: "removed"}
	return u, a.store.DeleteUser(ctx, id, record)
}
