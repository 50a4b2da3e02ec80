package models

import (
	"fmt"

	"gorm.io/gorm"
)

// refusalHost is one distinct refused host. A host-substring search that
// matches few hosts would otherwise read the whole host index (every
// refusal's host) to find them; this table holds each host once, so the
// substring is matched against thousands of names instead of a million
// rows, and the refusals are then fetched by exact host.
type refusalHost struct {
	Host string `gorm:"primaryKey"`
}

func (refusalHost) TableName() string { return "refusal_hosts" }

var hostInsert = rowsStmt{head: "INSERT INTO refusal_hosts (host) VALUES ", tail: " ON CONFLICT DO NOTHING", cols: 1}

// recordHosts adds the hosts of rows, inside the insert's transaction.
func recordHosts(tx sqlTx, rows []Refusal) error {
	seen := make(map[string]bool, len(rows))
	hosts := make([]string, 0, len(rows))
	for i := range rows {
		if h := rows[i].Host; !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	if tx.dialect == "postgres" {
		return pgRecordHosts(tx, hosts)
	}
	args := make([]any, len(hosts))
	for i, h := range hosts {
		args[i] = h
	}
	return hostInsert.exec(tx, args)
}

// backfillRefusalHosts fills the table once for a database that has
// refusals from before it existed.
func backfillRefusalHosts(db *gorm.DB) error {
	var have bool
	if err := db.Raw("SELECT EXISTS (SELECT 1 FROM refusal_hosts)").Scan(&have).Error; err != nil || have {
		return err
	}
	// "WHERE true" is SQLite's way to tell its parser that ON CONFLICT
	// belongs to the INSERT, not to a join in the SELECT.
	if err := db.Exec("INSERT INTO refusal_hosts (host) SELECT DISTINCT host FROM refusals WHERE true ON CONFLICT DO NOTHING").Error; err != nil {
		return fmt.Errorf("filling the refused-host list: %w", err)
	}
	return nil
}

// maxHostMatches bounds the hosts a substring may match before the search
// falls back to the host index; past it, the IN list would cost more.
const maxHostMatches = 500

// hostsMatching returns the refused hosts containing sub, and false when
// more than maxHostMatches match.
func hostsMatching(db *gorm.DB, sub string) ([]string, bool, error) {
	return hostsMatchingUpTo(db, sub, maxHostMatches)
}

// hostsMatchingUpTo returns the refused hosts containing sub, and false
// when more than limit match.
func hostsMatchingUpTo(db *gorm.DB, sub string, limit int) ([]string, bool, error) {
	var hosts []string
	err := db.Table("refusal_hosts").Where(hostContains, containsPattern(sub)).
		Limit(limit+1).Pluck("host", &hosts).Error
	if err != nil || len(hosts) > limit {
		return nil, false, err
	}
	return hosts, true, nil
}
