package models

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// engine is the database behind a Store. Almost every statement is the same
// on both; the few that are not ask s.engine (see the package docs).
type engine int

const (
	engineSQLite engine = iota
	enginePostgres
)

func (e engine) String() string {
	if e == enginePostgres {
		return "postgres"
	}
	return "sqlite"
}

// IsPostgres reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(target string) bool {
	t := strings.ToLower(strings.TrimSpace(target))
	return strings.HasPrefix(t, "postgres://") || strings.HasPrefix(t, "postgresql://")
}

// DisplayName is target as messages and pages show it: a SQLite path as it
// is, a PostgreSQL URL with its password replaced by xxxxx, so no error
// message, log line or /healthz answer ever carries a database password.
func DisplayName(target string) string {
	if !IsPostgres(target) {
		return target
	}
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Engine names the database behind the store: "sqlite" or "postgres".
func (s *Store) Engine() string { return s.engine.String() }

// pgConns bounds each process's connections to PostgreSQL. Several replicas
// share the server's max_connections (100 by default), so one process may
// not take them all.
const pgConns = 10

// openPostgres connects to the PostgreSQL database at dsn. Readers and
// writers share one pool: PostgreSQL has no single-writer rule, and its
// MVCC gives every statement a consistent snapshot. The write lock that
// SQLite's BEGIN IMMEDIATE takes is taken explicitly (lockingPool).
func openPostgres(dsn string) (*Store, error) {
	name := DisplayName(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("models: open %s: %v; write it as postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=require", name, redactErr(err, dsn))
	}
	// pgx prepares and caches every statement, and after five runs
	// PostgreSQL may plan a cached one once for any parameters. The
	// refusal log's data is skewed (a flood of one host, one code), so a
	// plan for "any word" walked 200,000 rows where the trigram index
	// answers "this word" in 2 ms. Planning each run costs well under a
	// millisecond; a DSN that sets plan_cache_mode keeps its own.
	if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
		cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
	// Every session works in UTC, whatever the server's or the URL's
	// zone: the counters' periods are UTC hours and days, and
	// date_trunc on a timestamptz truncates in the session's zone, so a
	// server in a zone with a half-hour offset keyed the counters the
	// migrations fill at XX:30 while everything else reads XX:00.
	cfg.RuntimeParams["timezone"] = "UTC"
	// Timestamps come back in UTC, as they do from SQLite, so a time read
	// back prints and compares the same on both engines.
	sqlDB := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		c.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID, Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}))
	sqlDB.SetMaxOpenConns(pgConns)
	sqlDB.SetMaxIdleConns(pgConns)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("models: open %s: %v; check that PostgreSQL runs there, the database exists and the user may connect (pg_hba.conf)", name, redactErr(err, dsn))
	}
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: &lockingPool{DB: sqlDB}}), gormConfig(enginePostgres))
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("models: open %s: %w", name, err)
	}
	return &Store{path: name, dsn: dsn, engine: enginePostgres, w: db, r: db, touched: make(map[int64]time.Time)}, nil
}

// redactErr is err's text without the DSN's password, which pgx may
// quote: the whole DSN where it appears becomes DisplayName's form, and
// then any password left (of the user part or of the query's password
// parameter, as written and as decoded) becomes xxxxx. pgx hides only
// the user part's, and a URL that did not parse was quoted whole.
func redactErr(err error, dsn string) string {
	msg := strings.ReplaceAll(err.Error(), dsn, DisplayName(dsn))
	u, perr := url.Parse(dsn)
	if perr != nil {
		return msg
	}
	var secrets []string
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw, url.PathEscape(pw), url.QueryEscape(pw))
	}
	for _, pw := range u.Query()["password"] {
		secrets = append(secrets, pw, url.QueryEscape(pw))
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if raw, ok := strings.CutPrefix(kv, "password="); ok {
			secrets = append(secrets, raw)
		}
	}
	for _, pw := range secrets {
		if pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// writeLockKey is the advisory lock every PostgreSQL write transaction
// takes first: the same "one writer at a time" SQLite's BEGIN IMMEDIATE
// gives, so a check-then-write (the last admin, the first admin, a stale
// form) cannot interleave with another replica's. The number is arbitrary
// but fixed: every replica must use the same one.
const writeLockKey int64 = 0x6f7574626f756e64 // "outbound"

// takeWriteLock takes the write lock of the store's schema: writeLockKey
// in schema public, as every release has taken it, and in any other
// schema that key mixed with the schema's name. Why: an advisory lock is
// the whole database's, so two stores in two schemas of one database (a
// staging and a production deployment, or the test suite's schemas, one
// per test) waited for each other's writes; a replica's change then
// reached the others in over a second where the bound is 100 ms. A
// replica of an older release in a schema other than public takes the
// plain key, so stop those before starting this one (docs/USER-GUIDE.md,
// upgrading). COALESCE: with no schema on the search path the key would
// be NULL, and pg_advisory_xact_lock(NULL) takes no lock at all.
const takeWriteLock = "SELECT pg_advisory_xact_lock" + schemaWriteLockKey

// schemaWriteLockKey is the key takeWriteLock takes, given writeLockKey
// as $1. The schema is current_schema(): the first schema of the search
// path that exists, which without a search_path in the URL is the role's
// own schema when it has one ("$user"), else public.
const schemaWriteLockKey = "($1::bigint # CASE WHEN COALESCE(current_schema(), 'public') = 'public' THEN 0 ELSE hashtextextended(current_schema(), 0) END)"

// lockingPool is the PostgreSQL connection pool with one change: every
// transaction begins by taking writeLockKey (released at commit or
// rollback). Statements outside a transaction are single statements and
// need no lock.
type lockingPool struct{ *sql.DB }

// BeginTx begins a transaction holding the schema's write lock
// (takeWriteLock).
func (p *lockingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	tx, err := p.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.ReadOnly {
		return tx, nil
	}
	if _, err := tx.ExecContext(ctx, takeWriteLock, writeLockKey); err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("models: waiting for the write lock: %w", err)
	}
	return tx, nil
}

// GetDBConn lets gorm's DB() reach the *sql.DB underneath.
func (p *lockingPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }
