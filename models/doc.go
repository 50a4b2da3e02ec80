// Package models is Outbound's storage layer: the allowlist, the console
// settings, the log of refused requests, the agents' API tokens, and the
// console's users, sessions and audit trail, kept through GORM in one
// SQLite file or, for several replicas, one PostgreSQL database.
//
// Both engines run the same statements (see store_postgres.go for the few
// that differ) and the same numbered migrations (migrate.go). What follows
// describes SQLite; on PostgreSQL, readers and writers share one pool,
// every write transaction takes an advisory lock first (the port of BEGIN
// IMMEDIATE), and Watch LISTENs for the notification each change sends
// instead of only polling.
//
// It exists so that everything persistent has one owner with one
// concurrency story. The guard, the tools and the web console never open the
// database themselves; they call the small functions here and convert the
// row types to and from their own. The package stores and retrieves: it does
// not validate allowlist entries or settings (the guard does), and it
// renders nothing.
//
// # Concurrency
//
// SQLite allows many readers but one writer per file, and this package is
// built around that rather than against it:
//
//   - WAL journal. Readers see a consistent snapshot and never block the
//     writer; the writer never blocks readers. A Store keeps two pools: a
//     single-connection write pool, so goroutines queue in database/sql
//     instead of spinning on SQLITE_BUSY, and a pool of query-only read
//     connections.
//   - BEGIN IMMEDIATE. Every write transaction takes the write lock at
//     BEGIN. A deferred transaction that reads and then writes would have to
//     upgrade its lock, and two processes doing that at once deadlock; with
//     IMMEDIATE one simply waits (up to the 5 s busy timeout) for the other.
//   - Revision counter. Every change to the allowlist or settings bumps one
//     revision number in the same transaction. Mutations take the revision
//     the caller based its change on and fail with ErrConflict if someone
//     saved in between, which the console turns into a 409 instead of
//     silently overwriting another admin's work. Watch polls that number so
//     a second process on the same file (a CLI, another console) picks up a
//     change within a poll interval, with no channel between the processes.
//   - Asynchronous refusal log. A refused request must not wait for the disk,
//     so RefusalWriter queues rows in memory and commits them in batches from
//     a background goroutine, dropping (and counting) rather than blocking if
//     the queue ever fills. Close flushes what is queued.
//   - Short write transactions. Batches, purges and exports are cut into
//     chunks, so no single operation holds the write lock (or a read
//     snapshot) for long and admins saving the allowlist never wait behind a
//     purge of months of refusals.
//
// # Reading the refusal log
//
// Refusals are paged newest first by keyset (ID below a cursor), never by
// OFFSET, so page 1 and page 10,000 cost the same. Each filterable column
// has an index; because SQLite appends the rowid to every index entry, an
// index on host is in effect an index on (host, id) and a filtered page is a
// short backwards walk of one index.
package models
