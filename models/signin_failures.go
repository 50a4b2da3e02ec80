package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// signInFailure is one failed (or reserved) sign-in, counted against a key:
// an account name or a client source. The sign-in throttle keeps these in
// the database rather than in the process so that a load balancer spreading
// one attacker's guesses over several replicas gives it no more guesses than
// one replica would.
type signInFailure struct {
	ID   int64     `gorm:"primaryKey"`
	Kind string    `gorm:"not null;index:idx_signin_failures_key,priority:1"` // "account" or "source"
	Key  string    `gorm:"not null;index:idx_signin_failures_key,priority:2"`
	At   time.Time `gorm:"not null;index;index:idx_signin_failures_key,priority:3"`
}

func (signInFailure) TableName() string { return "signin_failures" }

// ThrottleKey is one limit a sign-in is counted against: its recent
// failures are those of the last Window, at most Keep of them (the
// newest).
type ThrottleKey struct {
	Kind, Key string
	Window    time.Duration
	Keep      int
}

// maxFailureAge is older than any throttle window: rows past it are
// deleted as sign-ins go by.
const maxFailureAge = 25 * time.Hour

// ReserveSignIn reads the recent failures of each key (newest first) and
// asks admit whether the attempt may go ahead at now; if so it records one
// failure per key at now and returns their IDs, which CreditSignIn takes
// back when the password was right. Reading and recording are one write
// transaction, which holds the database's write lock, so parallel guesses
// on any number of replicas are counted one after the other and cannot all
// slip past a limit. A refused attempt records nothing and returns nil IDs.
//
// now is the database's clock, read once the lock is held (signInClock),
// so replicas whose clocks differ still agree on every failure's age and
// every wait; local is this process's clock, which is the database's on
// SQLite.
func (s *Store) ReserveSignIn(ctx context.Context, keys []ThrottleKey, local time.Time, admit func(now time.Time, recent [][]time.Time) bool) ([]int64, error) {
	var ids []int64
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now, err := s.signInClock(tx, local)
		if err != nil {
			return err
		}
		recent := make([][]time.Time, len(keys))
		for i, k := range keys {
			if err := tx.Model(&signInFailure{}).Where("kind = ? AND key = ? AND at > ?", k.Kind, k.Key, now.Add(-k.Window)).
				Order("at DESC").Limit(k.Keep).Pluck("at", &recent[i]).Error; err != nil {
				return err
			}
		}
		if !admit(now, recent) {
			return nil
		}
		for _, k := range keys {
			row := signInFailure{Kind: k.Kind, Key: k.Key, At: now}
			if err := tx.Create(&row).Error; err != nil {
				return err
			}
			ids = append(ids, row.ID)
		}
		return tx.Where("at < ?", now.Add(-maxFailureAge)).Delete(&signInFailure{}).Error
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// signInClock is the time now on the database's clock, in UTC: on
// PostgreSQL the server's clock_timestamp() (not now(), which is when the
// transaction began, before it waited for the write lock), to the
// microsecond it stores; on SQLite, whose file is on this machine, local.
func (s *Store) signInClock(tx *gorm.DB, local time.Time) (time.Time, error) {
	if s.engine != enginePostgres {
		return local.UTC(), nil
	}
	var now time.Time
	if err := tx.Raw("SELECT clock_timestamp()").Row().Scan(&now); err != nil {
		return time.Time{}, err
	}
	return now.UTC(), nil
}

// CreditSignIn takes back the failures ReserveSignIn recorded.
func (s *Store) CreditSignIn(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.w.WithContext(ctx).Where("id IN ?", ids).Delete(&signInFailure{}).Error
}
