package models

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// Sentinel errors for errors.Is. The concrete error types below carry the
// offending value so that a message shown to an admin names what went wrong.
var (
	// ErrConflict reports that the stored revision moved on since the caller
	// read it: someone else saved first. The web console answers 409.
	ErrConflict = errors.New("models: revision conflict")
	// ErrDuplicate reports a unique-constraint violation.
	ErrDuplicate = errors.New("models: duplicate")
	// ErrNotFound reports that a row addressed by name, hash or ID is absent.
	ErrNotFound = errors.New("models: not found")
)

// ConflictError is returned by mutations whose expectRevision no longer
// matches the stored revision. It matches ErrConflict under errors.Is.
type ConflictError struct {
	Section  Section // what changed
	Expected int64   // version the caller based its change on
	Current  int64   // version found in the database
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("models: the %s changed since you loaded it (you had version %d, it is now %d); reload, reapply your change and save again",
		e.Section, e.Expected, e.Current)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DuplicateError names the value that violated a unique constraint.
type DuplicateError struct {
	Kind  string // what the value is, e.g. "allowlist entry"
	Value string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("models: %s %q already exists; pick a different one or remove the existing one first", e.Kind, e.Value)
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// NotFoundError names the value that matched no row.
type NotFoundError struct {
	Kind  string // what was looked up, e.g. "agent token"
	Value string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("models: %s %q not found; reload the list, it may have been removed by someone else", e.Kind, e.Value)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// isUniqueViolation reports whether err is a UNIQUE (or primary key)
// constraint failure, of SQLite or of PostgreSQL (SQLSTATE 23505). Neither
// message names the value in a form fit for an admin, which is why callers
// wrap it in a DuplicateError themselves.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
