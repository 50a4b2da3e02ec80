package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// dummyHash makes a sign-in for an unknown name cost as much as one for a
// known name, so the timing does not tell which names exist. It is made
// on the first sign-in that needs it, not at package init: every
// `console` command links this package, `console help` included, and one
// bcrypt hash costs about a tenth of a second.
var dummyHash = sync.OnceValue(func() []byte {
	dummyHashesMade.Add(1)
	hash, _ := bcrypt.GenerateFromPassword([]byte("outbound-dummy-password"), bcrypt.DefaultCost)
	return hash
})

// dummyHashesMade counts dummyHash's bcrypt runs: at most one, and none
// before the first sign-in (a test holds package init to that).
var dummyHashesMade atomic.Int32

// comparePassword is bcrypt's compare, the cost every sign-in pays; a
// test counts its calls.
var comparePassword = bcrypt.CompareHashAndPassword

// SetupToken is the one-time first-run secret printed by `console serve`.
// With links (NewSharedSetupToken), the link any replica printed works on
// every replica, and using it ends them all.
type SetupToken struct {
	mu    sync.Mutex
	token string
	links SetupLinks
	// spent is the token once it was used, so a second visit of the link
	// is told "already used, sign in" rather than "not found".
	spent string
}

// NewSetupToken returns a fresh setup token.
func NewSetupToken() (*SetupToken, error) {
	t, err := randomSecret()
	if err != nil {
		return nil, err
	}
	return &SetupToken{token: t}, nil
}

// Value returns the token, or "" once it was used.
func (t *SetupToken) Value() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token
}

// matches says whether v is a live setup link: this process's own, or with
// shared links any replica's that none has used yet (the store decides).
func (t *SetupToken) matches(ctx context.Context, v string) bool {
	if t != nil && t.links != nil {
		if v == "" {
			return false
		}
		ok, err := t.links.SetupLinkExists(ctx, setupLinkHash(v))
		return err == nil && ok
	}
	tok := t.Value()
	return tok != "" && subtle.ConstantTimeCompare([]byte(v), []byte(tok)) == 1
}

// wasUsed reports whether v is a setup link that was used up: here, or
// with links shared by replicas, on any replica.
func (t *SetupToken) wasUsed(ctx context.Context, v string) bool {
	if t == nil || v == "" {
		return false
	}
	if t.links != nil {
		used, err := t.links.SetupLinkUsed(ctx, setupLinkHash(v))
		return err == nil && used
	}
	t.mu.Lock()
	spent := t.spent
	t.mu.Unlock()
	return spent != "" && subtle.ConstantTimeCompare([]byte(v), []byte(spent)) == 1
}

func (t *SetupToken) use(ctx context.Context) {
	t.mu.Lock()
	if t.token != "" {
		t.spent = t.token
	}
	t.token = ""
	t.mu.Unlock()
	if t.links != nil {
		// Best effort: should it fail, the links still stop working, since
		// first-run setup refuses once a user exists.
		_ = t.links.EndSetupLinks(ctx)
	}
}

func (s *Server) loginPage(c echo.Context) error {
	if userOf(c) != nil {
		return redirect(c, safeNext(c.QueryParam("next")))
	}
	return render(c, http.StatusOK, views.Login(views.LoginForm{CSRF: csrfToken(c), Next: c.QueryParam("next"), NeedsSetup: s.needsSetup(c)}))
}

// needsSetup reports whether no user exists yet, so the sign-in page says
// how to create the first admin. A store error counts as "users exist":
// the page then shows the plain form.
func (s *Server) needsSetup(c echo.Context) bool {
	if s.d.Identity == nil {
		return false
	}
	n, err := s.d.Identity.CountUsers(c.Request().Context())
	return err == nil && n == 0
}

// setupLinkUnusable answers a setup request whose token does not match:
// the used-up link says so and points at sign-in; any other is not found.
func (s *Server) setupLinkUnusable(c echo.Context, token string) error {
	if s.d.Setup.wasUsed(c.Request().Context(), token) {
		return render(c, http.StatusGone, views.SetupUsed())
	}
	return echo.NewHTTPError(http.StatusNotFound)
}

func (s *Server) login(c echo.Context) error {
	name, password, next := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), c.FormValue("next")
	// The attempt is reserved (counted as failed) before the password is
	// checked, so parallel guesses cannot all slip past the limit.
	attempt, locked, err := s.throttle.reserve(c.Request().Context(), name, c.RealIP())
	if err != nil {
		return err
	}
	if locked != nil {
		return tooManySignIns(c, locked)
	}
	u, err := s.d.Store.UserByName(c.Request().Context(), name)
	hash := []byte(u.PasswordHash)
	if err != nil {
		if !errors.Is(err, models.ErrNotFound) {
			attempt.credit(c.Request().Context()) // no password was checked
			return err
		}
		hash = dummyHash()
	}
	if comparePassword(hash, []byte(password)) != nil || err != nil {
		return render(c, http.StatusUnauthorized, views.Login(views.LoginForm{CSRF: csrfToken(c), Name: name, Next: next,
			Error: "The name or password is wrong. Check both and try again.", NeedsSetup: s.needsSetup(c)}))
	}
	attempt.credit(c.Request().Context())
	if err := s.startSession(c, u.ID); err != nil {
		return err
	}
	if next == "" {
		return redirect(c, homeFor(u.Role))
	}
	return redirect(c, safeNext(next))
}

