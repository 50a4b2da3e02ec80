package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestFirstRunSetupSignInAndSignOut(t *testing.T) {
	c := startConsole(t)
	page := newPage(t, c.url)
	c.setupAdmin(page, "ada")
	see(t, page, ".rail .who-name", "ada")

	// The setup link works once; opened again it says so and leads to sign-in.
	resp := mustGoto(t, page, c.setup)
	if resp.Status() != http.StatusGone {
		t.Fatalf("the used setup link answered %d", resp.Status())
	}
	see(t, page, `[data-testid="setup-used"]`, "Sign in")

	mustGoto(t, page, c.url+"/integrations")
	click(t, page, `.rail-foot button[type="submit"]`)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/login$`)); err != nil {
		t.Fatal(err)
	}
	mustGoto(t, page, c.url+"/refusals")
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/login\?next=%2Frefusals$`)); err != nil {
		t.Fatalf("a signed-out browser must be sent to sign in: %v", err)
	}
	signInHere(t, page, "ada", adminPassword)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/refusals$`)); err != nil {
		t.Fatalf("sign-in must return to the page asked for: %v", err)
	}
}

func TestWrongPasswordAndThrottling(t *testing.T) {
	c := startConsole(t)
	c.cli(adminPassword+"\n", "user", "add", "--role", "admin", "ada")
	page := newPage(t, c.url)
	c.signIn(page, "ada", "not the password")
	see(t, page, `[data-testid="login-error"]`, "The name or password is wrong")
	for i := 0; i < 4; i++ {
		c.signIn(page, "ada", "still wrong "+strings.Repeat("x", i))
	}
	c.signIn(page, "ada", adminPassword)
	see(t, page, "h1", "Too many attempts")
	see(t, page, "main", "Too many failed sign-ins for this name")

	// The same, as a script sees it: it fetches the form for its CSRF
	// token like a browser, and gets 429 with Retry-After.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	form, err := client.Get(c.url + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(form.Body)
	form.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatal("the sign-in form has no CSRF token")
	}
	resp, err := client.PostForm(c.url+"/login", url.Values{"_csrf": {string(m[1])}, "name": {"ada"}, "password": {adminPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a throttled sign-in answered %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
