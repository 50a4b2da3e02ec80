package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// A filter form submitted by GET sends every field, the empty ones too
// (/refusals?code=&reason=&tool=&host=example.com…), and that is the link
// an admin copies into a ticket or bookmarks. Filter pages answer such a
// request with a redirect to the same view without the empty parameters,
// so every link to a filtered view names only the filters that apply.
// app.js drops the empty fields before submitting, saving the round trip
// where scripts run.

// withoutEmptyParams reports whether the request's query has a parameter
// with only empty values and, if so, the query without them.
func withoutEmptyParams(q url.Values) (url.Values, bool) {
	clean, dropped := url.Values{}, false
	for k, vals := range q {
		var kept []string
		for _, v := range vals {
			if strings.TrimSpace(v) != "" {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			dropped = true
			continue
		}
		if len(kept) != len(vals) {
			dropped = true
		}
		clean[k] = kept
	}
	return clean, dropped
}

// redirectEmptyParams answers a GET with empty query parameters with a
// 303 to the same path without them, and reports whether it did.
func redirectEmptyParams(c echo.Context) (bool, error) {
	req := c.Request()
	if req.Method != http.MethodGet {
		return false, nil
	}
	clean, dropped := withoutEmptyParams(req.URL.Query())
	if !dropped {
		return false, nil
	}
	to := req.URL.Path
	if len(clean) > 0 {
		to += "?" + clean.Encode()
	}
	return true, c.Redirect(http.StatusSeeOther, to)
}
