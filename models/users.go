package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Role is what a console user may do.
type Role string

const (
	// RoleAdmin may change everything.
	RoleAdmin Role = "admin"
	// RoleSupport reviews the refusal log and reads the allowlist.
	RoleSupport Role = "support"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleSupport }

// User is a person who signs in to the console. The password is kept only
// as a bcrypt hash, computed by the caller.
type User struct {
	ID                int64     `gorm:"primaryKey"`
	Name              string    `gorm:"not null;uniqueIndex"`
	PasswordHash      string    `gorm:"not null"`
	Role              Role      `gorm:"not null"`
	CreatedAt         time.Time `gorm:"not null"`
	PasswordChangedAt time.Time `gorm:"not null"`
}

// ErrLastAdmin is returned when a change would leave no admin.
var ErrLastAdmin = errors.New("models: this is the last admin; make another user admin first")

// CountUsers returns how many users exist; zero means first-run setup.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.r.WithContext(ctx).Model(&User{}).Count(&n).Error
	return n, err
}

// CreateUser adds a user, with its audit records in the same transaction.
// A taken name is a *DuplicateError.
func (s *Store) CreateUser(ctx context.Context, u User, audit ...Audit) (User, error) {
	if !u.Role.Valid() {
		return User{}, fmt.Errorf("models: role %q is not admin or support", u.Role)
	}
	now := time.Now().UTC()
	u.ID, u.CreatedAt, u.PasswordChangedAt = 0, now, now
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&u).Error; err != nil {
			if isUniqueViolation(err) {
				return &DuplicateError{Kind: "user", Value: u.Name}
			}
			return err
		}
		return writeAudit(tx, audit)
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// CreateFirstAdmin adds an admin only while no user exists, atomically, so
// that a setup link used twice cannot create a second admin. Its audit
// records commit with it.
func (s *Store) CreateFirstAdmin(ctx context.Context, name, passwordHash string, audit ...Audit) (User, error) {
	var created User
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&User{}).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("models: setup is already done; sign in instead: %w", ErrDuplicate)
		}
		now := time.Now().UTC()
		created = User{Name: name, PasswordHash: passwordHash, Role: RoleAdmin, CreatedAt: now, PasswordChangedAt: now}
		if err := tx.Create(&created).Error; err != nil {
			return err
		}
		return writeAudit(tx, audit)
	})
	return created, err
}

// UserByName returns the named user.
func (s *Store) UserByName(ctx context.Context, name string) (User, error) {
	var u User
	err := s.r.WithContext(ctx).Where("name = ?", name).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, &NotFoundError{Kind: "user", Value: name}
	}
	return u, err
}

// UserByID returns the user with id.
func (s *Store) UserByID(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.r.WithContext(ctx).Take(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, &NotFoundError{Kind: "user", Value: fmt.Sprint(id)}
	}
	return u, err
}

// ListUsers returns every user ordered by name.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	var out []User
	err := s.r.WithContext(ctx).Order("name").Find(&out).Error
	return out, err
}

// SetUserRole changes a user's role, with its audit records in the same
// transaction. Demoting the last admin is ErrLastAdmin.
func (s *Store) SetUserRole(ctx context.Context, id int64, role Role, audit ...Audit) error {
	if !role.Valid() {
		return fmt.Errorf("models: role %q is not admin or support", role)
	}
	return s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := userInTx(tx, id)
		if err != nil {
			return err
		}
		if u.Role == RoleAdmin && role != RoleAdmin {
			if err := keepAnAdmin(tx); err != nil {
				return err
			}
		}
		if err := tx.Model(&User{}).Where("id = ?", id).Update("role", role).Error; err != nil {
			return err
		}
		return writeAudit(tx, audit)
	})
}

// SetPassword replaces a user's password hash and ends all the user's
// sessions, in one transaction with its audit records: a changed password
// must lock out whoever knew the old one.
func (s *Store) SetPassword(ctx context.Context, id int64, passwordHash string, audit ...Audit) error {
	return s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := userInTx(tx, id); err != nil {
			return err
		}
		if err := tx.Model(&User{}).Where("id = ?", id).Updates(map[string]any{"password_hash": passwordHash, "password_changed_at": time.Now().UTC()}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", id).Delete(&Session{}).Error; err != nil {
			return err
		}
		return writeAudit(tx, audit)
	})
}

// DeleteUser removes a user and their sessions, with its audit records in
// the same transaction. Removing the last admin is ErrLastAdmin.
func (s *Store) DeleteUser(ctx context.Context, id int64, audit ...Audit) error {
	return s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := userInTx(tx, id)
		if err != nil {
			return err
		}
		if u.Role == RoleAdmin {
			if err := keepAnAdmin(tx); err != nil {
				return err
			}
		}
		if err := tx.Where("user_id = ?", id).Delete(&Session{}).Error; err != nil {
			return err
		}
		if err := tx.Delete(&User{}, id).Error; err != nil {
			return err
		}
		return writeAudit(tx, audit)
	})
}

func userInTx(tx *gorm.DB, id int64) (User, error) {
	var u User
	err := tx.Take(&u, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, &NotFoundError{Kind: "user", Value: fmt.Sprint(id)}
	}
	return u, err
}

// keepAnAdmin fails when fewer than two admins exist, before one of them
// loses the role.
func keepAnAdmin(tx *gorm.DB) error {
	var admins int64
	if err := tx.Model(&User{}).Where("role = ?", RoleAdmin).Count(&admins).Error; err != nil {
		return err
	}
	if admins < 2 {
		return ErrLastAdmin
	}
	return nil
}
