package models

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// busyTimeout is how long a connection waits for another writer (possibly in
// another process) before SQLite gives up with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Store is the handle on one database: a SQLite file, or a PostgreSQL
// database that several processes (replicas) share. It is safe for
// concurrent use by many goroutines; see the package documentation for how
// reads and writes are split.
type Store struct {
	// path is the SQLite file, or the PostgreSQL URL without its password:
	// what messages name.
	path string
	// dsn is the PostgreSQL URL itself (Watch's listener connects with it);
	// "" for SQLite.
	dsn    string
	engine engine

	// On SQLite, w has exactly one connection. SQLite admits one writer at a time, so a
	// bigger pool would only turn Go-side queueing into SQLITE_BUSY retries.
	// Every transaction on it starts with BEGIN IMMEDIATE (_txlock), so a
	// transaction that reads and then writes never has to upgrade its lock
	// and cannot deadlock against another process doing the same.
	w *gorm.DB
	// r is a pool of query-only connections. Under WAL, readers never block
	// the writer and the writer never blocks readers. On PostgreSQL, w and r
	// are the same pool.
	r *gorm.DB

	// listening is true while Watch holds a LISTEN connection (PostgreSQL).
	listening atomic.Bool

	closed atomic.Bool

	// touched remembers when TouchToken last wrote each token so that the
	// hot path (every agent request) usually costs a map lookup, not a write.
	touchMu sync.Mutex
	touched map[int64]time.Time

	// Statements prepared once on each pool, for the hot paths (stmts.go).
	wStmts, rStmts stmtCache

	// searches remembers the searches the trigram index could not answer
	// (refusal_search_pg.go).
	searches searchMemo
}

// Open opens the database target names and brings its schema to the
// version this binary knows (see migrate.go). A postgres:// or
// postgresql:// URL opens that PostgreSQL database, which must exist;
// anything else is a SQLite file path, created if needed and switched to
// WAL (its directory must already exist).
func Open(target string) (*Store, error) { return OpenContext(context.Background(), target) }

// OpenContext is Open whose wait for another process's migration (on
// SQLite, up to migrationLockWait) ends with ctx: a command stopped with
// Ctrl-C or SIGTERM while it waits exits then.
func OpenContext(ctx context.Context, target string) (*Store, error) {
	s, err := openUnmigrated(target)
	if err != nil {
		return nil, err
	}
	if _, err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("models: open %s: %w", s.path, err)
	}
	return s, nil
}

// openUnmigrated opens the database without touching its schema.
func openUnmigrated(target string) (*Store, error) {
	if IsPostgres(target) {
		return openPostgres(strings.TrimSpace(target))
	}
	return openSQLite(target)
}

func openSQLite(path string) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := createOwnerOnly(path); err != nil {
		return nil, err
	}
	if err := prepareNewFile(path); err != nil {
		return nil, err
	}
	w, err := openGorm(path, writerParams)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, engine: engineSQLite, w: w, touched: make(map[int64]time.Time)}
	if err := s.checkWAL(); err != nil {
		closeGorm(w)
		return nil, err
	}
	r, err := openGorm(path, readerParams)
	if err != nil {
		closeGorm(w)
		return nil, err
	}
	s.r = r
	return s, nil
}

// Path returns the database file this store was opened on, or for
// PostgreSQL its URL without the password.
func (s *Store) Path() string { return s.path }

// Close closes both connection pools. The last connection to close
// checkpoints the WAL back into the main file.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.r == s.w {
		return closeGorm(s.w)
	}
	return errors.Join(closeGorm(s.r), closeGorm(s.w))
}

// Connection parameters understood by mattn/go-sqlite3. They are applied to
// every new connection, so a connection recycled by database/sql keeps them.
const (
	// Nothing here may need the write lock on a database that exists: a
	// process must start while another holds the lock (a long purge, a
	// VACUUM, a stalled writer) and queue its own writes. Setting
	// auto_vacuum writes the header even to the same value, so only a new,
	// empty file gets it (openSQLite); journal_mode=WAL is a no-op read
	// on a file already in WAL.
	writerParams = "_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate&_synchronous=NORMAL"
	// newFileParams are set once on a new, empty file, by a connection of
	// their own.
	newFileParams = "_auto_vacuum=incremental&_journal_mode=WAL&_busy_timeout=5000"
	// Readers use deferred transactions: an IMMEDIATE begin would take the
	// write lock for a read-only export.
	readerParams = "_busy_timeout=5000&_foreign_keys=on&_txlock=deferred&_query_only=on"
)

