package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Session is a signed-in browser. The store keeps only a hash of the
// session ID, so a copy of the database does not sign anyone in.
type Session struct {
	ID         int64     `gorm:"primaryKey"`
	TokenHash  string    `gorm:"not null;uniqueIndex"`
	UserID     int64     `gorm:"not null;index"`
	User       User      `gorm:"constraint:OnDelete:CASCADE"`
	CreatedAt  time.Time `gorm:"not null"`
	LastSeenAt time.Time `gorm:"not null;index"`
	ClientIP   string    `gorm:"not null;default:''"`
	UserAgent  string    `gorm:"not null;default:''"`
}

// CreateSession records a new session for userID under tokenHash.
func (s *Store) CreateSession(ctx context.Context, userID int64, tokenHash, clientIP, userAgent string, now time.Time) error {
	if len(userAgent) > 300 {
		userAgent = userAgent[:300]
	}
	return s.w.WithContext(ctx).Create(&Session{TokenHash: tokenHash, UserID: userID, CreatedAt: now, LastSeenAt: now, ClientIP: clientIP, UserAgent: userAgent}).Error
}

// SessionUser returns the session with tokenHash and its user, if the
// session was seen within idle and started within maxAge of now. An
// expired session is deleted and reported as not found.
func (s *Store) SessionUser(ctx context.Context, tokenHash string, now time.Time, idle, maxAge time.Duration) (Session, User, error) {
	var sess Session
	err := s.r.WithContext(ctx).Joins("User").Where("sessions.token_hash = ?", tokenHash).Take(&sess).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Session{}, User{}, &NotFoundError{Kind: "session", Value: "(hidden)"}
	}
	if err != nil {
		return Session{}, User{}, err
	}
	if now.Sub(sess.LastSeenAt) > idle || now.Sub(sess.CreatedAt) > maxAge {
		_ = s.DeleteSession(ctx, tokenHash)
		return Session{}, User{}, &NotFoundError{Kind: "session", Value: "(expired)"}
	}
	return sess, sess.User, nil
}

// TouchSession moves a session's last-seen time forward. Callers throttle
// it (once a minute is plenty) so that reads do not become writes.
func (s *Store) TouchSession(ctx context.Context, id int64, now time.Time) error {
	return s.w.WithContext(ctx).Model(&Session{}).Where("id = ?", id).Update("last_seen_at", now).Error
}

// DeleteSession ends one session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	return s.w.WithContext(ctx).Where("token_hash = ?", tokenHash).Delete(&Session{}).Error
}

// PurgeSessions deletes sessions idle since before cutoff.
func (s *Store) PurgeSessions(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.w.WithContext(ctx).Where("last_seen_at < ?", cutoff).Delete(&Session{})
	return res.RowsAffected, res.Error
}
