package tools

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// Settings are every limit the product runs under. They are data: the
// console stores them as key/value text, an admin edits them on the
// Settings page or with `console settings set`, and a change reaches the
// running guard and tools through a reload.
type Settings struct {
	Guard         guard.Settings
	PageChars     int           // characters per part of a page read by fetch_url
	ReadsPerTurn  int           // new pages one agent turn may read
	CacheTTL      time.Duration // how long an extracted page is served from cache
	RetentionDays int           // how long the refusal log keeps a refusal
	// DecisionRetentionDays is how long the decisions store keeps an
	// allowed decision, for tickets' timelines.
	DecisionRetentionDays int
	// BurstWindow is how long alike refusals are merged into one row of
	// the refusal log (models.RefusalAggregator); 0 merges none.
	BurstWindow time.Duration

	ShotMaxWidth      int // widest viewport take_screenshot accepts
	ShotMaxHeight     int // tallest viewport take_screenshot accepts
	ShotMaxPageHeight int // where a full-page screenshot is cut

	Browser         BrowserMode   // whether the browser_* tools are offered, and how side effects are confirmed
	BrowserIdle     time.Duration // how long a conversation's tab lives without a call
	BrowserContexts int           // how many conversations may hold a live tab at once
}

// BrowserMode is the deployment's choice for the browser_* tools.
type BrowserMode string

const (
	// BrowserOff does not offer the browser tools at all (the default).
	BrowserOff BrowserMode = "off"
	// BrowserConfirm offers them; once a conversation has read the web,
	// every side effect (typing, submitting) needs a person's confirmation.
	BrowserConfirm BrowserMode = "confirm"
	// BrowserReadOnly offers them without typing or submitting at all.
	BrowserReadOnly BrowserMode = "read_only"
)

// parseBrowserMode reads the browser setting.
func parseBrowserMode(v string) (BrowserMode, error) {
	switch m := BrowserMode(strings.ToLower(v)); m {
	case BrowserOff, BrowserConfirm, BrowserReadOnly:
		return m, nil
	}
	return BrowserOff, fmt.Errorf("%q is not a browser mode; write off, confirm or read_only", v)
}

// DefaultSettings returns the settings of a new installation.
func DefaultSettings() Settings {
	return Settings{
		Guard:         guard.DefaultSettings(),
		PageChars:     6000,
		ReadsPerTurn:  8,
		CacheTTL:      5 * time.Minute,
		RetentionDays: 30,

		DecisionRetentionDays: 7,
		BurstWindow:           500 * time.Millisecond,

		ShotMaxWidth:      1920,
		ShotMaxHeight:     1200,
		ShotMaxPageHeight: 8000,

		Browser:         BrowserOff,
		BrowserIdle:     10 * time.Minute,
		BrowserContexts: 4,
	}
}

// SettingDef describes one setting: how it is named, shown, parsed and
// printed. SettingDefs is the single list the CLI, the console and the
// documentation are built from.
type SettingDef struct {
	Key   string
	Label string
	Help  string
	set   func(s *Settings, v string) error
	get   func(s *Settings) string
}

// SettingDefs lists every setting in the order the console shows them.
// Setting keys the tools' own refusals name in their remedies.
const (
	settingReadsPerTurn  = "reads_per_turn"
	settingShotMaxWidth  = "screenshot_max_width"
	settingShotMaxHeight = "screenshot_max_height"
	settingBrowser       = "browser"
)

