package e2e

import (
	"html"
	"net/http"
	"regexp"
	"testing"
)

// TestCSRFCookieTossingRefused replays the attack of issue 9, finding 1,
// in a real browser: while the admin ada is signed in, a page on another
// port of the console's own host (the same site to the browser, so the
// SameSite=Lax session cookie goes along) plants outbound_csrf=X for
// /users — cookies ignore ports, so the console receives it — and
// auto-posts "add admin eve" with _csrf=X. A check that only compares the
// form token with a cookie passes that; the console must answer 403 and
// save nothing. The same against the allowlist (adding the cloud metadata
// address, with the right revision even) is refused too.
func TestCSRFCookieTossingRefused(t *testing.T) {
	c, page := adminConsole(t)
	attacker := serveLoopback(t, htmlPage(`<!doctype html><html><head><title>Quarterly report</title></head><body>
<form id="f" method="post" action="`+html.EscapeString(c.url)+`/users">
<input type="hidden" name="_csrf" value="tossed-token">
<input type="hidden" name="name" value="eve">
<input type="hidden" name="role" value="admin">
<input type="hidden" name="password" value="eve-owns-this-console">
<input type="hidden" name="password2" value="eve-owns-this-console">
</form><script>
document.cookie = "outbound_csrf=tossed-token; path=/users";
document.getElementById("f").submit();
</script></body></html>`))

	resp, err := page.ExpectResponse(regexp.MustCompile(`/users$`), func() error {
		_, err := page.Goto(attacker)
		return err
	})
	if err != nil {
		t.Fatalf("the attacker's form never reached the console: %v", err)
	}
	if resp.Status() != http.StatusForbidden {
		t.Fatalf("the cookie-tossing POST /users answered %d (Location %q); want 403", resp.Status(), resp.Headers()["location"])
	}
	// The browser did carry the admin's session: the refusal is the CSRF
	// check's, not a missing sign-in.
	req, err := resp.Request().AllHeaders()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`outbound_session=`).MatchString(req["cookie"]) || !regexp.MustCompile(`outbound_csrf=tossed-token`).MatchString(req["cookie"]) {
		t.Fatalf("the forged request should carry ada's session and the tossed cookie; it sent Cookie: %q", req["cookie"])
	}

	// Nothing was saved: ada is still the only user.
	mustGoto(t, page, c.url+"/users")
	seeCount(t, page, `[data-testid="user-row"]`, 1)
	see(t, page, `[data-testid="user-name"]`, "ada")
	seeCount(t, page, `[data-testid="user-name"]:text-is("eve")`, 0)

	revision := currentRevision(t, page.Request(), c.url)
	allowlist := serveLoopback(t, htmlPage(`<!doctype html><html><body>
<form id="f" method="post" action="`+html.EscapeString(c.url)+`/integrations/allowlist">
<input type="hidden" name="_csrf" value="tossed-token">
<input type="hidden" name="entries" value="169.254.169.254">
<input type="hidden" name="revision" value="`+revision+`">
</form><script>
document.cookie = "outbound_csrf=tossed-token; path=/integrations";
document.getElementById("f").submit();
</script></body></html>`))
	resp, err = page.ExpectResponse(regexp.MustCompile(`/integrations/allowlist$`), func() error {
		_, err := page.Goto(allowlist)
		return err
	})
	if err != nil {
		t.Fatalf("the attacker's allowlist form never reached the console: %v", err)
	}
	if resp.Status() != http.StatusForbidden {
		t.Fatalf("the cookie-tossing POST /integrations/allowlist answered %d (Location %q); want 403", resp.Status(), resp.Headers()["location"])
	}
	mustGoto(t, page, c.url+"/integrations")
	seeBadge(t, page, "PUBLIC WEB")
	seeCount(t, page, `[data-testid="allow-entry"]`, 0)
}
