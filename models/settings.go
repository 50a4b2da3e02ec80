package models

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Setting is one key/value pair of console configuration. Values are opaque
// strings here; the packages that use them parse and validate them.
type Setting struct {
	Key       string    `gorm:"primaryKey;column:key"`
	Value     string    `gorm:"not null;default:''"`
	UpdatedAt time.Time `gorm:"not null"`
	UpdatedBy string    `gorm:"not null;default:''"`
}

// Settings returns all stored settings as a map. Keys never set are absent,
// so callers apply their own defaults.
func (s *Store) Settings(ctx context.Context) (map[string]string, error) {
	var rows []Setting
	if err := s.r.WithContext(ctx).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: reading settings: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Value
	}
	return out, nil
}

// SetSettings creates or overwrites each key in values, in one transaction
// with the revision bump, recording by as the author. It returns the new
// revision.
func (s *Store) SetSettings(ctx context.Context, expectRevision int64, by string, values map[string]string, audit ...Audit) (int64, error) {
	if len(values) == 0 {
		return 0, fmt.Errorf("models: no settings to save; pass at least one key")
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		if k == "" {
			return 0, fmt.Errorf("models: setting with an empty key (value %q); every setting needs a name", values[k])
		}
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic statement order, easier to reason about
	now := time.Now().UTC()
	rows := make([]Setting, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, Setting{Key: k, Value: values[k], UpdatedAt: now, UpdatedBy: by})
	}
	return s.mutateConfig(ctx, SectionSettings, expectRevision, audit, func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "key"}},
			DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at", "updated_by"}),
		}).Create(&rows).Error
		if err != nil {
			return fmt.Errorf("models: saving settings %v: %w", keys, err)
		}
		return nil
	})
}