var SettingDefs = []SettingDef{
	{"timeout", "Timeout", "How long one request may take in all: every redirect hop and the body. Write it like 15s or 1m.",
		func(s *Settings, v string) error {
			d, err := parseDuration(v, guard.MinTimeout, guard.MaxTimeout, "15s")
			s.Guard.Timeout = d
			return err
		},
		func(s *Settings) string { return FormatDuration(s.Guard.Timeout) }},
	{"max_bytes", "Max bytes", "The largest response body that is read. Write bytes, or a size like 2MB or 512KB (1 KB = 1024 bytes).",
		func(s *Settings, v string) error {
			n, err := parseSize(v)
			if err == nil && (n < guard.MinMaxBytes || n > guard.MaxMaxBytes) {
				err = fmt.Errorf("%s is outside 1KB–1GB; choose a size such as 2MB", v)
			}
			s.Guard.MaxBytes = n
			return err
		},
		func(s *Settings) string { return formatSize(s.Guard.MaxBytes) }},
	{"page_chars", "Page characters", "How many characters of a page fetch_url returns per part; the agent reads on with start.",
		func(s *Settings, v string) error { return parseInt(v, 500, 100000, "6000", &s.PageChars) },
		func(s *Settings) string { return strconv.Itoa(s.PageChars) }},
	{"redirects", "Redirects", "How many redirect hops one request may follow; each hop is checked like the first URL.",
		func(s *Settings, v string) error { return parseInt(v, 0, guard.MaxRedirects, "5", &s.Guard.Redirects) },
		func(s *Settings) string { return strconv.Itoa(s.Guard.Redirects) }},
	{settingReadsPerTurn, "Reads per turn", "How many new pages one agent turn may read; reading on in a page already read is free.",
		func(s *Settings, v string) error { return parseInt(v, 1, 100, "8", &s.ReadsPerTurn) },
		func(s *Settings) string { return strconv.Itoa(s.ReadsPerTurn) }},
	{"ports", "Allowed ports", "Ports opened besides 80 and 443 for every allowed host, separated by commas, e.g. 8080, 8443. Empty: only 80 and 443.",
		func(s *Settings, v string) error {
			p, err := parsePorts(v)
			s.Guard.ExtraPorts = p
			return err
		},
		func(s *Settings) string { return formatPorts(s.Guard.ExtraPorts) }},
	{"user_agent", "User agent", "The User-Agent sent with every request. Say honestly who is fetching, so site owners can recognise you.",
		func(s *Settings, v string) error {
			v = strings.TrimSpace(v)
			switch {
			case v == "":
				return fmt.Errorf("the user agent is empty; write who is fetching, e.g. %q", guard.DefaultUserAgent)
			case len(v) > 300:
				return fmt.Errorf("the user agent is %d characters long; keep it under 300", len(v))
			case strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0:
				return fmt.Errorf("the user agent may hold only printable ASCII characters, on one line")
			}
			s.Guard.UserAgent = v
			return nil
		},
		func(s *Settings) string { return s.Guard.UserAgent }},
	{"cache_ttl", "Page cache time", "How long an extracted page stays cached so that reading on needs no new fetch. Write it like 5m; 0s turns the cache off.",
		func(s *Settings, v string) error {
			d, err := parseDuration(v, 0, time.Hour, "5m")
			s.CacheTTL = d
			return err
		},
		func(s *Settings) string { return FormatDuration(s.CacheTTL) }},
	{settingShotMaxWidth, "Screenshot max width", "The widest viewport take_screenshot accepts, in pixels.",
		func(s *Settings, v string) error { return parseInt(v, 320, 3840, "1920", &s.ShotMaxWidth) },
		func(s *Settings) string { return strconv.Itoa(s.ShotMaxWidth) }},
	{settingShotMaxHeight, "Screenshot max height", "The tallest viewport take_screenshot accepts, in pixels.",
		func(s *Settings, v string) error { return parseInt(v, 240, 2160, "1200", &s.ShotMaxHeight) },
		func(s *Settings) string { return strconv.Itoa(s.ShotMaxHeight) }},
	{"screenshot_max_page_height", "Screenshot max page length", "Where a full-page screenshot is cut, in pixels; the answer says when it was.",
		func(s *Settings, v string) error { return parseInt(v, 480, 30000, "8000", &s.ShotMaxPageHeight) },
		func(s *Settings) string { return strconv.Itoa(s.ShotMaxPageHeight) }},
	{settingBrowser, "Browser tools", "Whether agents get the browser tools (browser_open, browser_read, browser_find, browser_click, browser_type): off, confirm (once a conversation has read the web, every typing or submitting needs a person's confirmation), or read_only (no typing or submitting at all). A person confirms in an MCP client that supports elicitation; the JSON API refuses such steps.",
		func(s *Settings, v string) error {
			m, err := parseBrowserMode(v)
			s.Browser = m
			return err
		},
		func(s *Settings) string { return string(s.Browser) }},
	{"browser_idle", "Browser tab idle time", "How long a conversation's browser tab stays open without a call before it is closed. Write it like 10m.",
		func(s *Settings, v string) error {
			d, err := parseDuration(v, 30*time.Second, 24*time.Hour, "10m")
			s.BrowserIdle = d
			return err
		},
		func(s *Settings) string { return FormatDuration(s.BrowserIdle) }},
	{"browser_contexts", "Browser tabs at once", "How many conversations may hold an open browser tab at the same time; each costs memory. A conversation over the limit is told to try again later.",
		func(s *Settings, v string) error { return parseInt(v, 1, 64, "4", &s.BrowserContexts) },
		func(s *Settings) string { return strconv.Itoa(s.BrowserContexts) }},
	{"retention_days", "Refusal log retention (days)", "How many days the refusal log keeps a refusal. Shrinking it deletes older refusals at the next purge.",
		func(s *Settings, v string) error { return parseInt(v, 1, 3650, "30", &s.RetentionDays) },
		func(s *Settings) string { return strconv.Itoa(s.RetentionDays) }},
	{"decision_retention_days", "Allowed decisions retention (days)", "How many days the decisions store keeps allowed requests that name a ticket, which tickets' timelines show beside their refusals. Every such request is a row, so keep it short; shrinking it deletes older rows at the next purge. 0 stores none: timelines then show refusals only.",
		func(s *Settings, v string) error { return parseInt(v, 0, 90, "7", &s.DecisionRetentionDays) },
		func(s *Settings) string { return strconv.Itoa(s.DecisionRetentionDays) }},
	{"burst_window", "Burst merging window", "Alike refusals (same agent, tool, integration, ticket, code, reason, host and port) within this time become one row of the refusal log with a count, so a hostile burst cannot flood the log; every request is still counted and logged. Longer windows mean fewer rows, but the log page is that much behind a flood, and kill -9 loses the counts of the window in progress. Write it like 500ms or 2s; 0 writes every refusal as its own row.",
		func(s *Settings, v string) error {
			d, err := parseDuration(v, 0, 10*time.Second, "500ms")
			s.BurstWindow = d
			return err
		},
		func(s *Settings) string { return FormatDuration(s.BurstWindow) }},
}

