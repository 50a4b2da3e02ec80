package app

import (
	"context"
)

// reloadAfter makes the running guard enforce a change that was just
// saved, so the next decision already uses it. The change is committed
// whatever happens here; a failed reload is logged and returned as a
// *NotReloadedError, which the caller reports next to its result.
func (a *App) reloadAfter(ctx context.Context, what string) error {
	if err := a.Reload(ctx); err != nil {
		a.log.Error(what+" saved but the running guard did not reload it", "err", err)
		return &NotReloadedError{Err: err}
	}
	return nil
}
