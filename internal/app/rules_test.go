package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func TestTokenNameRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		want NameProblem // 0: accepted
	}{
		{"helpdesk-bot", 0},
		{"a", 0},
		{"Bot_2.prod", 0},
		{strings.Repeat("a", MaxNameLength), 0},
		{"", NameEmpty},
		{strings.Repeat("a", MaxNameLength+1), NameTooLong},
		{"help desk", NameBadCharacters},
		{"bots/one", NameBadCharacters},
		{".hidden", NameBadCharacters},
		{"-dash", NameBadCharacters},
		{"bøt", NameBadCharacters},
	} {
		err := CheckTokenName(tc.name)
		var ne *TokenNameError
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("CheckTokenName(%q) = %v, want accepted", tc.name, err)
		case tc.want != 0 && (!errors.As(err, &ne) || ne.Problem != tc.want || ne.Name != tc.name):
			t.Errorf("CheckTokenName(%q) = %v, want a *TokenNameError with problem %d", tc.name, err, tc.want)
		}
	}
}

func TestUserNameRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		want NameProblem
	}{
		{"ada", 0},
		{"ada.lovelace", 0},
		{strings.Repeat("é", MaxNameLength), 0}, // counted in characters
		{"", NameEmpty},
		{strings.Repeat("n", MaxNameLength+1), NameTooLong},
		{"sam smith", NameHasSpace},
		{"sam\tsmith", NameHasSpace},
		{"sam\n", NameHasSpace},
	} {
		err := CheckUserName(tc.name)
		var ne *UserNameError
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("CheckUserName(%q) = %v, want accepted", tc.name, err)
		case tc.want != 0 && (!errors.As(err, &ne) || ne.Problem != tc.want):
			t.Errorf("CheckUserName(%q) = %v, want a *UserNameError with problem %d", tc.name, err, tc.want)
		}
	}
}

func TestPasswordPolicy(t *testing.T) {
	for _, tc := range []struct {
		label, pw    string
		want         PasswordProblem
		chars, bytes int
		message      string
	}{
		{"ten ASCII", "0123456789", 0, 10, 10, ""},
		{"ten accented", strings.Repeat("é", 10), 0, 10, 20, ""},
		{"72 bytes", strings.Repeat("p", 72), 0, 72, 72, ""},
		{"nine accented", strings.Repeat("é", 9), PasswordTooShort, 9, 18, "the password has 9 characters; use at least 10"},
		{"73 bytes", strings.Repeat("p", 73), PasswordTooLong, 73, 73, "the password is 73 bytes long; use at most 72 bytes"},
		{"37 accented", strings.Repeat("é", 37), PasswordTooLong, 37, 74, "the password is 74 bytes long"},
	} {
		err := CheckPassword(tc.pw)
		var pe *PasswordError
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("%s: %v, want accepted", tc.label, err)
		case tc.want == 0:
		case !errors.As(err, &pe) || pe.Problem != tc.want || pe.Chars != tc.chars || pe.Bytes != tc.bytes:
			t.Errorf("%s: %#v, want problem %d with %d chars, %d bytes", tc.label, err, tc.want, tc.chars, tc.bytes)
		case !strings.Contains(err.Error(), tc.message):
			t.Errorf("%s: %q, want it to say %q", tc.label, err, tc.message)
		}
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]models.Role{"admin": models.RoleAdmin, "support": models.RoleSupport, " Admin ": models.RoleAdmin, "SUPPORT": models.RoleSupport} {
		if got, err := ParseRole(in); err != nil || got != want {
			t.Errorf("ParseRole(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "root", "admins"} {
		var re *RoleError
		if _, err := ParseRole(in); !errors.As(err, &re) || re.Input != in {
			t.Errorf("ParseRole(%q) = %v, want a *RoleError naming it", in, err)
		}
	}
}