// SettingChoice is one value of a setting that takes one of a few, with
// what it means.
type SettingChoice struct {
	Value, Label string
}

// SettingChoices lists the values of a setting that takes one of a few
// (the console shows them as a select), or nil for a free-form setting.
func SettingChoices(key string) []SettingChoice {
	if key == settingBrowser {
		return []SettingChoice{
			{string(BrowserOff), "off: the browser tools are not offered"},
			{string(BrowserConfirm), "confirm: after reading the web, a person confirms each typing or submitting"},
			{string(BrowserReadOnly), "read_only: agents read pages but never type or submit"},
		}
	}
	return nil
}

// SettingError is a rejected setting value: the key, the value, and what
// is wrong with it including how to write it.
type SettingError struct {
	Key, Value string
	Err        error
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("setting %s = %q: %v", e.Key, e.Value, e.Err)
}

func (e *SettingError) Unwrap() error { return e.Err }

// LookupSetting returns the definition of key. Keys are matched without
// regard to case or surrounding space (MAX_BYTES is max_bytes): people
// copy them from documentation and environment variables.
func LookupSetting(key string) (SettingDef, error) {
	want := strings.ToLower(strings.TrimSpace(key))
	for _, d := range SettingDefs {
		if d.Key == want {
			return d, nil
		}
	}
	keys := make([]string, len(SettingDefs))
	for i, d := range SettingDefs {
		keys[i] = d.Key
	}
	return SettingDef{}, fmt.Errorf("there is no setting %q; the settings are %s", key, strings.Join(keys, ", "))
}

