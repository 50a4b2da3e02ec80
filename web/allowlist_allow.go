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
	"net/netip"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
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
	p.Form.Note = originNote(r, userOf(c).Name)
	return s.renderEgress(c, http.StatusOK, p)
}

// planAllow works out the literal entry for refusal r and what it would
// make reachable, or why no entry is offered.
func (s *Server) planAllow(c echo.Context, st allowlistState, r models.Refusal) (views.AllowOrigin, guard.Entry) {
	o := views.AllowOrigin{RefusalID: r.ID, URL: r.URL, Code: r.Code, Reason: r.Reason, Message: r.Message}
	if why := notAnAllowlistMatter(r); why != "" {
		o.Why = why
		return o, guard.Entry{}
	}
	ctx := c.Request().Context()
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
	entry, err := guard.ParseEntry(literalEntry(now.Host, now.Port))
	if err != nil {
		var ee *guard.EntryError
		errors.As(err, &ee)
		o.Why = "No entry can admit " + now.Host + ": " + ee.Problem + "."
		return o, guard.Entry{}
	}
	if slices.Contains(st.Entries, entry) {
		o.Why = entry.String() + " is already on the list; the URL is refused for another reason: " + now.Message
		return o, guard.Entry{}
	}
	policy, err := guard.NewPolicy(append(slices.Clone(st.Entries), entry), st.settings)
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
	if st.PublicWeb() {
		o.ModeChange = "The list is empty now, so the console is on PUBLIC WEB. Adding this entry switches it to 1 ALLOWED: agents will reach only " +
			entryScope(entry, ports) + ", and every other host, public sites included, is refused."
		if guard.Reason(r.Reason) == guard.ReasonPort {
			o.ModeChange += " To open the port for every public host instead, add it under Settings → Allowed ports."
		}
	}
	return o, entry
}

// notAnAllowlistMatter says why a refusal's kind is beyond any entry, or
// returns "" when an entry might help.
func notAnAllowlistMatter(r models.Refusal) string {
	switch guard.Code(r.Code) {
	case guard.CodeInvalid:
		return "The URL itself was invalid (" + r.Reason + "), so no entry can make it work; the agent needs a valid http or https link."
	case guard.CodeTooLarge:
		return "It was refused for its size or its redirects, not its host, so an entry changes nothing. If the page is legitimate, raise Settings → Max bytes or Settings → Redirects."
	case guard.CodeTimeout:
		return "The host did not answer in time; an entry does not make it faster. If it is merely slow, raise Settings → Timeout."
	case guard.CodeUnsupported:
		return "The page's content type cannot be read by the tool; an entry changes nothing."
	case guard.CodeTooMany:
		return "The agent's turn had read all the pages it may; raise Settings → Reads per turn instead."
	case guard.CodeUnreachable:
		if guard.Reason(r.Reason) != guard.ReasonConnectCheck {
			return "The host could not be found or did not accept the connection; an entry does not change that."
		}
	}
	switch guard.Reason(r.Reason) {
	case guard.ReasonMetadata:
		return "It is a cloud metadata endpoint, which hands out credentials. Allow this host never unlocks it."
	case guard.ReasonProxyAuth:
		return "The agent's proxy credential was missing or wrong. That is about its token under Agents, not the allowlist."
	}
	return ""
}

// literalEntry writes the entry that admits exactly host on port: the port
// only when it is not a default one, an IPv6 address in brackets when a
// port follows it.
func literalEntry(host string, port uint16) string {
	if port == 80 || port == 443 {
		return host
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
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
// with it; a Decider that is not a *guard.Guard gets the system resolver,
// which is what a guard built without one uses.
func (s *Server) resolver() guard.Resolver {
	if rs, ok := s.d.Guard.(resolverSource); ok {
		return rs.Resolver()
	}
	return net.DefaultResolver
}
