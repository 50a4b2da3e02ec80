package web

// Allow this host: from a refusal in the log to the add form, prefilled
// with the literal entry that admits it and a note recording where it came
// from. Before offering the form it decides the refused URL under the
// policy as it would be with the entry, so the admin reads exactly what
// becomes reachable, and it offers nothing when no entry can help.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// resolverSource is implemented by *guard.Guard. The preview must resolve
// exactly as the running guard does, and Deps.Guard is only a Decider.
type resolverSource interface {
	Resolver() guard.Resolver
}

func (s *Server) allowFromRefusal(c echo.Context) error {
	ctx := c.Request().Context()
	raw := c.QueryParam("refusal")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%q is not a refusal number. Open Allow this host from a refusal in the Refusal log.", raw))
	}
	st, err := s.loadAllowlist(ctx)
	if err != nil {
		return err
	}
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	r, err := s.d.Store.RefusalByID(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		// Rendered here rather than returned: the central handler gives
		// every 404 the generic "no page" text.
		p.Notice = fmt.Sprintf("Refusal #%d does not exist; the retention setting may have purged it. Pick a refusal in the Refusal log.", id)
		return s.renderEgress(c, http.StatusNotFound, p)
	}
	if err != nil {
		return err
	}
	origin, entry := s.planAllow(c, st, r)
	p.Origin = &origin
	if !origin.Fixable {
		p.Form = nil
		return s.renderEgress(c, http.StatusOK, p)
	}
	p.Form.Entries = entry.String()
	// Under PUBLIC WEB a plain entry would narrow every agent to the
	// list: the host is offered as an internal host instead.
	p.Form.Internal = st.PublicWeb()
	p.Form.Note = originNote(r, userOf(c).Name)
	return s.renderEgress(c, http.StatusOK, p)
}

// planAllow works out the literal entry for refusal r and what it would
// make reachable, or why no entry is offered.
func (s *Server) planAllow(c echo.Context, st allowlistState, r models.Refusal) (views.AllowOrigin, guard.Entry) {
	o := views.AllowOrigin{RefusalID: r.ID, URL: r.URL, Code: r.Code, Reason: r.Reason, Message: r.Message}
	v := app.LoggedRefusalOf(r)
	if why := noEntryHelps(v); why != "" {
		o.Why = why
		return o, guard.Entry{}
	}
	// Decided as the refused caller: entries scoped to it count.
	ctx := guard.WithCaller(c.Request().Context(), guard.Caller{Agent: r.Agent, Tool: r.Tool, Service: r.Integration})
	now := s.decide(ctx, r.URL)
	switch {
	case now.Allowed:
		by := "PUBLIC WEB"
		if !now.Entry.IsZero() {
			by = "the entry " + now.Entry.String()
		}
		o.Why = "This URL is allowed now, by " + by + ": the list or the settings changed after the refusal. There is nothing to add."
		return o, guard.Entry{}
	case now.Host == "":
		o.Why = "The URL is invalid (" + now.Message + "), so no entry can make it work."
		return o, guard.Entry{}
	case now.Reason == guard.ReasonMetadata:
		o.Why = now.Message + " Allow this host never unlocks a metadata endpoint."
		return o, guard.Entry{}
	}
	entry, err := guard.ParseEntry(v.Remedy.Entry)
	if err != nil {
		var ee *guard.EntryError
		errors.As(err, &ee)
		o.Why = "No entry can admit " + now.Host + ": " + ee.Problem + "."
		return o, guard.Entry{}
	}
	if slices.Contains(st.EntriesIn(guard.Scope{}), entry) {
		o.Why = entry.String() + " is already on the list; the URL is refused for another reason: " + now.Message
		return o, guard.Entry{}
	}
	internal := st.PublicWeb()
	rules, err := guard.ParseStoredRules(app.StoredRules(st.Rows))
	if err != nil {
		o.Why = "The list as stored does not load: " + err.Error()
		return o, guard.Entry{}
	}
	policy, err := guard.NewPolicyRules(append(rules, guard.Rule{Entry: entry, Internal: internal}), st.settings)
	if err != nil {
		o.Why = "The list with " + entry.String() + " added would not be valid: " + err.Error()
		return o, guard.Entry{}
	}
	dctx, cancel := context.WithTimeout(ctx, decideTimeout)
	defer cancel()
	after := policy.Decide(dctx, s.resolver(), r.URL)
	if !after.Allowed {
		o.Why = "Adding " + entry.String() + " would not help: " + after.Message
		return o, guard.Entry{}
	}
	ports := openPorts(st.settings)
	o.Fixable, o.Entry = true, entry.String()
	o.Reach = reachPreview(entry, after, ports)
	o.Follows = followsName(entry)
	if internal {
		o.ModeChange = "The console stays on PUBLIC WEB: the entry is added as an internal host, which lets agents reach " + entryScope(entry, ports) +
			" without limiting them to listed hosts. Untick Internal host only if you mean to limit every agent to the list."
		if guard.Reason(r.Reason) == guard.ReasonPort {
			o.ModeChange += " To open the port for every public host instead, add it under Settings → Allowed ports."
		}
	}
	return o, entry
}

// noEntryHelps says why no allowlist entry is offered for refusal v, or
// returns "" when its remedy is an entry. The remedy decides, as it does
// for the Allow this host button; the refusal's own fix says what would
// help instead.
func noEntryHelps(v app.LoggedRefusal) string {
	switch v.Remedy.Kind {
	case guard.RemedyAddEntry:
		return ""
	case guard.RemedyChangeSetting:
		return "It was refused by the " + v.Remedy.Setting + " setting, not for its host, so an entry changes nothing. " + v.Fix
	}
	if v.Reason == guard.ReasonMetadata {
		return "It is a cloud metadata endpoint, which hands out credentials. Allow this host never unlocks it."
	}
	return "No allowlist entry makes this request work (" + string(v.Code) + ", " + string(v.Reason) + "). " + v.Fix
}

// maxNoteURL keeps the refused URL in an origin note short enough for the
// note limit and a table cell.
const maxNoteURL = 200

// originNote records where an entry came from, in the entry's own note.
func originNote(r models.Refusal, admin string) string {
	u := r.URL
	if utf8.RuneCountInString(u) > maxNoteURL {
		u = string([]rune(u)[:maxNoteURL]) + "…"
	}
	return fmt.Sprintf("Allowed from refusal #%d (%s) by %s", r.ID, u, admin)
}

// resolver is the running guard's resolver, for previews that must agree
// with it. Only a Decider that is not a *guard.Guard (a test's fake) gets
// Go's resolver instead; the console always passes its guard.
func (s *Server) resolver() guard.Resolver {
	if rs, ok := s.d.Guard.(resolverSource); ok {
		return rs.Resolver()
	}
	return net.DefaultResolver
}
