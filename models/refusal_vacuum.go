package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// SQLite never shrinks its file on its own: pages a purge frees are kept
// for reuse. With auto_vacuum=INCREMENTAL the purge can hand them back in
// short steps (reclaimSpace); the mode can only be chosen before the first
// table exists, or by rewriting the whole file with VACUUM. New databases
// get it (openSQLite sets auto_vacuum=incremental on a new, empty file
// before the first table exists); an older database keeps working without it, and
// the purge's log line says how to convert it once (docs/USER-GUIDE.md).
// PostgreSQL's autovacuum does this job on its own.

const autoVacuumIncremental = 2 // PRAGMA auto_vacuum's value for INCREMENTAL

// vacuumStepPages is how many free pages one step returns (8 MB at 4 KB
// pages): each step is a short write transaction.
const vacuumStepPages = 2000

func isSQLite(db *gorm.DB) bool { return db.Dialector.Name() == "sqlite" }

// reclaimSpace returns free pages to the file system, a step at a time,
// when the database was created with incremental vacuum.
func (s *Store) reclaimSpace(ctx context.Context) error {
	db := s.w.WithContext(ctx)
	if !isSQLite(db) {
		return nil
	}
	var mode int
	if err := db.Raw("PRAGMA auto_vacuum").Scan(&mode).Error; err != nil || mode != autoVacuumIncremental {
		return err
	}
	for {
		var free int64
		if err := db.Raw("PRAGMA freelist_count").Scan(&free).Error; err != nil {
			return err
		}
		if free == 0 {
			return nil
		}
		// The pragma frees one page per step of its statement: read its
		// rows to the end, or it frees a single page.
		rows, err := db.Raw(fmt.Sprintf("PRAGMA incremental_vacuum(%d)", vacuumStepPages)).Rows()
		if err != nil {
			return fmt.Errorf("reclaiming free space: %w", err)
		}
		for rows.Next() {
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reclaiming free space: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// FreeSpace says how much of the database file is free pages, and whether
// purges give them back (incremental vacuum) or they wait for a one-time
// conversion. It is zero and true on PostgreSQL.
func (s *Store) FreeSpace(ctx context.Context) (bytes int64, reclaimed bool, err error) {
	db := s.r.WithContext(ctx)
	if !isSQLite(db) {
		return 0, true, nil
	}
	var free, size, mode int64
	for _, p := range []struct {
		pragma string
		v      *int64
	}{{"freelist_count", &free}, {"page_size", &size}, {"auto_vacuum", &mode}} {
		if err := db.Raw("PRAGMA " + p.pragma).Scan(p.v).Error; err != nil {
			return 0, false, err
		}
	}
	return free * size, mode == autoVacuumIncremental, nil
}