// prepareNewFile chooses a new, empty file's vacuum mode
// (refusal_vacuum.go) and WAL once, before anything else writes its first
// page. Replicas starting together on a new file race for it: the loser
// finds the file locked (SQLite does not wait to change the journal mode)
// and tries again until the winner has written it, within the busy
// timeout.
func prepareNewFile(path string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, err := os.Stat(path); err != nil || st.Size() > 0 {
			return nil // not new (or not there yet: the writer creates it)
		}
		first, err := openGorm(path, newFileParams)
		if err == nil {
			err = errors.Join(first.Exec("SELECT 1").Error, closeGorm(first))
		}
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPath rejects paths SQLite would misread or silently replace, with a
// message that says what to do instead.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("models: open: empty database path; pass a file path such as /var/lib/outbound/outbound.db")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("models: open %q: only plain file paths are supported (the store opens the file twice, for readers and the writer); use a real file, e.g. in t.TempDir()", path)
	case strings.Contains(path, "?"):
		return fmt.Errorf("models: open %q: the path contains '?', which the SQLite driver treats as the start of options; rename the file or directory", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("models: open %q: directory %q does not exist; create it first (mkdir -p %s) or choose another path", path, dir, dir)
	case err != nil:
		return fmt.Errorf("models: open %q: cannot inspect directory %q: %w", path, dir, err)
	case !st.IsDir():
		return fmt.Errorf("models: open %q: %q is not a directory; choose a path inside a directory", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("models: open %q: it is a directory; pass a file path inside it, e.g. %s", path, filepath.Join(path, "outbound.db"))
	}
	return nil
}

// createOwnerOnly creates the database file, when it does not exist yet,
// readable and writable by its owner only: it holds password and token
// hashes and the refusal log. SQLite gives the -wal and -shm files it
// creates later the database file's mode, so they are 0600 too. The mode
// is set explicitly, since the umask only ever narrows what create asks.
// An existing file keeps the mode its owner gave it.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("models: create %q: %w; check that the directory is writable", path, err)
	}
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		return fmt.Errorf("models: create %q: %w", path, err)
	}
	return nil
}

func openGorm(path, params string) (*gorm.DB, error) {
	db, err := gorm.Open(sqlite.Open(path+"?"+params), gormConfig(engineSQLite))
	if err != nil {
		return nil, fmt.Errorf("models: open %q: %w; check that the directory is writable and the file is a SQLite database", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("models: open %q: %w", path, err)
	}
	if params == writerParams {
		sqlDB.SetMaxOpenConns(1)
		sqlDB.SetMaxIdleConns(1)
	} else {
		n := min(max(runtime.NumCPU(), 2), 8)
		sqlDB.SetMaxOpenConns(n)
		sqlDB.SetMaxIdleConns(n)
	}
	return db, nil
}

// gormConfig is the GORM configuration of both engines.
func gormConfig(e engine) *gorm.Config {
	return &gorm.Config{
		Logger: logger.Default.LogMode(logger.Silent),
		// SQLite stores times as text; keeping them all in UTC keeps the
		// text order equal to the time order, which the time index relies
		// on. PostgreSQL keeps microseconds: truncating here makes a time
		// read back equal to the one written, on both engines.
		NowFunc: func() time.Time {
			if e == enginePostgres {
				return time.Now().UTC().Truncate(time.Microsecond)
			}
			return time.Now().UTC()
		},
		// We open explicit transactions where atomicity matters; wrapping
		// every single statement in another one only costs time.
		SkipDefaultTransaction: true,
	}
}

func closeGorm(db *gorm.DB) error {
	if db == nil {
		return nil
	}
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// checkWAL confirms WAL took effect on a SQLite file.
func (s *Store) checkWAL() error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*busyTimeout)
	defer cancel()
	var mode string
	if err := s.w.WithContext(ctx).Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		return fmt.Errorf("models: open %q: reading journal mode: %w; is the file a SQLite database?", s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("models: open %q: journal mode is %q, not WAL; the file system may not support WAL (network file systems often do not), use a local disk", s.path, mode)
	}
	return nil
}
