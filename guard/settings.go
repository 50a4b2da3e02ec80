package guard

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings are the guard's limits. They are data: the console keeps them in
// its store, and a change takes effect through a new Policy.
type Settings struct {
	// Timeout covers a whole request: every redirect hop, and the reading
	// of the body by the caller.
	Timeout time.Duration
	// MaxBytes caps a response body.
	MaxBytes int64
	// Redirects is how many redirect hops one request may follow.
	Redirects int
	// ExtraPorts are opened besides 80 and 443 for every allowed host.
	ExtraPorts []uint16
	// UserAgent is sent with every request. It should say honestly what
	// is fetching, so site owners can recognise and contact us.
	UserAgent string
}

// DefaultUserAgent says who is asking, and why, in words a site owner can act on.
const DefaultUserAgent = "OutboundBot/1.0 (AI help-desk agent reading a link from a support ticket; +https://github.com/outboundhq/outbound)"

// Limits on settings, shared by validation and documentation.
const (
	MinTimeout   = time.Second
	MaxTimeout   = 5 * time.Minute
	MinMaxBytes  = 1 << 10
	MaxMaxBytes  = 1 << 30
	MaxRedirects = 20
)

// DefaultSettings returns the settings a new installation starts with.
func DefaultSettings() Settings {
	return Settings{
		Timeout:   15 * time.Second,
		MaxBytes:  2 << 20,
		Redirects: 5,
		UserAgent: DefaultUserAgent,
	}
}

// Validate reports the first setting that is out of range, with its fix.
func (s Settings) Validate() error {
	switch {
	case s.Timeout < MinTimeout || s.Timeout > MaxTimeout:
		return fmt.Errorf("timeout %s is outside %s–%s; choose a value such as 15s", FormatDuration(s.Timeout), FormatDuration(MinTimeout), FormatDuration(MaxTimeout))
	case s.MaxBytes < MinMaxBytes || s.MaxBytes > MaxMaxBytes:
		return fmt.Errorf("max_bytes %d is outside %d–%d; choose a value such as 2097152 (2 MB)", s.MaxBytes, MinMaxBytes, MaxMaxBytes)
	case s.Redirects < 0 || s.Redirects > MaxRedirects:
		return fmt.Errorf("redirects %d is outside 0–%d; choose a value such as 5", s.Redirects, MaxRedirects)
	case strings.TrimSpace(s.UserAgent) == "":
		return fmt.Errorf("user_agent is empty; say who is fetching, e.g. %q", DefaultUserAgent)
	case strings.ContainsAny(s.UserAgent, "\r\n"):
		return fmt.Errorf("user_agent contains a line break; write it on one line")
	}
	for _, p := range s.ExtraPorts {
		if p == 0 {
			return fmt.Errorf("ports: 0 is not a port; list ports from 1 to 65535")
		}
	}
	return nil
}

// portOpen reports whether a port is open to every allowed host.
func (s *Settings) portOpen(port uint16) bool {
	return port == 80 || port == 443 || slices.Contains(s.ExtraPorts, port)
}

// openPorts describes the open ports for a refusal message: "80 and 443",
// "80, 443 and 8080".
func (s *Settings) openPorts() string {
	ports := []string{"80", "443"}
	for _, p := range s.ExtraPorts {
		ports = append(ports, fmt.Sprint(p))
	}
	return strings.Join(ports[:len(ports)-1], ", ") + " and " + ports[len(ports)-1]
}
