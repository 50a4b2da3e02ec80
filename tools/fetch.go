package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools/extract"
)

// FetchInput is the input of fetch_url.
type FetchInput struct {
	URL   string `json:"url" jsonschema:"The http or https URL of the page to read."`
	Start int    `json:"start,omitempty" jsonschema:"The character to start from. 0 (the default) reads the first part; to read on, pass the number the previous part gave."`
}

// FetchResult is what fetch_url read: one part of a page, or a refusal.
// Answer renders it as the text the agent reads.
type FetchResult struct {
	Refusal *guard.Refusal

	URL            string // the final URL after redirects
	RedirectedFrom string // the first host, when redirects left it
	Status         int
	Title          string
	Part           part
	Links          []extract.Link // on the first part only
	// ScriptDrawn is true when the page shows next to no text without
	// running its scripts (extract.Page.ScriptDrawn).
	ScriptDrawn bool
	// Cached is true when the page came from the cache, unfetched.
	Cached bool

	browserTools bool // the browser_* tools are offered, so the answer may suggest them

	redirects []string // the hops that led to URL, for the call's record
}

// OK reports whether the page was read.
func (r *FetchResult) OK() bool { return r.Refusal == nil }

// Fetcher is the fetch_url tool. It is safe for concurrent use.
type Fetcher struct {
	guard    *guard.Guard
	settings func() Settings
	cache    *pageCache
	turns    *turnBudget
	now      func() time.Time
}

// Cache and budget bounds. A page's text is capped by max_bytes, so the
// byte budget, not the page count, is what normally binds.
const (
	cacheMaxPages = 512
	cacheMaxBytes = 64 << 20
	budgetTurns   = 10000
)

// NewFetcher returns the fetch_url tool over g. settings is called on
// every call, so that a reload applies to the next call.
func NewFetcher(g *guard.Guard, settings func() Settings) *Fetcher {
	return &Fetcher{guard: g, settings: settings, cache: newPageCache(cacheMaxPages, cacheMaxBytes), turns: newTurnBudget(budgetTurns), now: time.Now}
}

// acceptHeader asks for what fetch_url can read, HTML first.
const acceptHeader = "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,application/json;q=0.7,text/csv;q=0.6,application/xml;q=0.5,*/*;q=0.1"

// Fetch reads one part of the page at in.URL for turn. Refusals and
// failures come back in the result, never as an error: they are answers
// the agent reads.
func (f *Fetcher) Fetch(ctx context.Context, turn Turn, in FetchInput) FetchResult {
	s := f.settings()
	ctx = guard.WithCaller(ctx, turn.caller(FetchURLName))
	if in.Start < 0 {
		return FetchResult{Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadStart, Tool: FetchURLName, Agent: turn.Agent, URL: in.URL,
			Message: fmt.Sprintf("start %d is negative.", in.Start), Fix: "Pass start: 0 to read from the beginning."}}
	}
	// No lookup yet: the precheck gives the cache key and refuses what it
	// can; the read itself decides in full, resolving the name once.
	d := f.guard.PrecheckAs(ctx, in.URL)
	if !d.Allowed {
		return FetchResult{Refusal: d.Refusal()}
	}
	key := d.URL.String()
	page, cached := f.cache.get(key, s.CacheTTL, f.now())
	if cached && !f.stillAllowed(ctx, page, s) {
		f.cache.drop(key)
		cached = false
	}
	if ok, n := f.turns.admit(turn, key, s.ReadsPerTurn); !ok {
		r := &guard.Refusal{Code: guard.CodeTooMany, Reason: ReasonReadsPerTurn, Tool: FetchURLName, Agent: turn.Agent, URL: key, Host: d.Host, Port: d.Port,
			Message: fmt.Sprintf("This turn has already read %d pages, the most one turn may read.", n),
			Fix:     "Answer with what you have, or ask an admin to raise " + f.guard.Wording().SettingPhrase(settingReadsPerTurn) + ".",
			Remedy:  guard.ChangeSetting("reads_per_turn")}
		return FetchResult{Refusal: r}
	}
	if !cached {
		var r *guard.Refusal
		page, r = f.read(ctx, key)
		if r != nil {
			f.turns.forget(turn, key)
			return FetchResult{Refusal: r}
		}
		page.stored = f.now()
		f.cache.put(page)
	}
	if in.Start > page.runes {
		return FetchResult{Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadStart, Tool: FetchURLName, Agent: turn.Agent, URL: key, Host: d.Host, Port: d.Port,
			Message: fmt.Sprintf("start %d is past the end of the page, which has %d characters.", in.Start, page.runes),
			Fix:     fmt.Sprintf("Pass a start from 0 to %d.", page.runes)}}
	}
	res := FetchResult{URL: page.final, Status: page.status, Title: page.page.Title, Part: cutPart(page.page.Text, page.runes, in.Start, s.PageChars),
		ScriptDrawn: page.page.ScriptDrawn, Cached: cached, redirects: page.redirects, browserTools: s.Browser != BrowserOff && s.Browser != ""}
	if len(page.redirects) > 0 {
		if first, last := hostOf(page.redirects[0]), hostOf(page.final); first != last {
			res.RedirectedFrom = first
		}
	}
	if in.Start == 0 {
		res.Links = page.page.Links
	}
	return res
}

