package models

import (
	"context"
	"time"
)

// setupLink is a one-time first-run link `console serve` printed, kept as a
// hash: every replica behind a load balancer must accept the link any one
// of them printed, so it cannot live in the process. The link stops
// working when the first admin exists (CreateFirstAdmin refuses then); the
// rows are then marked used rather than deleted, so every replica can tell
// a used link ("already used — sign in") from a wrong one.
type setupLink struct {
	Hash      string    `gorm:"primaryKey"`
	CreatedAt time.Time `gorm:"not null"`
	UsedAt    *time.Time
}

func (setupLink) TableName() string { return "setup_links" }

// AddSetupLink records the hash of a setup link a process printed.
func (s *Store) AddSetupLink(ctx context.Context, hash string) error {
	return s.w.WithContext(ctx).Exec("INSERT INTO setup_links (hash, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING", hash, time.Now().UTC()).Error
}

// SetupLinkExists reports whether a setup link with hash was printed and
// not used up.
func (s *Store) SetupLinkExists(ctx context.Context, hash string) (bool, error) {
	var n int64
	err := s.r.WithContext(ctx).Model(&setupLink{}).Where("hash = ? AND used_at IS NULL", hash).Count(&n).Error
	return n > 0, err
}

// SetupLinkUsed reports whether a setup link with hash was printed by
// some replica and has been used up.
func (s *Store) SetupLinkUsed(ctx context.Context, hash string) (bool, error) {
	var n int64
	err := s.r.WithContext(ctx).Model(&setupLink{}).Where("hash = ? AND used_at IS NOT NULL", hash).Count(&n).Error
	return n > 0, err
}

// EndSetupLinks ends every setup link: first-run setup is over. The rows
// stay, marked used, so a second visit is told the link was used.
func (s *Store) EndSetupLinks(ctx context.Context) error {
	return s.w.WithContext(ctx).Exec("UPDATE setup_links SET used_at = ? WHERE used_at IS NULL", time.Now().UTC()).Error
}
