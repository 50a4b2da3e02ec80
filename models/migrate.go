package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
)

// Schema changes are numbered migrations, applied in order and recorded in
// the schema_migrations table, instead of an AutoMigrate of every model by
// every process on every start:
//
//   - a process that finds the schema at the version it knows starts with
//     one read, whatever the size of the database;
//   - several replicas starting together apply a migration once: the first
//     takes the database's write lock (BEGIN IMMEDIATE on SQLite, an
//     advisory lock on PostgreSQL), applies what is pending and records it;
//     the others wait for that lock, then find nothing left to do;
//   - a process older than the schema refuses to start (SchemaTooNewError)
//     rather than write rows a newer schema does not expect.
//
// Adding a migration is one entry at the end of the migrations list: the
// next number, a name an operator understands, and the function. Most are
// a new table or column, autoMigrate(&NewModel{}); a data change is a
// function of its own in the file of the model it changes. A migration runs
// inside the lock's transaction, so it must not open connections of its
// own, and it runs exactly once per database: it need not be idempotent,
// but the AutoMigrate kind always is. Never change or renumber an applied
// migration; add another.

// migration is one numbered step of the schema.
type migration struct {
	version int
	name    string
	up      func(tx *gorm.DB, e engine) error
}

// migrations is the schema's history, oldest first; versions are 1, 2, 3…
// in order (a test checks it).
var migrations = []migration{
	{1, "the schema of the first release: allowlist, settings, refusal log, tokens, users, sessions, audit, integrations", baseline},
	{2, "one-time setup links shared by every replica", autoMigrate(&setupLink{})},
	{3, "sign-in failures counted across replicas", autoMigrate(&signInFailure{})},
	{4, "the time of the last configuration change, for the reload lag", autoMigrate(&revisionRow{})},
	{5, "tickets: the ticket of each refusal, the decisions store, the refusals' search text", tickets},
	{6, "scoped allowlist entries, internal hosts, report-only entries and access requests", scopes},
	{7, "the Overview's index on the refusal log", func(tx *gorm.DB, _ engine) error { return createOverviewIndex(tx) }},
	{8, "the refusal log's counters by hour and day, kept with each batch", counts},
	{9, "used setup links are kept, marked used, so every replica can say so", autoMigrate(&setupLink{})},
	{10, "the integration of each refusal and would-be refusal; would-be refusals filtered and searched in the refusal log", wouldRefuseLog},
	{11, "the log writers: a refusal row's count of the alike refusals it stands for; allowed decisions get their id from a sequence on PostgreSQL", logWriters},
	{12, "PostgreSQL indexes of the refusal log at ten million rows: (column, id) for every filter, trigram search", refusalScaleIndexes},
	{13, "the Overview counts the refusals an aggregated row stands for, from an index that holds repeat_count", overviewCounts},
	{14, "the Overview reads the refusal counters (by hour, kind and reason) instead of counting rows; its index is dropped", overviewFromCounters},
	{15, "the refusal counters bound the IDs of the rows of each hour, so a time filter reads an ID range", counterIDRanges},
	{16, "a new agent token waits for its one view in the database, so any replica can show it", autoMigrate(&tokenView{})},
	{17, "the refusal counters keep room on their pages on PostgreSQL, so adding to one does not add index entries", countersFillfactor},
	{18, "on PostgreSQL the refusal log's ticket and integration indexes leave out the rows without one", partialTicketIndexes},
	{19, "on PostgreSQL each refusal message is stored once, out of the search text's trigram index", refusalMessages},
	{20, "the conversations that have read the web, kept for every replica", autoMigrate(&webRead{})},
	{21, "the refusal counters bound the IDs of each day's rows of a host, so a broad host substring finds its page from a few hosts", hostDayRanges},
}

// wouldRefuseLog is migration 10: refusals and would-be refusals name the
// integration a call was made for (indexed), and would-be refusals get
// the columns, search text and indexes the log's filters read.
func wouldRefuseLog(tx *gorm.DB, _ engine) error {
	if err := tx.AutoMigrate(&Refusal{}, &WouldRefusal{}); err != nil {
		return err
	}
	return backfillWouldRefusalTexts(tx)
}

// counts is migration 8: the counters the log page and the Overview read
// instead of counting rows, filled once from the rows already there.
func counts(tx *gorm.DB, _ engine) error {
	if err := tx.AutoMigrate(&refusalCount{}); err != nil {
		return err
	}
	return fillCountersOnce(tx, counterDims[:4], "COUNT(*)", false)
}

