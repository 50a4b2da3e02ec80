package app

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the other connection that holds the lock

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// syncBuffer is a log destination the writers' goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logTables are the tables the log writers fill.
var logTables = []string{"refusals", "decisions", "would_refusals"}

// lockDatabase stalls every log writer on the database at path from
// another connection, as another process would, until the returned
// function is called: SQLite's write lock (BEGIN IMMEDIATE), or on
// PostgreSQL an ACCESS EXCLUSIVE lock on the log tables.
func lockDatabase(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db := openOther(t, path, "_busy_timeout=5000")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{"BEGIN IMMEDIATE"}
	if models.IsPostgres(path) {
		lock = []string{"BEGIN", "LOCK TABLE " + strings.Join(logTables, ", ") + " IN ACCESS EXCLUSIVE MODE"}
	}
	for _, stmt := range lock {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
			db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// openOther opens a connection pool of its own on the database at path,
// as another process would; sqliteParams apply to a SQLite file.
func openOther(t *testing.T, path, sqliteParams string) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite3", path+"?"+sqliteParams
	if models.IsPostgres(path) {
		driver, dsn = "pgx", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// countRows counts a table's rows with a connection of its own.
func countRows(t *testing.T, path, table string) int64 {
	t.Helper()
	db := openOther(t, path, "_query_only=on")
	defer db.Close()
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// eachStore runs f on a new SQLite file and on a PostgreSQL schema of its
// own (skipped without one: internal/pgtest), with the Getenv that opens it.
func eachStore(t *testing.T, f func(t *testing.T, path string, getenv func(string) string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "console.db"), noEnv) })
	t.Run("postgres", func(t *testing.T) {
		f(t, pgtest.Schema(t), envOf(map[string]string{"CONSOLE_SECRET_KEY": testKey}))
	})
}

// Every log writer, not only the refusal log's, keeps what it acknowledged
// through a stall and a shutdown during it: the decisions store (ticket
// timelines) and the would-be refusals once kept theirs in memory only,
// so SIGTERM while another process held the write lock lost them all.
// Now each spills to its own file next to the database, Close counts
// exactly what it kept there, and the next start writes it.
func TestEveryLogWriterKeepsItsRowsThroughAStallAndShutdown(t *testing.T) {
	defer func(g time.Duration) { closeGrace = g }(closeGrace)
	closeGrace = 300 * time.Millisecond // the lock outlasts it: Close must spill
	eachStore(t, everyLogWriterKeepsItsRows)
}

func everyLogWriterKeepsItsRows(t *testing.T, path string, getenv func(string) string) {
	var logs syncBuffer
	opts := Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Getenv: getenv}
	a, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	release := lockDatabase(t, path)
	const n = 3000
	for i := range n {
		host := fmt.Sprintf("h%d.example", i)
		caller := guard.Caller{Tool: "fetch_url", Agent: "bot", Ticket: "T-1"}
		a.record(guard.Record{Caller: caller, URL: "https://" + host + "/", Host: host, Port: 443})
		a.record(guard.Record{Caller: caller, URL: "https://" + host + "/", Host: host, Port: 443,
			WouldRefuse: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: host}})
		a.record(guard.Record{Caller: caller, URL: "https://" + host + "/", Host: host, Port: 443,
			Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: host, URL: "https://" + host + "/"}})
	}
	for _, st := range a.LogWriterStats() {
		if st.Dropped != 0 {
			t.Errorf("%s dropped %d rows during the stall", st.Log, st.Dropped)
		}
	}
	if err := a.Close(); err == nil {
		t.Fatal("Close during the stall said every row was written")
	}
	out := logs.String()
	// An allowed request that a report-only entry would refuse is a
	// decision too: the decisions store gets two rows per round.
	want := map[string]int{refusalLogName: n, decisionLogName: 2 * n, wouldLogName: n, "refusals": n, "decisions": 2 * n, "would_refusals": n}
	for _, name := range []string{refusalLogName, decisionLogName, wouldLogName} {
		want := fmt.Sprintf(`"msg":"%s: shutdown left rows out of the database","not_written":%d,"kept_in_spill_file":%d`, name, want[name], want[name])
		if !strings.Contains(out, want) {
			t.Errorf("the shutdown log does not say %s", want)
		}
	}
	for _, table := range logTables {
		if models.IsPostgres(path) {
			break // ACCESS EXCLUSIVE blocks this read too
		}
		if got := countRows(t, path, table); got != 0 {
			t.Fatalf("%d rows in %s while the lock was held", got, table)
		}
	}
	release()

	b, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for drained := false; !drained; time.Sleep(20 * time.Millisecond) {
		drained = true
		for _, st := range b.LogWriterStats() {
			drained = drained && st.NotWritten() == 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("the next start did not write the spilled rows: %+v", b.LogWriterStats())
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, table := range logTables {
		if got := countRows(t, path, table); got != int64(want[table]) {
			t.Errorf("%s holds %d rows after the restart, want the %d acknowledged", table, got, want[table])
		}
	}
}
