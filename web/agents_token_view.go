package web

import (
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// A new agent token is shown by post/redirect/get, so reloading the page
// that shows it does not submit the create form again (which answered 422
// "already exists"). The secret must still never sit in a URL, a cookie
// or a cache, and be shown only once: the POST parks it here, in memory,
// under a random view ID that only the creating session may open, and the
// first GET takes it out. A reload finds the view spent and says so.

// tokenViewTTL is how long a parked token waits for its one view.
const tokenViewTTL = 5 * time.Minute

// maxTokenViews bounds the parked tokens; past it the oldest are dropped
// (their creator sees "expired" and revokes).
const maxTokenViews = 256

type tokenView struct {
	session  int64
	name     string
	token    string // "" once shown
	expires  time.Time
	base     string
	serialNo uint64
}

// tokenViews are the new tokens waiting for their one view.
type tokenViews struct {
	mu     sync.Mutex
	m      map[string]*tokenView
	serial uint64
}

func newTokenViews() *tokenViews { return &tokenViews{m: map[string]*tokenView{}} }

// park keeps a new token for one view by session and returns the view ID.
func (v *tokenViews) park(now time.Time, session int64, name, token, base string) (string, error) {
	id, err := randomSecret()
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.prune(now)
	v.serial++
	v.m[id] = &tokenView{session: session, name: name, token: token, base: base, expires: now.Add(tokenViewTTL), serialNo: v.serial}
	return id, nil
}

// take returns the parked view for session and spends its token: the
// first call sees the token, later ones the same name with token "".
// A view of another session, or an unknown or expired one, is not found.
func (v *tokenViews) take(now time.Time, session int64, id string) (tokenView, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.prune(now)
	p, ok := v.m[id]
	if !ok || p.session != session {
		return tokenView{}, false
	}
	shown := *p
	p.token = ""
	return shown, true
}

// prune drops expired views, then the oldest while over the bound.
func (v *tokenViews) prune(now time.Time) {
	for id, p := range v.m {
		if now.After(p.expires) {
			delete(v.m, id)
		}
	}
	for len(v.m) >= maxTokenViews {
		var oldest string
		for id, p := range v.m {
			if oldest == "" || p.serialNo < v.m[oldest].serialNo {
				oldest = id
			}
		}
		delete(v.m, oldest)
	}
}

// newTokenPage is the GET after creating a token: the token once, then
// a page that says it was shown and what to do if it was not copied.
func (s *Server) newTokenPage(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	view, ok := s.tokenViews.take(s.d.Now(), userOf(c).sessionID, c.Param("view"))
	if !ok || view.token == "" {
		return render(c, http.StatusGone, views.AgentTokenShown(s.shell(c, "Token already shown", "agents"), view.name))
	}
	return render(c, http.StatusOK, views.AgentToken(s.shell(c, "Token for "+view.name, "agents"), views.AgentNewToken{
		Name: view.name, Token: view.token, MCPURL: view.base + "/mcp", APIURL: view.base + "/api/v1/tools/fetch_url",
	}))
}
