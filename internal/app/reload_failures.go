package app

import (
	"log/slog"
	"time"
)

// reloadFailRepeat is how often a reload that keeps failing is logged
// again. The watch retries every poll (250 ms); a line per attempt would
// bury the log during a database outage, one line per failure-run would
// hide that it is still going on.
const reloadFailRepeat = 30 * time.Second

// reloadFailures is the watch's account of a stored change that does not
// load: when the failures began and when they were last logged. Only the
// watch goroutine touches it.
type reloadFailures struct {
	since, logged time.Time
	attempts      int
}

// failed notes an attempt that failed; began is when it began, so that
// the failures are counted from then, a reload that ran to its timeout
// included.
func (f *reloadFailures) failed(log *slog.Logger, rev int64, err error, began time.Time) {
	now := began
	f.attempts++
	if f.since.IsZero() {
		f.since, f.logged = now, now
		log.Error("reload failed; the previous policy stays in force and the reload is retried every poll", "revision", rev, "err", err)
		return
	}
	if now.Sub(f.logged) >= reloadFailRepeat {
		f.logged = now
		log.Error("reload still failing; the previous policy stays in force", "revision", rev, "for", now.Sub(f.since).Round(time.Second), "attempts", f.attempts, "err", err)
	}
}

// recovered ends a run of failures, if there was one, with a line.
func (f *reloadFailures) recovered(log *slog.Logger, rev int64, now time.Time) {
	if f.since.IsZero() {
		return
	}
	log.Info("reload succeeded after failing", "revision", rev, "for", now.Sub(f.since).Round(time.Millisecond), "attempts", f.attempts)
	*f = reloadFailures{}
}
