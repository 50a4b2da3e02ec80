package app

import (
	"context"
	"time"
)

// purgeEvery is how often the refusal log is trimmed to its retention.
const purgeEvery = time.Hour

// sessionMaxAge is how long a console session row is kept after its last use.
const sessionMaxAge = 7 * 24 * time.Hour

// PurgeLoop deletes refusals older than the retention setting, allowed
// decisions older than theirs, and stale sessions, now and then every
// purgeEvery. It returns when ctx ends.
func (a *App) PurgeLoop(ctx context.Context) {
	t := time.NewTicker(purgeEvery)
	defer t.Stop()
	for {
		days := a.Settings().RetentionDays
		n, err := a.store.PurgeRefusalsBefore(ctx, time.Now().AddDate(0, 0, -days))
		switch {
		case err != nil && ctx.Err() == nil:
			a.log.Error("refusal log purge failed", "err", err)
		case n > 0:
			a.log.Info("refusal log purged", "deleted", n, "retention_days", days)
		}
		a.purgeDecisions(ctx)
		if _, err := a.store.PurgeWouldRefusalsBefore(ctx, time.Now().AddDate(0, 0, -days)); err != nil && ctx.Err() == nil {
			a.log.Error("would-be refusal purge failed", "err", err)
		}
		if _, err := a.store.PurgeSessions(ctx, time.Now().Add(-sessionMaxAge)); err != nil && ctx.Err() == nil {
			a.log.Error("session purge failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