// NormalizeSetting validates value for key and returns it in canonical
// form, the text the store keeps.
func NormalizeSetting(key, value string) (string, error) {
	d, err := LookupSetting(key)
	if err != nil {
		return "", err
	}
	s := DefaultSettings()
	if err := d.set(&s, strings.TrimSpace(value)); err != nil {
		return "", &SettingError{Key: d.Key, Value: value, Err: err}
	}
	return d.get(&s), nil
}

// ParseSettings builds Settings from stored key/value text over the
// defaults. Unknown keys are ignored, so that an older binary can read a
// newer database; a bad value is an error that names its key.
func ParseSettings(values map[string]string) (Settings, error) {
	s := DefaultSettings()
	for _, d := range SettingDefs {
		v, ok := values[d.Key]
		if !ok {
			continue
		}
		if err := d.set(&s, strings.TrimSpace(v)); err != nil {
			return DefaultSettings(), &SettingError{Key: d.Key, Value: v, Err: err}
		}
	}
	if err := s.Guard.Validate(); err != nil {
		return DefaultSettings(), err
	}
	return s, nil
}

// Values returns every setting as the text the store keeps.
func (s Settings) Values() map[string]string {
	out := make(map[string]string, len(SettingDefs))
	for _, d := range SettingDefs {
		out[d.Key] = d.get(&s)
	}
	return out
}

// Value returns one setting as text.
func (s Settings) Value(key string) string {
	d, err := LookupSetting(key)
	if err != nil {
		return ""
	}
	return d.get(&s)
}

func parseDuration(v string, lo, hi time.Duration, example string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		if n, nerr := strconv.Atoi(v); nerr == nil {
			return 0, fmt.Errorf("%d has no unit; write %ds for seconds", n, n)
		}
		return 0, fmt.Errorf("%q is not a duration; write it like %s", v, example)
	}
	if d < lo || d > hi {
		return 0, fmt.Errorf("%s is outside %s–%s; choose a value such as %s", FormatDuration(d), FormatDuration(lo), FormatDuration(hi), example)
	}
	return d, nil
}

// FormatDuration prints a duration the way people write it (10m, 1h30m,
// 90s, 1.5s); it is guard.FormatDuration, the one formatter of every
// message and setting.
func FormatDuration(d time.Duration) string { return guard.FormatDuration(d) }

func parseInt(v string, lo, hi int, example string, into *int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number; write a number such as %s", v, example)
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d is outside %d–%d; choose a value such as %s", n, lo, hi, example)
	}
	*into = n
	return nil
}

func parseSize(v string) (int64, error) {
	u := strings.ToUpper(strings.ReplaceAll(v, " ", ""))
	mult := int64(1)
	for _, unit := range []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, unit.suffix) {
			mult, u = unit.mult, strings.TrimSuffix(u, unit.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size; write bytes, or a size like 2MB or 512KB", v)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%s is far over the 1GB limit; choose a size such as 2MB", v)
	}
	return n * mult, nil
}

func formatSize(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MB"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KB"
	}
	return strconv.FormatInt(n, 10)
}

func parsePorts(v string) ([]uint16, error) {
	var out []uint16
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%q is not a port number; list ports like 8080, 8443", part)
		case n < 1 || n > 65535:
			return nil, fmt.Errorf("port %d is outside 1–65535", n)
		case n == 80 || n == 443:
			return nil, fmt.Errorf("port %d is always open; list only the extra ports", n)
		case slices.Contains(out, uint16(n)):
			return nil, fmt.Errorf("port %d is listed twice", n)
		}
		out = append(out, uint16(n))
	}
	slices.Sort(out)
	return out, nil
}

func formatPorts(ports []uint16) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = strconv.Itoa(int(p))
	}
	return strings.Join(parts, ", ")
}
