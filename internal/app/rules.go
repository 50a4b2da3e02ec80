package app

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/outboundhq/outbound/models"
)

// The rules below are the product's, not a front end's: the console's
// forms and the command line both call them, so a name or password one of
// them accepts is accepted by the other. Each failure is a typed error
// carrying what the front ends need to word it their own way (a form
// field's sentence, a command line's message) without reading its text.

// MaxNameLength bounds token and user names: a name shows in lists, log
// lines and CSV cells.
const MaxNameLength = 64

// tokenNamePattern is safe in a URL, a log line and a CSV cell.
var tokenNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// NameProblem says what is wrong with a token or user name.
type NameProblem int

const (
	// NameEmpty: no name was given.
	NameEmpty NameProblem = iota + 1
	// NameTooLong: longer than MaxNameLength.
	NameTooLong
	// NameBadCharacters: a token name outside letters, digits, dots,
	// hyphens and underscores, or not starting with a letter or digit.
	NameBadCharacters
	// NameHasSpace: a user name with white space in it.
	NameHasSpace
)

// TokenNameError is a token name CheckTokenName refuses.
type TokenNameError struct {
	Name    string
	Problem NameProblem
}

func (e *TokenNameError) Error() string {
	switch e.Problem {
	case NameEmpty:
		return "the token needs a name, e.g. helpdesk-bot"
	case NameTooLong:
		return fmt.Sprintf("the token name is %d characters long; use at most %d", len(e.Name), MaxNameLength)
	}
	return fmt.Sprintf("%q is not a token name: use letters, digits, dots, hyphens or underscores, starting with a letter or digit, e.g. helpdesk-bot", e.Name)
}

// CheckTokenName returns a *TokenNameError for a name no token may have.
func CheckTokenName(name string) error {
	switch {
	case name == "":
		return &TokenNameError{Name: name, Problem: NameEmpty}
	case len(name) > MaxNameLength:
		return &TokenNameError{Name: name, Problem: NameTooLong}
	case !tokenNamePattern.MatchString(name):
		return &TokenNameError{Name: name, Problem: NameBadCharacters}
	}
	return nil
}

// UserNameError is a user name CheckUserName refuses.
type UserNameError struct {
	Name    string
	Problem NameProblem
}

func (e *UserNameError) Error() string {
	switch e.Problem {
	case NameEmpty:
		return "the user needs a name, e.g. ada"
	case NameTooLong:
		return fmt.Sprintf("the user name has %d characters; use at most %d", utf8.RuneCountInString(e.Name), MaxNameLength)
	}
	return fmt.Sprintf("%q is not a user name: use a name without spaces, e.g. ada or ada.lovelace", e.Name)
}

// CheckUserName returns a *UserNameError for a name no user may have.
func CheckUserName(name string) error {
	switch {
	case name == "":
		return &UserNameError{Name: name, Problem: NameEmpty}
	case utf8.RuneCountInString(name) > MaxNameLength:
		return &UserNameError{Name: name, Problem: NameTooLong}
	case strings.ContainsAny(name, " \t\r\n"):
		return &UserNameError{Name: name, Problem: NameHasSpace}
	}
	return nil
}

// Password bounds. The lower one is counted in characters, as people
// count; the upper one in bytes, because bcrypt reads at most 72 bytes
// and would silently ignore the rest.
const (
	MinPasswordChars = 10
	MaxPasswordBytes = 72
)

// PasswordProblem says which bound a password misses.
type PasswordProblem int

const (
	// PasswordTooShort: fewer than MinPasswordChars characters.
	PasswordTooShort PasswordProblem = iota + 1
	// PasswordTooLong: more than MaxPasswordBytes bytes.
	PasswordTooLong
)

// PasswordError is a new password the policy refuses. Chars and Bytes
// are the password's length, so a message can say by how much it missed.
type PasswordError struct {
	Problem PasswordProblem
	Chars   int
	Bytes   int
}

func (e *PasswordError) Error() string {
	if e.Problem == PasswordTooShort {
		return fmt.Sprintf("the password has %d characters; use at least %d", e.Chars, MinPasswordChars)
	}
	return fmt.Sprintf("the password is %d bytes long; use at most %d bytes (%d plain ASCII characters, fewer with accented letters or symbols)", e.Bytes, MaxPasswordBytes, MaxPasswordBytes)
}

// CheckPassword returns a *PasswordError for a password the policy
// refuses as a new password.
func CheckPassword(pw string) error {
	chars, bytes := utf8.RuneCountInString(pw), len(pw)
	switch {
	case chars < MinPasswordChars:
		return &PasswordError{Problem: PasswordTooShort, Chars: chars, Bytes: bytes}
	case bytes > MaxPasswordBytes:
		return &PasswordError{Problem: PasswordTooLong, Chars: chars, Bytes: bytes}
	}
	return nil
}

// RoleError is text that names no role.
type RoleError struct{ Input string }

func (e *RoleError) Error() string {
	if e.Input == "" {
		return "choose a role: admin or support"
	}
	return fmt.Sprintf("%q is not a role; choose admin or support", e.Input)
}

// ParseRole reads a role as typed: "admin" or "support", in any case,
// around white space.
func ParseRole(text string) (models.Role, error) {
	r := models.Role(strings.ToLower(strings.TrimSpace(text)))
	if !r.Valid() {
		return "", &RoleError{Input: text}
	}
	return r, nil
}
