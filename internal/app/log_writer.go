package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/outboundhq/outbound/models"
)

// refusalLogName names the refusal log's writer in its log lines.
const refusalLogName = "refusal log"

// closeGrace is how long Close keeps trying to write what is queued to a
// stalled database before it spills the rest to disk for the next start.
const closeGrace = 10 * time.Second

// SpillPath is where the refusal log's writer spills rows while the
// database stalls: next to the SQLite file, so it lives (and is backed up)
// with it. A database given as a URL (PostgreSQL) has no file; its spill
// goes to the user's cache directory, named after the URL's hash (never
// the URL itself, which may carry a password).
func SpillPath(dbPath string) string {
	if !strings.Contains(dbPath, "://") {
		return dbPath + ".refusals.spill"
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(dbPath))
	dir = filepath.Join(dir, "outbound")
	_ = os.MkdirAll(dir, 0o700)
	return filepath.Join(dir, hex.EncodeToString(sum[:6])+".refusals.spill")
}

// newRefusalWriter starts the refusal log's batch writer, replaying what
// an earlier process spilled.
func (a *App) newRefusalWriter(dbPath string) *models.RefusalWriter {
	return models.NewRefusalWriter(a.store, models.RefusalWriterOptions{
		SpillPath: SpillPath(dbPath), Name: refusalLogName, Log: a.log,
	})
}

// RefusalLogStats is the refusal log writer's state: queue, spill file,
// drops, stall and batch latency, for /metrics, /healthz and the log's
// banner.
func (a *App) RefusalLogStats() models.RefusalWriterStats { return a.refusals.Stats() }

// closeRefusals writes what the refusal log still holds and says, in the
// shutdown log, exactly what did not reach the database.
func (a *App) closeRefusals() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	before := a.refusals.Stats()
	err := a.refusals.Close(ctx)
	var ce *models.WriterCloseError
	switch {
	case errors.As(err, &ce):
		a.log.Error("refusal log: shutdown left rows out of the database", "not_written", ce.NotWritten,
			"kept_in_spill_file", ce.Spilled, "spill_file", ce.SpillPath, "lost", ce.Lost, "err", ce.Err)
	case err == nil:
		a.log.Info("refusal log: every row written at shutdown", "written", a.refusals.Stats().Written, "queued_at_shutdown", before.Queued+before.InFlight)
	}
	return err
}