// tooManySignIns answers a sign-in refused by the throttle: 429, with
// Retry-After and a sentence that says whose limit it is and when to try
// again. The account's sentence reads the same for an unknown name.
func tooManySignIns(c echo.Context, l *signInLockout) error {
	secs := int(l.Wait / time.Second)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	whose := "from your address"
	if l.Account {
		whose = "for this name"
	}
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins %s. Try again at %s UTC, in %s.",
		whose, l.Until.UTC().Format("15:04:05"), waitWords(secs)))
}

// waitWords says a wait in seconds as people say it.
func waitWords(secs int) string {
	switch {
	case secs == 1:
		return "1 second"
	case secs < 90:
		return fmt.Sprintf("%d seconds", secs)
	default:
		return fmt.Sprintf("%d minutes", (secs+59)/60)
	}
}

func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(cookieName(c, sessionCookie)); err == nil {
		if err := s.d.Store.DeleteSession(c.Request().Context(), hashSecret(ck.Value)); err != nil {
			return err
		}
	}
	s.clearCookie(c, sessionCookie)
	return redirect(c, "/login")
}

func (s *Server) setupPage(c echo.Context) error {
	if !s.d.Setup.matches(c.Request().Context(), c.QueryParam("token")) {
		return s.setupLinkUnusable(c, c.QueryParam("token"))
	}
	// A user added from the command line (a support user, say) ends
	// first-run setup: CreateFirstAdmin would refuse, so the form is not
	// offered. The token is left as it is: a GET changes nothing.
	if done, err := s.usersExist(c); err != nil || done {
		return err
	}
	return render(c, http.StatusOK, views.Setup(views.SetupForm{CSRF: csrfToken(c), Token: c.QueryParam("token")}))
}

func (s *Server) setup(c echo.Context) error {
	token := c.FormValue("token")
	if !s.d.Setup.matches(c.Request().Context(), token) {
		if s.d.Setup.wasUsed(c.Request().Context(), token) {
			return render(c, http.StatusGone, views.SetupUsed())
		}
		return echo.NewHTTPError(http.StatusNotFound, "This setup link is wrong. Sign in, or create an admin with `console user add --role admin NAME`.")
	}
	if done, err := s.usersExist(c); err != nil || done {
		if done {
			s.d.Setup.use(c.Request().Context())
		}
		return err
	}
	name, pw, pw2 := strings.TrimSpace(c.FormValue("name")), c.FormValue("password"), c.FormValue("password2")
	errs := map[string]string{}
	if msg := userNameMessage(app.CheckUserName(name)); msg != "" {
		errs["name"] = msg
	}
	if msg := newPasswordMessage(pw, pw2); msg != "" {
		errs["password"] = msg
	}
	if len(errs) > 0 {
		return render(c, http.StatusUnprocessableEntity, views.Setup(views.SetupForm{CSRF: csrfToken(c), Token: token, Name: name, Errors: errs}))
	}
	u, err := s.d.Identity.CreateFirstAdmin(c.Request().Context(), name, pw)
	if err != nil {
		if errors.Is(err, app.ErrSetupDone) {
			// A user was added between the check above and this write.
			s.d.Setup.use(c.Request().Context())
			return render(c, http.StatusConflict, views.SetupDone())
		}
		return err
	}
	s.d.Setup.use(c.Request().Context())
	if err := s.startSession(c, u.ID); err != nil {
		return err
	}
	s.flash(c, "ok", "Welcome, "+u.Name+". You are the first admin.")
	return redirect(c, "/integrations")
}

// usersExist answers a setup request when any user exists, with the page
// that says how to add an admin instead, and reports whether it did.
func (s *Server) usersExist(c echo.Context) (bool, error) {
	n, err := s.d.Identity.CountUsers(c.Request().Context())
	if err != nil || n == 0 {
		return false, err
	}
	status := http.StatusOK
	if c.Request().Method == http.MethodPost {
		status = http.StatusConflict
	}
	return true, render(c, status, views.SetupDone())
}

func (s *Server) accountPage(c echo.Context) error {
	return render(c, http.StatusOK, views.Account(s.shell(c, "Account", ""), views.AccountForm{}))
}

func (s *Server) changePassword(c echo.Context) error {
	u := userOf(c)
	pw, pw2 := c.FormValue("password"), c.FormValue("password2")
	err := s.d.Identity.ChangeOwnPassword(c.Request().Context(), u.ID, c.FormValue("current"), pw, pw2)
	if err != nil {
		errs := map[string]string{}
		if errors.Is(err, app.ErrWrongPassword) {
			errs["current"] = "This is not your current password."
		}
		var policy *app.PasswordError
		if errors.As(err, &policy) || errors.Is(err, app.ErrPasswordsDiffer) {
			errs["password"] = newPasswordMessage(pw, pw2)
		}
		if len(errs) == 0 {
			return err
		}
		return render(c, http.StatusUnprocessableEntity, views.Account(s.shell(c, "Account", ""), views.AccountForm{Errors: errs}))
	}
	// The change ended every session of u, this one included.
	s.clearCookie(c, sessionCookie)
	return redirect(c, "/login")
}
