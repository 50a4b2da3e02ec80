package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// The configuration operations answer with typed errors, so that the web
// console and the command line each word them for their own reader (a
// form field, an argument) without parsing text. Each type keeps the
// facts: what was wrong, with which input, and how to put it right.

// ProblemCode marks a Problem that a front end words in its own way; most
// problems have none and are shown as Problem and Fix.
type ProblemCode string

const (
	// ProblemRenameUnconfirmed: an update renames an integration without
	// the admin confirming that agents must learn the new name.
	ProblemRenameUnconfirmed ProblemCode = "rename_unconfirmed"
	// ProblemSecretMoved: a stored secret would be kept while the URL now
	// points at another origin; it must be typed again.
	ProblemSecretMoved ProblemCode = "secret_moved"
	// ProblemNoEntries: an add named no entry at all.
	ProblemNoEntries ProblemCode = "no_entries"
	// ProblemAllowlistFull: the add would pass models.MaxAllowlistEntries.
	ProblemAllowlistFull ProblemCode = "allowlist_full"
	// ProblemSettingsTogether: each value is valid alone, but not together.
	ProblemSettingsTogether ProblemCode = "settings_together"
)

// Problem is one thing wrong with the input of an operation.
type Problem struct {
	// Field is the input it is about: "entries", "note", a setting key,
	// or an integration's "name", "url", "headers", "params", "body"….
	Field string
	// Line is the 1-based line (web form) or argument (command line) of a
	// list input such as entries; 0 otherwise.
	Line int
	// Input is the offending text, when there is one.
	Input string
	// Problem says what is wrong and Fix how to put it right: lower-case
	// clauses without a final full stop, for the front end to punctuate.
	Problem, Fix string
	Code         ProblemCode
}

// Text is the problem and its fix as one sentence.
func (p Problem) Text() string {
	s := p.Problem
	if p.Fix != "" {
		s += "; " + p.Fix
	}
	return tools.Sentence(s)
}

// Sentences returns the problem and the fix each as a sentence, for a
// page that shows them one after the other.
func (p Problem) Sentences() (problem, fix string) {
	return tools.Sentence(p.Problem), tools.Sentence(p.Fix)
}

// ValidationError is input that was refused before anything was stored:
// every problem found, each with its fix.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		where := p.Field
		if p.Input != "" {
			where += " " + fmt.Sprintf("%q", p.Input)
		}
		parts[i] = where + ": " + strings.TrimSuffix(p.Text(), ".")
	}
	return "nothing was saved: " + strings.Join(parts, "; ")
}

// Field returns the first problem about field.
func (e *ValidationError) Field(field string) (Problem, bool) {
	for _, p := range e.Problems {
		if p.Field == field {
			return p, true
		}
	}
	return Problem{}, false
}

// ConflictError is a change refused because its section moved on since
// the caller read it (another admin, another tab, another process saved
// first). Nothing was stored.
type ConflictError struct {
	Section  models.Section
	Expected int64 // the version the caller's change was based on
	Current  int64 // the version stored now
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the %s changed since it was read (version %d, now %d); nothing was saved: read it again and redo the change", e.Section, e.Expected, e.Current)
}

// Is makes errors.Is(err, models.ErrConflict) true, for callers that only
// care that it was a conflict.
func (e *ConflictError) Is(target error) bool { return target == models.ErrConflict }

// NotFoundError names the thing an operation was asked to change or show
// and did not find.
type NotFoundError struct {
	Kind string // "allowlist entry", "integration"
	Name string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("there is no %s named %s", e.Kind, e.Name)
}

// Is makes errors.Is(err, models.ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == models.ErrNotFound }

// DuplicateError is a name already taken by another thing of its kind.
type DuplicateError struct {
	Kind string
	Name string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("an %s named %s already exists; choose another name", e.Kind, e.Name)
}

// Is makes errors.Is(err, models.ErrDuplicate) true.
func (e *DuplicateError) Is(target error) bool { return target == models.ErrDuplicate }

// NotReloadedError says a change was saved (with its audit record) but
// the running guard did not load it. The operation's result is valid
// alongside it. The change takes effect at the next revision poll or
// restart; the cause is in Err and in the log.
type NotReloadedError struct {
	Err error
}

func (e *NotReloadedError) Error() string {
	return fmt.Sprintf("the change was saved, but the running guard did not reload it (%v); it picks the change up at its next check of the database, or restart the console", e.Err)
}

func (e *NotReloadedError) Unwrap() error { return e.Err }

// storeError turns the store's conflict, duplicate and not-found errors
// into this package's, so that front ends need only one vocabulary.
func storeError(err error) error {
	var ce *models.ConflictError
	var de *models.DuplicateError
	var nf *models.NotFoundError
	switch {
	case errors.As(err, &ce):
		return &ConflictError{Section: ce.Section, Expected: ce.Expected, Current: ce.Current}
	case errors.As(err, &de):
		return &DuplicateError{Kind: de.Kind, Name: de.Value}
	case errors.As(err, &nf):
		return &NotFoundError{Kind: nf.Kind, Name: nf.Value}
	}
	return err
}
