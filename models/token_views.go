package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// tokenView is a new agent token waiting for its one view. The console
// shows a new token by post/redirect/get, and behind a load balancer the
// GET may reach another replica than the POST, so the view cannot live in
// the process that made it. The token is kept sealed (encrypted with the
// secret key, which is not in the database) and only until it is shown:
// the view that shows it blanks it in the same statement that marks it
// shown, so two replicas cannot both show it. The row itself stays until
// it expires, so a reload can say "already shown" rather than "no such
// page".
type tokenView struct {
	// IDHash is the SHA-256 of the view's random ID (hex): the ID in the
	// URL is a capability, and the database keeps no usable copy.
	IDHash    string    `gorm:"primaryKey"`
	SessionID int64     `gorm:"not null"`
	Name      string    `gorm:"not null"`
	Sealed    string    `gorm:"not null;default:''"`
	Base      string    `gorm:"not null;default:''"`
	ExpiresAt time.Time `gorm:"not null;index"`
	ShownAt   *time.Time
}

func (tokenView) TableName() string { return "token_views" }

// TokenView is a parked new token as the console reads it back.
type TokenView struct {
	Name string
	// Sealed is the token, sealed; "" once it has been shown.
	Sealed string
	// Base is the console's address the token page names (…/mcp).
	Base string
}

// ParkedView is a new token's one view, as CreateTokenWithView keeps it:
// the sealed token under the view ID's hash, for session, until Expires.
type ParkedView struct {
	IDHash       string
	Session      int64
	View         TokenView
	Now, Expires time.Time
}

// CreateTokenWithView is CreateToken that also keeps the token's one view,
// in the same transaction: a token is never live without the view that
// shows it (nor a view without its token). Expired views are deleted first.
func (s *Store) CreateTokenWithView(ctx context.Context, name, hash string, view ParkedView, audit ...Audit) (AgentToken, error) {
	return s.createToken(ctx, name, hash, func(tx *gorm.DB) error {
		if err := dropExpiredViews(tx, view.Now); err != nil {
			return err
		}
		row := tokenView{IDHash: view.IDHash, SessionID: view.Session, Name: view.View.Name, Sealed: view.View.Sealed, Base: view.View.Base, ExpiresAt: view.Expires.UTC()}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("models: keeping the new token %q for its view: %w", name, err)
		}
		return nil
	}, audit)
}

// dropExpiredViews deletes the views past their time, shown or not, so an
// unseen token's sealed copy does not outlive its view.
func dropExpiredViews(tx *gorm.DB, now time.Time) error {
	if err := tx.Where("expires_at <= ?", now.UTC()).Delete(&tokenView{}).Error; err != nil {
		return fmt.Errorf("models: dropping expired token views: %w", err)
	}
	return nil
}

// TakeTokenView returns session's view with idHash and spends it: the
// first call gets the sealed token, every later one (on any replica) the
// same view with Sealed "". A view of another session, or an unknown or
// expired one, is ErrNotFound. open, called with the sealed token before
// the view is spent, says whether the caller can show it: when it fails,
// its error is returned and the view is left for a replica that can (one
// with the right secret key), rather than spent on an error page.
func (s *Store) TakeTokenView(ctx context.Context, idHash string, session int64, now time.Time, open func(sealed string) error) (TokenView, error) {
	var out TokenView
	// Its own statement: the take below rolls back when it finds nothing.
	if err := dropExpiredViews(s.w.WithContext(ctx), now); err != nil {
		return TokenView{}, err
	}
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row tokenView
		err := tx.Where("id_hash = ? AND session_id = ? AND expires_at > ?", idHash, session, now.UTC()).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		out = TokenView{Name: row.Name, Base: row.Base}
		if row.Sealed != "" && row.ShownAt == nil {
			if err := open(row.Sealed); err != nil {
				return &unopenedError{err}
			}
		}
		res := tx.Model(&tokenView{}).Where("id_hash = ? AND shown_at IS NULL", idHash).
			Updates(map[string]any{"sealed": "", "shown_at": now.UTC()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			out.Sealed = row.Sealed
		}
		return nil
	})
	var unopened *unopenedError
	if errors.As(err, &unopened) {
		return TokenView{}, unopened.err
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return TokenView{}, fmt.Errorf("models: reading a new token's view: %w", err)
	}
	return out, err
}

// unopenedError carries open's error out of TakeTokenView's transaction
// as it is.
type unopenedError struct{ err error }

func (e *unopenedError) Error() string { return e.err.Error() }
