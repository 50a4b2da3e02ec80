package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/outboundhq/outbound/models"
)

// dropWindow is how recently a dropped row makes /healthz answer 503.
const dropWindow = time.Minute

// logWriterHealth is the refusal log writer's part of /healthz, and
// whether it makes the process unhealthy.
//
// A stall alone is reported (status "degraded", 200), not failed: rows
// are safe in the spill file, the stall is the database's (every replica
// on it sees the same one), and taking replicas out of the load balancer
// would only refuse agents' requests as well. A writer that dropped rows
// in the last minute (spill file full or unwritable) answers 503: that
// replica is losing its log, and a balancer should send traffic to one
// that is not.
func logWriterHealth(st models.RefusalWriterStats, now time.Time) (map[string]any, int) {
	state, code := "ok", http.StatusOK
	switch {
	case !st.LastDrop.IsZero() && now.Sub(st.LastDrop) < dropWindow:
		state, code = "dropping", http.StatusServiceUnavailable
	case st.Stalled:
		state = "stalled"
	case st.SpillRows > 0:
		state = "draining"
	}
	return map[string]any{
		"state":           state,
		"queued":          st.Queued + st.InFlight,
		"spill_rows":      st.SpillRows,
		"dropped":         st.Dropped,
		"stalled_seconds": st.StalledFor.Seconds(),
	}, code
}

// logWriterStates is every log writer's state (refusals, allowed
// decisions, would-be refusals), or the refusal log's alone when only it
// was given; nil when none was.
func (s *Server) logWriterStates() []models.NamedWriterStats {
	if s.d.LogWriters == nil {
		return nil
	}
	return s.d.LogWriters()
}

// logWritersHealth is /healthz's account of every log writer, by its
// metrics label, and the worst of their status codes.
func logWritersHealth(states []models.NamedWriterStats, now time.Time) (map[string]any, int) {
	out, code := make(map[string]any, len(states)), http.StatusOK
	for _, st := range states {
		h, c := logWriterHealth(st.RefusalWriterStats, now)
		out[st.Log] = h
		code = max(code, c)
	}
	return out, code
}

// writersNotice is the log page's banner about every log writer that has
// something to say, or "".
func writersNotice(states []models.NamedWriterStats) string {
	var parts []string
	for _, st := range states {
		if msg := writerNotice(st.Rows, st.RefusalWriterStats); msg != "" {
			parts = append(parts, msg)
		}
	}
	return strings.Join(parts, " ")
}

// writerNotice is the banner about one log's writer, whose rows are
// called rows ("refusals", "allowed decisions"), or "" when there is
// nothing to say.
func writerNotice(rows string, st models.RefusalWriterStats) string {
	var msg string
	switch {
	case st.Stalled:
		msg = fmt.Sprintf("The database has not accepted new %s for %s. %d %s are kept on this server's disk and in memory, and appear here once it answers; none is lost so far.",
			rows, st.StalledFor.Round(time.Second), st.NotWritten()-st.Dropped, rows)
	case st.SpillRows > 0:
		msg = fmt.Sprintf("%d %s held back during a database stall are still being written; they appear here shortly.", st.SpillRows, rows)
	}
	if st.Dropped > 0 {
		msg += fmt.Sprintf(" This console process has lost %d %s since it started (its spill file was full or could not be written): see the server log's \"rows dropped\" lines, and free disk space next to the database.", st.Dropped, rows)
	}
	if len(msg) > 0 && msg[0] == ' ' {
		msg = msg[1:]
	}
	return msg
}
