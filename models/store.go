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

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// busyTimeout is how long a connection waits for another writer (possibly in
// another process) before SQLite gives up with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Store is the handle on one SQLite database file. It is safe for concurrent
// use by many goroutines; see the package documentation for how reads and
// writes are split.
type Store struct {
	path string

	// w has exactly one connection. SQLite admits one writer at a time, so a
	// bigger pool would only turn Go-side queueing into SQLITE_BUSY retries.
	// Every transaction on it starts with BEGIN IMMEDIATE (_txlock), so a
	// transaction that reads and then writes never has to upgrade its lock
	// and cannot deadlock against another process doing the same.
	w *gorm.DB
	// r is a pool of query-only connections. Under WAL, readers never block
	// the writer and the writer never blocks readers.
	r *gorm.DB

	closed atomic.Bool

	// touched remembers when TouchToken last wrote each token so that the
	// hot path (every agent request) usually costs a map lookup, not a write.
	touchMu sync.Mutex
	touched map[int64]time.Time
}

// Open opens (creating if needed) the SQLite database at path, switches it
// to WAL, and migrates every table. The directory must already exist.
func Open(path string) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := createOwnerOnly(path); err != nil {
		return nil, err
	}
	w, err := openGorm(path, writerParams)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, w: w, touched: make(map[int64]time.Time)}
	if err := s.prepareWriter(); err != nil {
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

// Path returns the database file this store was opened on.
func (s *Store) Path() string { return s.path }

// Close closes both connection pools. The last connection to close
// checkpoints the WAL back into the main file.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(closeGorm(s.r), closeGorm(s.w))
}

// Connection parameters understood by mattn/go-sqlite3. They are applied to
// every new connection, so a connection recycled by database/sql keeps them.
const (
	writerParams = "_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate&_synchronous=NORMAL"
	// Readers use deferred transactions: an IMMEDIATE begin would take the
	// write lock for a read-only export.
	readerParams = "_busy_timeout=5000&_foreign_keys=on&_txlock=deferred&_query_only=on"
)

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
	db, err := gorm.Open(sqlite.Open(path+"?"+params), &gorm.Config{
		Logger: logger.Default.LogMode(logger.Silent),
		// Times are stored as text; keeping them all in UTC keeps the text
		// order equal to the time order, which the time index relies on.
		NowFunc: func() time.Time { return time.Now().UTC() },
		// We open explicit transactions where atomicity matters; wrapping
		// every single statement in another one only costs time.
		SkipDefaultTransaction: true,
	})
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

// prepareWriter confirms WAL took effect, migrates the schema and seeds the
// revision row. Two processes may run this at once; the busy timeout
// serialises them and every step is idempotent.
func (s *Store) prepareWriter() error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*busyTimeout)
	defer cancel()
	db := s.w.WithContext(ctx)
	var mode string
	if err := db.Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		return fmt.Errorf("models: open %q: reading journal mode: %w; is the file a SQLite database?", s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("models: open %q: journal mode is %q, not WAL; the file system may not support WAL (network file systems often do not), use a local disk", s.path, mode)
	}
	if err := prepareVacuum(db); err != nil {
		return fmt.Errorf("models: open %q: %w", s.path, err)
	}
	if err := db.AutoMigrate(&AllowlistEntry{}, &Setting{}, &revisionRow{}, &sectionVersion{}, &Refusal{}, &refusalHost{}, &refusalCount{}, &AgentToken{}, &User{}, &Session{}, &Audit{}, &Integration{}); err != nil {
		return fmt.Errorf("models: open %q: migrating schema: %w", s.path, err)
	}
	if err := db.Exec("INSERT OR IGNORE INTO revision (id, value) VALUES (1, 0)").Error; err != nil {
		return fmt.Errorf("models: open %q: seeding revision: %w", s.path, err)
	}
	if err := backfillRefusalHosts(db); err != nil {
		return fmt.Errorf("models: open %q: %w", s.path, err)
	}
	if err := migrateLegacyRefusals(db); err != nil {
		return fmt.Errorf("models: open %q: %w", s.path, err)
	}
	for _, sec := range sections {
		if err := db.Exec("INSERT OR IGNORE INTO section_versions (section, value) VALUES (?, 0)", sec).Error; err != nil {
			return fmt.Errorf("models: open %q: seeding the %s version: %w", s.path, sec, err)
		}
	}
	// Last: filling the counters of a big log may outlast the deadline.
	if err := backfillRefusalCounts(db); err != nil {
		return fmt.Errorf("models: open %q: %w", s.path, err)
	}
	return nil
}
