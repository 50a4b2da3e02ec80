package tools

import (
	"regexp"
	"strings"
	"testing"
)

func newVendorEnv(t testing.TB) (*browserEnv, *vendorSite) {
	v := &vendorSite{}
	e := newBrowserEnv(t, v)
	v.loopback = e.loopback.hostPort()
	return e, v
}

// TestBrowserTasks are the reference design's six tasks, done by the
// scripted agent through the registry.
func TestBrowserTasks(t *testing.T) {
	e, v := newVendorEnv(t)

	t.Run("read a title", func(t *testing.T) {
		a := e.agent(t, "title")
		res := a.open("http://shop.example.com/")
		if !res.OK() {
			t.Fatalf("refused: %s", res.Text)
		}
		for _, want := range []string{DataNote, "URL: http://shop.example.com/", "Title: Acme Status Shop", "Site: example.com", "# Welcome to Acme", `link "Our plans" → /list]`} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("the answer lacks %q:\n%s", want, res.Text)
			}
		}
	})

	t.Run("read a price behind a tab", func(t *testing.T) {
		a := e.agent(t, "price")
		res := a.open("http://shop.example.com/product")
		if strings.Contains(res.Text, "42.50") {
			t.Fatalf("the hidden price shows before the tab is clicked:\n%s", res.Text)
		}
		res = a.click(a.ref("Pricing"))
		if !res.OK() || !strings.Contains(res.Text, "Price: EUR 42.50 per month") {
			t.Fatalf("after clicking the tab:\n%s", res.Text)
		}
		if len(e.Asked()) != 0 {
			t.Fatalf("a tab click was put to a person: %+v", e.Asked())
		}
	})

	t.Run("fill and submit a form", func(t *testing.T) {
		a := e.agent(t, "form")
		a.open("http://shop.example.com/subscribe")
		if res := a.typeIn(a.ref("Email"), "ops@example.org"); !res.OK() || !strings.Contains(res.Text, `value "ops@example.org"`) {
			t.Fatalf("typing:\n%s", res.Text)
		}
		if res := a.typeIn(a.ref("Plan"), "Pro"); !res.OK() || !strings.Contains(res.Text, `= "Pro"`) {
			t.Fatalf("choosing:\n%s", res.Text)
		}
		res := a.click(a.ref("Subscribe"))
		if !res.OK() || !strings.Contains(res.Text, "Subscribed.") {
			t.Fatalf("submitting:\n%s", res.Text)
		}
		if posts := v.Posts(); len(posts) != 1 || posts[0] != "/subscribe email=ops%40example.org&plan=Pro" {
			t.Fatalf("the site received %q", posts)
		}
		asked := e.Asked()
		if len(asked) != 3 || asked[0].Tool != BrowserTypeName || !strings.Contains(asked[0].What, `"ops@example.org" into the field Email`) ||
			asked[2].Tool != BrowserClickName || !strings.Contains(asked[2].What, `POST http://shop.example.com/subscribe`) || !strings.Contains(asked[2].What, `email="ops@example.org"`) ||
			asked[2].Where != "http://shop.example.com/subscribe" {
			t.Fatalf("the person was asked %+v", asked)
		}
	})

	t.Run("follow a link", func(t *testing.T) {
		a := e.agent(t, "link")
		a.open("http://shop.example.com/links")
		res := a.click(a.ref("Contact us"))
		if !res.OK() || !strings.Contains(res.Text, "URL: http://help.example.com/contact") || !strings.Contains(res.Text, "support@example.com") {
			t.Fatalf("following a link within the site:\n%s", res.Text)
		}
	})

	t.Run("count list items", func(t *testing.T) {
		a := e.agent(t, "list")
		res := a.open("http://shop.example.com/list")
		if n := len(regexp.MustCompile(`(?m)^- `).FindAllString(res.Text, -1)); n != 5 {
			t.Fatalf("%d list items in:\n%s", n, res.Text)
		}
	})

	t.Run("a long page is cut and found", func(t *testing.T) {
		a := e.agent(t, "long")
		res := a.open("http://shop.example.com/long")
		if !strings.Contains(res.Text, "the rest is cut") || strings.Contains(res.Text, "cancellation fee") {
			t.Fatalf("the long page:\n%s", res.Text[:min(len(res.Text), 800)])
		}
		res = a.call(BrowserFindName, map[string]any{"text": "Cancellation FEE"})
		if !res.OK() || !strings.Contains(res.Text, "> The cancellation fee is EUR 9.") {
			t.Fatalf("find:\n%s", res.Text)
		}
		if res := a.click(a.ref("Back home")); !res.OK() || !strings.Contains(res.Text, "Title: Acme Status Shop") {
			t.Fatalf("a ref found by browser_find:\n%s", res.Text)
		}
	})
}
