package app

import (
	"context"
	"time"
)

// purgeEvery is how often the refusal log is trimmed to its retention.
const purgeEvery = time.Hour

// sessionMaxAge is how long a console session row is kept after its last use.
const sessionMaxAge = 7 * 24 * time.Hour

// purgeClock is the purge's clock (a variable so a test can set it).
var purgeClock = time.Now

// retentionCutoff is the start of a retention of days ending at now:
// days of 24 hours, counted on the UTC calendar. Counted on the local
// one, on a server in a zone with summer time, a retention spanning the
// change to it was an hour short, and the purge deleted an hour of rows
// still within it (and kept an hour too many over the change back).
func retentionCutoff(now time.Time, days int) time.Time {
	return now.UTC().AddDate(0, 0, -days)
}

// PurgeLoop deletes refusals older than the retention setting, allowed
// decisions older than theirs, stale sessions and expired marks of
// conversations that read the web, now and then every purgeEvery. It returns when ctx ends.
func (a *App) PurgeLoop(ctx context.Context) {
	t := time.NewTicker(purgeEvery)
	defer t.Stop()
	for {
		days := a.Settings().RetentionDays
		n, err := a.store.PurgeRefusalsBefore(ctx, retentionCutoff(purgeClock(), days))
		switch {
		case err != nil && ctx.Err() == nil:
			a.log.Error("refusal log purge failed", "err", err)
		case n > 0:
			a.log.Info("refusal log purged", "deleted", n, "retention_days", days)
			a.adviseVacuum(ctx)
		}
		a.purgeDecisions(ctx)
		if _, err := a.store.PurgeWouldRefusalsBefore(ctx, retentionCutoff(purgeClock(), days)); err != nil && ctx.Err() == nil {
			a.log.Error("would-be refusal purge failed", "err", err)
		}
		if _, err := a.store.PurgeSessions(ctx, time.Now().Add(-sessionMaxAge)); err != nil && ctx.Err() == nil {
			a.log.Error("session purge failed", "err", err)
		}
		if _, err := a.store.PurgeWebReads(ctx, time.Now()); err != nil && ctx.Err() == nil {
			a.log.Error("purge of expired web reads failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// vacuumAdviceBytes is how much free space in a database without
// incremental vacuum is worth a line in the log.
const vacuumAdviceBytes = 64 << 20

// adviseVacuum says, after a purge, how to shrink a database created
// before incremental vacuum: its file keeps the purged space until a
// one-time VACUUM (docs/USER-GUIDE.md, Operations).
func (a *App) adviseVacuum(ctx context.Context) {
	free, reclaimed, err := a.store.FreeSpace(ctx)
	if err != nil || reclaimed || free < vacuumAdviceBytes {
		return
	}
	a.log.Info("the database file keeps space the purge freed; to give it back once, stop every process using it and run: sqlite3 "+a.store.Path()+" 'PRAGMA auto_vacuum=INCREMENTAL; VACUUM;' (later purges then shrink it themselves)",
		"free_bytes", free)
}
