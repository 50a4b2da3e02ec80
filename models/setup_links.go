package models

import (
	"context"
	"time"
)

// setupLink is a one-time first-run link `console serve` printed, kept as a
// hash: every replica behind a load balancer must accept the link any one
// of them printed, so it cannot live in the process. The link stops
// working when the first admin exists (CreateFirstAdmin refuses then), and
// the rows are deleted at that point.
type setupLink struct {
	Hash      string    `gorm:"primaryKey"`
	CreatedAt time.Time `gorm:"not null"`
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
	err := s.r.WithContext(ctx).Model(&setupLink{}).Where("hash = ?", hash).Count(&n).Error
	return n > 0, err
}

// DeleteSetupLinks ends every setup link: first-run setup is over.
func (s *Store) DeleteSetupLinks(ctx context.Context) error {
	return s.w.WithContext(ctx).Exec("DELETE FROM setup_links").Error
}
