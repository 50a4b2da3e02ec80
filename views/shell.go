// Package views holds the console's templ components. They take view
// models (plain structs built by web/ handlers), never database rows, so
// a page shows exactly what its handler decided to show.
package views

// Shell is what every signed-in page needs: who is looking, where they
// are, the CSRF token for its forms, and a one-time notice.
type Shell struct {
	Title  string
	User   string
	Admin  bool
	Active string // the rail item of this page
	CSRF   string
	Flash  Flash
}

// Flash is a notice carried across a Post/Redirect/Get.
type Flash struct {
	Kind    string // "ok" or "error"
	Message string
}

// railItem is one entry of the left rail.
type railItem struct {
	Key, Label, Href string
	AdminOnly        bool
}

var rail = []railItem{
	{"overview", "Overview", "/overview", false},
	{"integrations", "Integrations", "/integrations", false},
	{"refusals", "Refusal log", "/refusals", false},
	{"preview", "Safe preview", "/preview", false},
	{"agents", "Agents", "/agents", true},
	{"users", "Users", "/users", true},
	{"settings", "Settings", "/settings", true},
	{"audit", "Audit", "/audit", true},
}

func railFor(admin bool) []railItem {
	out := make([]railItem, 0, len(rail))
	for _, r := range rail {
		if admin || !r.AdminOnly {
			out = append(out, r)
		}
	}
	return out
}

func roleLabel(admin bool) string {
	if admin {
		return "admin"
	}
	return "support"
}