// tickets is migration 5: refusals name their ticket, allowed decisions
// of a ticket are kept, and the log's free-text search reads a narrow
// lower-cased copy of each refusal's text, filled here for older rows.
func tickets(tx *gorm.DB, _ engine) error {
	if err := tx.AutoMigrate(&Refusal{}, &Decision{}, &refusalText{}); err != nil {
		return err
	}
	return backfillRefusalTexts(tx)
}

// scopes is migration 6: an entry's uniqueness becomes (entry, scope),
// which replaces the old unique index on the entry alone.
func scopes(tx *gorm.DB, _ engine) error {
	if err := tx.AutoMigrate(&AllowlistEntry{}, &Refusal{}, &WouldRefusal{}, &AccessRequest{}); err != nil {
		return err
	}
	return migrateAllowlistScopes(tx)
}

// migrationsAfter is the migrations newer than version v, in order.
func migrationsAfter(v int) []migration {
	for i, m := range migrations {
		if m.version > v {
			return migrations[i:]
		}
	}
	return nil
}

// LatestSchemaVersion is the newest schema this binary knows.
func LatestSchemaVersion() int { return migrations[len(migrations)-1].version }

// autoMigrate is the migration that creates (or adds the missing columns
// and indexes of) the tables of models.
func autoMigrate(models ...any) func(tx *gorm.DB, e engine) error {
	return func(tx *gorm.DB, _ engine) error { return tx.AutoMigrate(models...) }
}

// baselineModels are the tables of migration 1.
var baselineModels = []any{&AllowlistEntry{}, &Setting{}, &revisionRow{}, &sectionVersion{}, &Refusal{}, &refusalHost{}, &AgentToken{}, &User{}, &Session{}, &Audit{}, &Integration{}}

// baseline is migration 1: the schema as the first release created it on
// every start. A SQLite database of that release has no schema_migrations
// table, so it is at version 0 and gets migration 1 too: every step below
// leaves a table, column or row that is already there alone, which is what
// upgrades such a file in place.
func baseline(tx *gorm.DB, e engine) error {
	if err := tx.AutoMigrate(baselineModels...); err != nil {
		return fmt.Errorf("creating the tables: %w", err)
	}
	if err := tx.Exec("INSERT INTO revision (id, value) VALUES (1, 0) ON CONFLICT DO NOTHING").Error; err != nil {
		return fmt.Errorf("seeding the revision: %w", err)
	}
	for _, sec := range sections {
		if err := tx.Exec("INSERT INTO section_versions (section, value) VALUES (?, 0) ON CONFLICT DO NOTHING", sec).Error; err != nil {
			return fmt.Errorf("seeding the %s version: %w", sec, err)
		}
	}
	if err := backfillRefusalHosts(tx); err != nil {
		return err
	}
	if e == engineSQLite {
		// Rows from before the kind column exist only in SQLite files:
		// PostgreSQL support came later.
		return migrateLegacyRefusals(tx)
	}
	return nil
}

// schemaMigration is one applied migration.
type schemaMigration struct {
	Version   int       `gorm:"primaryKey;autoIncrement:false"`
	Name      string    `gorm:"not null"`
	AppliedAt time.Time `gorm:"not null"`
}

func (schemaMigration) TableName() string { return "schema_migrations" }

// SchemaTooNewError is a database migrated by a newer release than this
// binary: it may hold tables and rows this one would mishandle.
type SchemaTooNewError struct {
	Have, Know int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("models: the database schema is at version %d, newer than this binary knows (%d): a newer release migrated it; upgrade this binary to that release (every replica runs the same one)", e.Have, e.Know)
}

