package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/outboundhq/outbound/models"
)

// The log writers' names in their log lines.
const (
	refusalLogName  = "refusal log"
	decisionLogName = "decision log"
	wouldLogName    = "would-refuse log"
)

// closeGrace is how long Close keeps trying to write what is queued to a
// stalled database before it spills the rest to disk for the next start.
// (A variable so a test can outlast it with a held lock.)
var closeGrace = 10 * time.Second

// LogSpillPath is where the writer of one log (its metrics label:
// "refusals", "decisions", "would_refuse") spills rows while the database
// stalls: next to the SQLite file, as DB.LOG.spill, so it lives (and is
// backed up) with it. A database given as a URL (PostgreSQL) has no file;
// its spill goes to the user's cache directory, named after a hash of
// what names the database in the URL (spillIdentity), never the URL
// itself, which may carry a password.
func LogSpillPath(dbPath, log string) string {
	if !strings.Contains(dbPath, "://") {
		return dbPath + "." + log + ".spill"
	}
	return cacheSpillPath(spillIdentity(dbPath), log)
}

// legacySpillPath is where releases before spillIdentity spilled for a
// URL: after a hash of the whole URL, so a changed password or sslmode
// left the file behind. The writers' start moves its rows to
// LogSpillPath (models.MoveSpill).
func legacySpillPath(dbPath, log string) string {
	if !strings.Contains(dbPath, "://") {
		return LogSpillPath(dbPath, log)
	}
	return cacheSpillPath(dbPath, log)
}

func cacheSpillPath(key, log string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(key))
	dir = filepath.Join(dir, "outbound")
	_ = os.MkdirAll(dir, 0o700)
	return filepath.Join(dir, hex.EncodeToString(sum[:6])+"."+log+".spill")
}

// spillIdentity is what of a PostgreSQL URL says which database (and
// schema) its rows belong to: the user, the hosts and ports, the
// database, and the parameters that choose them or the schema. The
// password, sslmode, timeouts and the like are left out: changing them
// (a rotated password) must not leave the spilled rows under a name no
// writer opens. A URL that does not parse is its own identity.
func spillIdentity(dbPath string) string {
	u, err := url.Parse(strings.TrimSpace(dbPath))
	if err != nil {
		return dbPath
	}
	q := u.Query()
	kept := url.Values{}
	for _, k := range []string{"host", "hostaddr", "port", "dbname", "user", "search_path", "options", "service"} {
		if v, ok := q[k]; ok {
			kept[k] = v
		}
	}
	id := url.URL{Scheme: "postgres", User: url.User(u.User.Username()), Host: strings.ToLower(u.Host), Path: u.Path, RawQuery: kept.Encode()}
	return id.String()
}

// logWriterOptions are the options of one log's writer: its spill file,
// its name, and a log of its failed batches (log_writer_errors.go). Each
// writer replays what an earlier process spilled.
func (a *App) logWriterOptions(dbPath, log, name string) models.RefusalWriterOptions {
	errs := &batchErrorLog{log: a.log, name: name}
	return models.RefusalWriterOptions{SpillPath: LogSpillPath(dbPath, log), Name: name, Log: a.log, OnError: errs.report}
}

// startLogWriters starts the three log writers: refusals, allowed
// decisions of tickets, and would-be refusals of report-only entries.
func (a *App) startLogWriters(dbPath string) {
	for _, log := range []string{"refusals", "decisions", "would_refuse"} {
		if err := models.MoveSpill(legacySpillPath(dbPath, log), LogSpillPath(dbPath, log)); err != nil {
			a.log.Error("the rows an earlier release spilled could not be moved to this release's spill file; move the file aside and tell support",
				"from", legacySpillPath(dbPath, log), "to", LogSpillPath(dbPath, log), "err", err)
		}
	}
	// Bursts of alike refusals become one row a window (models.RefusalAggregator).
	a.refusals = models.NewRefusalAggregatorFrom(models.NewRefusalWriter(a.store, a.logWriterOptions(dbPath, "refusals", refusalLogName)), a.burstWindow)
	a.decisions = models.NewDecisionWriter(a.store, a.logWriterOptions(dbPath, "decisions", decisionLogName))
	a.would = models.NewWouldRefusalWriter(a.store, a.logWriterOptions(dbPath, "would_refuse", wouldLogName))
}

// logWriter is what the App needs of any log's writer.
type logWriter interface {
	Close(ctx context.Context) error
	Stats() models.RefusalWriterStats
}

// namedWriter is one log's writer with its metrics label, what its rows
// are called, and its name in log lines.
type namedWriter struct {
	log, rows, name string
	w               logWriter
}

// logWriters lists the App's writers, refusals first; a bare test App may
// lack some.
func (a *App) logWriters() []namedWriter {
	var out []namedWriter
	if a.refusals != nil {
		out = append(out, namedWriter{"refusals", "refusals", refusalLogName, a.refusals})
	}
	if a.decisions != nil {
		out = append(out, namedWriter{"decisions", "allowed decisions", decisionLogName, a.decisions})
	}
	if a.would != nil {
		out = append(out, namedWriter{"would_refuse", "would-be refusals", wouldLogName, a.would})
	}
	return out
}

// RefusalLogStats is the refusal log writer's state: queue, spill file,
// drops, stall and batch latency.
func (a *App) RefusalLogStats() models.RefusalWriterStats { return a.refusals.Stats() }

// LogWriterStats is every log writer's state, refusals first, for
// /metrics (one log label each), /healthz and the log page's banner.
func (a *App) LogWriterStats() []models.NamedWriterStats {
	ws := a.logWriters()
	out := make([]models.NamedWriterStats, len(ws))
	for i, w := range ws {
		out[i] = models.NamedWriterStats{Log: w.log, Rows: w.rows, RefusalWriterStats: w.w.Stats()}
	}
	return out
}

// LogWriterStatsOf is the state of the writer of one log (its metrics
// label), for a metrics collector of its own; zero for an unknown label.
func (a *App) LogWriterStatsOf(log string) func() models.RefusalWriterStats {
	return func() models.RefusalWriterStats {
		for _, w := range a.logWriters() {
			if w.log == log {
				return w.w.Stats()
			}
		}
		return models.RefusalWriterStats{}
	}
}

// closeLogWriters closes every log writer together (a stalled database
// costs one grace period, not one each) and says, in the shutdown log,
// exactly what each did not write to the database.
func (a *App) closeLogWriters() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	ws := a.logWriters()
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.closeLogWriter(ctx, w)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (a *App) closeLogWriter(ctx context.Context, w namedWriter) error {
	before := w.w.Stats()
	err := w.w.Close(ctx)
	var ce *models.WriterCloseError
	switch {
	case errors.As(err, &ce):
		a.log.Error(w.name+": shutdown left rows out of the database", "not_written", ce.NotWritten,
			"kept_in_spill_file", ce.Spilled, "spill_file", ce.SpillPath, "lost", ce.Lost, "err", ce.Err)
	case err == nil:
		a.log.Info(w.name+": every row written at shutdown", "written", w.w.Stats().Written, "queued_at_shutdown", before.Queued+before.InFlight)
	}
	return err
}

// burstWindow is the burst_window setting, read by the refusal log's
// aggregator at every window: a change applies within one window.
func (a *App) burstWindow() time.Duration {
	if s := a.settings.Load(); s != nil {
		return s.BurstWindow
	}
	return models.AggregateWindow
}
