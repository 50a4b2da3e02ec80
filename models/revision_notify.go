package models

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// Replicas on one PostgreSQL database learn of a configuration change by
// LISTEN/NOTIFY: the change's transaction sends a notification on
// notifyChannel, PostgreSQL delivers it to every listener when (and only
// if) the transaction commits, and each replica's Watch then reads the
// revision at once instead of at its next poll. The notification carries
// nothing but the wake-up: the revision is read from the table, so a lost,
// doubled or reordered notification can never load the wrong
// configuration, only load it later (at the next poll).

// notifyChannel is the channel configuration changes are announced on.
const notifyChannel = "outbound_config"

// listenRetry is how long listen waits before connecting again after its
// connection was lost; polling covers the gap.
const listenRetry = time.Second

// A LISTEN connection that a NAT or firewall dropped without a word (it
// forgets idle connections: 350 s on some clouds' NAT gateways) is
// half-open: no notification arrives, no error either, and the replica
// went on reporting Listening while only its poll carried changes. So a
// connection quiet for listenCheck is pinged, and one that does not
// answer within listenPingTimeout is dropped and made again (the ping
// also keeps such a mapping alive). Variables, so a test can shorten
// them.
var (
	listenCheck       = 15 * time.Second
	listenPingTimeout = 3 * time.Second
)

// notifyChange announces a change inside its transaction (PostgreSQL only;
// SQLite processes poll).
func (s *Store) notifyChange(tx *gorm.DB) error {
	if s.engine != enginePostgres {
		return nil
	}
	return tx.Exec("SELECT pg_notify(?, '')", notifyChannel).Error
}

// Listening reports whether Watch holds its LISTEN connection now: false on
// SQLite, and on PostgreSQL while the connection is lost and polling alone
// carries changes (health checks show it).
func (s *Store) Listening() bool { return s.listening.Load() }

// listen keeps a connection LISTENing on notifyChannel until ctx ends and
// pokes wake on every notification, and once after each (re)connect, since
// notifications sent while it was away are gone.
func (s *Store) listen(ctx context.Context, wake chan<- struct{}) {
	defer s.listening.Store(false)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending; one read covers both
		}
	}
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, s.dsn)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+notifyChannel); err == nil {
				s.listening.Store(true)
				poke()
				for err == nil {
					if err = waitOrPing(ctx, conn); err == nil {
						poke()
					}
				}
			}
			s.listening.Store(false)
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// waitOrPing waits for the next notification on conn. After listenCheck
// without one it pings the server and, when it answers, waits again; an
// error is a connection to drop (or ctx ended).
func waitOrPing(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, listenCheck)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		// A wait that ran out leaves the connection usable (pgconn closes
		// it on any other error).
		if err == nil || ctx.Err() != nil || !pgconn.Timeout(err) {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return err
		}
	}
}