// schemaVersion is the highest applied migration; 0 for a database without
// the table (new, or from before versioned migrations).
func schemaVersion(db *gorm.DB) (int, error) {
	if !db.Migrator().HasTable(&schemaMigration{}) {
		return 0, nil
	}
	var v int
	if err := db.Raw("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// MigrationStatus is where a database's schema stands.
type MigrationStatus struct {
	// Version is the schema's version; Latest is the newest this binary
	// knows.
	Version, Latest int
	// Pending names the migrations not applied yet, in order ("2: …").
	Pending []string
	// Applied names the migrations this call applied, in order.
	Applied []string
}

// migrate applies the pending migrations under the database's write lock
// and says what it did.
func (s *Store) migrate(ctx context.Context) (MigrationStatus, error) {
	st := MigrationStatus{Latest: LatestSchemaVersion()}
	v, err := schemaVersion(s.w.WithContext(ctx))
	if err != nil {
		return st, err
	}
	st.Version = v
	if v > st.Latest {
		return st, &SchemaTooNewError{Have: v, Know: st.Latest}
	}
	if v == st.Latest {
		return st, nil
	}
	// The transaction holds the write lock from its first statement, so a
	// replica starting at the same moment waits here, then reads the
	// version this one recorded (waitForMigrationLock: on SQLite longer
	// than one busy timeout).
	err = s.waitForMigrationLock(ctx, func() error { return s.migrateLocked(ctx, &st) })
	if err != nil {
		st.Applied = nil
	}
	return st, err
}

// migrationLockWait bounds how long a process waits on SQLite for the
// write lock to migrate: another process may be in a long migration (an
// index over a large log takes minutes), which holds the lock past the
// busy timeout. PostgreSQL's advisory lock waits without a bound.
const migrationLockWait = 15 * time.Minute

// waitForMigrationLock runs fn, and again while it fails because SQLite's
// write lock stayed taken for a whole busy timeout, saying once that it
// waits, until migrationLockWait has passed or ctx ends. A process started
// during another's migration used to exit with "database is locked"
// after 5 s, though the guide says the others wait for that lock.
func (s *Store) waitForMigrationLock(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(migrationLockWait)
	said := false
	for {
		err := fn()
		var se sqlite3.Error
		if err == nil || s.engine != engineSQLite || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return err
		}
		if !said {
			said = true
			slog.Warn("another process holds the database's write lock, perhaps migrating the schema; waiting for it", "database", s.path, "for at most", migrationLockWait)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// migrateLocked applies the pending migrations in one transaction that
// holds the write lock, into st.
func (s *Store) migrateLocked(ctx context.Context, st *MigrationStatus) error {
	st.Applied = nil // an attempt that waited on the lock applied nothing
	return s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.AutoMigrate(&schemaMigration{}); err != nil {
			return fmt.Errorf("creating the schema_migrations table: %w", err)
		}
		v, err := schemaVersion(tx)
		if err != nil {
			return err
		}
		st.Version = v
		if v > st.Latest {
			return &SchemaTooNewError{Have: v, Know: st.Latest}
		}
		for _, m := range migrationsAfter(v) {
			if err := m.up(tx, s.engine); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
			if err := tx.Create(&schemaMigration{Version: m.version, Name: m.name, AppliedAt: time.Now().UTC()}).Error; err != nil {
				return fmt.Errorf("recording migration %d: %w", m.version, err)
			}
			st.Applied = append(st.Applied, fmt.Sprintf("%d: %s", m.version, m.name))
		}
		st.Version = st.Latest
		return nil
	})
}

// Migrate opens the database target names, applies the migrations it
// lacks, closes it and reports what it did: `console migrate`, for an
// operator who upgrades the schema before rolling out new replicas.
func Migrate(ctx context.Context, target string) (MigrationStatus, error) {
	s, err := openUnmigrated(target)
	if err != nil {
		return MigrationStatus{}, err
	}
	st, err := s.migrate(ctx)
	return st, errors.Join(err, s.Close())
}

// PendingMigrations reports where the schema of the database target names
// stands, changing nothing.
func PendingMigrations(ctx context.Context, target string) (MigrationStatus, error) {
	s, err := openUnmigrated(target)
	if err != nil {
		return MigrationStatus{}, err
	}
	defer s.Close()
	v, err := schemaVersion(s.w.WithContext(ctx))
	if err != nil {
		return MigrationStatus{}, err
	}
	st := MigrationStatus{Version: v, Latest: LatestSchemaVersion()}
	if v > st.Latest {
		return st, &SchemaTooNewError{Have: v, Know: st.Latest}
	}
	for _, m := range migrationsAfter(v) {
		st.Pending = append(st.Pending, fmt.Sprintf("%d: %s", m.version, m.name))
	}
	return st, nil
}

// NotInitialisedError is a PostgreSQL database that exists but holds no
// Outbound schema: a command that must not create one (the proxy, a tool
// call) refuses it, as it refuses a missing SQLite file.
type NotInitialisedError struct{ Name string }

func (e *NotInitialisedError) Error() string {
	return fmt.Sprintf("models: the database %s holds no Outbound schema yet", e.Name)
}

// OpenExisting is Open for a database that must already be Outbound's:
// a PostgreSQL database without the schema is a *NotInitialisedError
// rather than a new, empty configuration. (For SQLite, the caller checks
// that the file exists.)
func OpenExisting(target string) (*Store, error) {
	return OpenExistingContext(context.Background(), target)
}

// OpenExistingContext is OpenExisting whose wait for another process's
// migration ends with ctx (OpenContext).
func OpenExistingContext(ctx context.Context, target string) (*Store, error) {
	s, err := openUnmigrated(target)
	if err != nil {
		return nil, err
	}
	if s.engine == enginePostgres {
		v, err := schemaVersion(s.w)
		if err == nil && v == 0 {
			err = &NotInitialisedError{Name: s.path}
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	if _, err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("models: open %s: %w", s.path, err)
	}
	return s, nil
}