// stillAllowed reports whether the current policy still allows every URL a
// cached page came through, so that removing a host from the allowlist
// also stops its cached text from being served.
func (f *Fetcher) stillAllowed(ctx context.Context, p *cachedPage, s Settings) bool {
	for _, u := range append(append([]string{}, p.redirects...), p.final) {
		if d := f.decide(ctx, u, s); !d.Allowed {
			return false
		}
	}
	return true
}

// decide decides u with the lookup bounded by the timeout setting, like
// every other step of a read.
func (f *Fetcher) decide(ctx context.Context, u string, s Settings) guard.Decision {
	ctx, cancel := context.WithTimeout(ctx, s.Guard.Timeout)
	defer cancel()
	return f.guard.Decide(ctx, u)
}

// read fetches and extracts a page. A refusal decided here (an
// unsupported type) is made the response's own, so the request is
// recorded once, as refused, with the redirects that led to it.
func (f *Fetcher) read(ctx context.Context, u string) (*cachedPage, *guard.Refusal) {
	resp, err := f.guard.Do(ctx, guard.Request{URL: u, Header: http.Header{"Accept": {acceptHeader}}})
	if err != nil {
		return nil, refusalOf(err, u)
	}
	ct := resp.Header.Get("Content-Type")
	if _, err := extract.KindOf(ct); err != nil {
		r := unsupported(ct, resp.URL.String())
		resp.Refuse(r) // before Close, which would record the request as allowed
		resp.Body.Close()
		return nil, r
	}
	body, err := resp.ReadAll()
	if err != nil {
		return nil, refusalOf(err, u)
	}
	pg, err := extract.Extract(body, ct, resp.URL)
	if err != nil {
		var ue *extract.UnsupportedError
		if errors.As(err, &ue) {
			r := unsupported(ue.ContentType, resp.URL.String())
			resp.Refuse(r)
			return nil, r
		}
		r := &guard.Refusal{Code: guard.CodeUnsupported, Reason: ReasonContentType, URL: resp.URL.String(),
			Message: fmt.Sprintf("The page could not be read as text: %v.", err), Fix: "Ask for another link to the same information."}
		resp.Refuse(r)
		return nil, r
	}
	return &cachedPage{requested: u, final: resp.URL.String(), redirects: resp.Redirects, status: resp.StatusCode,
		page: pg, runes: runeCount(pg.Text)}, nil
}

func unsupported(contentType, u string) *guard.Refusal {
	if contentType == "" {
		contentType = "binary data"
	}
	return &guard.Refusal{Code: guard.CodeUnsupported, Reason: ReasonContentType, URL: u, Host: hostOf(u),
		Message: fmt.Sprintf("The link points to %s, which %s cannot read; it reads web pages and text.", contentType, FetchURLName),
		Fix:     "Ask the sender for a web page or a text version; " + TakeScreenshotName + " shows how a page looks."}
}

// refusalOf recovers the guard's refusal from an error; any other error is
// wrapped as unreachable, so the agent always gets the same shape.
func refusalOf(err error, u string) *guard.Refusal {
	if r, ok := guard.AsRefusal(err); ok {
		return r
	}
	return &guard.Refusal{Code: guard.CodeUnreachable, Reason: guard.ReasonConnect, Kind: guard.KindNetwork, URL: u, Host: hostOf(u),
		Message: err.Error() + ".", Fix: "Try again later."}
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
