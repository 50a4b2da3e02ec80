package web

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
)

const (
	sessionCookie = "outbound_session"
	// sessionIdle signs out a browser left alone for a working day.
	sessionIdle = 12 * time.Hour
	// sessionMaxAge signs everyone in again at least once a week.
	sessionMaxAge = 7 * 24 * time.Hour
	// touchEvery limits last-seen writes to one a minute per session.
	touchEvery = time.Minute
)

// currentUser is the signed-in user of a request.
type currentUser struct {
	ID        int64
	Name      string
	Role      models.Role
	sessionID int64
	csrf      string // the session's form token (csrf.go)
}

func (u *currentUser) admin() bool { return u != nil && u.Role == models.RoleAdmin }

func userOf(c echo.Context) *currentUser {
	u, _ := c.Get("user").(*currentUser)
	return u
}

// loadSession finds the request's session, if any. Only a hash of the
// session ID is stored, so the database cannot sign anyone in.
func (s *Server) loadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ck, err := c.Cookie(cookieName(c, sessionCookie))
		if err == nil && ck.Value != "" {
			now := s.d.Now()
			sess, u, err := s.d.Store.SessionUser(c.Request().Context(), hashSecret(ck.Value), now, sessionIdle, sessionMaxAge)
			if err == nil {
				c.Set("user", &currentUser{ID: u.ID, Name: u.Name, Role: u.Role, sessionID: sess.ID, csrf: sessionCSRFToken(ck.Value)})
				if now.Sub(sess.LastSeenAt) > touchEvery {
					_ = s.d.Store.TouchSession(c.Request().Context(), sess.ID, now)
				}
			} else {
				s.clearCookie(c, sessionCookie)
			}
		}
		return next(c)
	}
}

// requireUser sends anonymous readers to sign in, and refuses anonymous
// changes outright.
func (s *Server) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if userOf(c) != nil {
			return next(c)
		}
		if c.Request().Method == http.MethodGet {
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
		}
		return echo.NewHTTPError(http.StatusUnauthorized, "You are not signed in, or your session has expired. Sign in and try again.")
	}
}

// requireAdmin is the server-side role check for every admin route:
// hiding a button is not a check.
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// Echo routes a path no route serves through the innermost group's
		// middleware (as "/*"): that is a missing page, not an admin one.
		if c.Path() == "/*" {
			return echo.ErrNotFound
		}
		if !userOf(c).admin() {
			return echo.NewHTTPError(http.StatusForbidden, "Only admins can do this. Ask an admin, or have your role changed under Users.")
		}
		return next(c)
	}
}

// startSession signs the user with userID in on this browser.
func (s *Server) startSession(c echo.Context, userID int64) error {
	token, err := randomSecret()
	if err != nil {
		return err
	}
	if err := s.d.Store.CreateSession(c.Request().Context(), userID, hashSecret(token), c.RealIP(), c.Request().UserAgent(), s.d.Now()); err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{
		Name: cookieName(c, sessionCookie), Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: servedOverTLS(c),
		MaxAge: int(sessionMaxAge / time.Second),
	})
	return nil
}

func (s *Server) clearCookie(c echo.Context, name string) {
	c.SetCookie(&http.Cookie{Name: cookieName(c, name), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: servedOverTLS(c)})
}

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
