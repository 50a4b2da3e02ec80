package models

import (
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// Rows written before refusals had a kind stored their lists as joined
// text (addresses comma-separated, redirects one per line), had no typed
// remedy, and spelt two tools by short names. The kind column doubles as
// the marker: a row with kind '' is from before, and migrating it sets its
// kind, so the check on every open is one index probe and the migration
// runs once however many processes open the store together.

// legacyNetworkReasons are the reasons of network failures, not refusals.
var legacyNetworkReasons = []string{"dns", "connect", "timeout", "browser"}

// legacyTools maps the old tool spellings to the one each tool has now.
var legacyTools = map[string]string{"screenshot": "take_screenshot", "integration": "call_integration"}

// legacyRemedySQL derives the remedy an old row's reason implies. The
// entry is the literal one that admits the host on its port, written as
// the allowlist writes it (default ports left out, IPv6 in brackets).
const legacyRemedySQL = `UPDATE refusals SET
	remedy_kind = CASE
		WHEN reason IN ('not_allowlisted', 'port', 'internal_name', 'internal_address', 'connect_check') AND host <> '' THEN 'add_entry'
		WHEN reason IN ('declared_size', 'streamed_size', 'redirects', 'timeout', 'reads_per_turn') THEN 'change_setting'
		ELSE '' END,
	remedy_value = CASE
		WHEN reason IN ('not_allowlisted', 'port', 'internal_name', 'internal_address', 'connect_check') AND host <> '' THEN
			CASE WHEN port IN (0, 80, 443) THEN host
				WHEN instr(host, ':') > 0 THEN '[' || host || ']:' || port
				ELSE host || ':' || port END
		WHEN reason IN ('declared_size', 'streamed_size') THEN 'max_bytes'
		WHEN reason IN ('redirects', 'timeout', 'reads_per_turn') THEN reason
		ELSE '' END
	WHERE kind = '' AND remedy_kind = ''`

// migrateLegacyRefusals brings rows from before the kind column to the
// current form, in one transaction.
func migrateLegacyRefusals(db *gorm.DB) error {
	var legacy bool
	if err := db.Raw("SELECT EXISTS (SELECT 1 FROM refusals WHERE kind = '')").Scan(&legacy).Error; err != nil || !legacy {
		return err
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		for old, now := range legacyTools {
			if err := tx.Exec("UPDATE refusals SET tool = ? WHERE kind = '' AND tool = ?", now, old).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec(legacyRemedySQL).Error; err != nil {
			return err
		}
		// Address lists of plain IP text become JSON arrays in SQL: those
		// characters need no escaping. Anything else is done row by row.
		if err := tx.Exec(`UPDATE refusals SET addresses = '["' || replace(addresses, ',', '","') || '"]'
			WHERE kind = '' AND addresses <> '' AND addresses NOT LIKE '[%' AND addresses NOT GLOB '*[^0-9A-Fa-f.:,]*'`).Error; err != nil {
			return err
		}
		if err := convertLegacyLists(tx); err != nil {
			return err
		}
		return tx.Exec("UPDATE refusals SET kind = CASE WHEN reason IN ? THEN 'network' ELSE 'policy' END WHERE kind = ''", legacyNetworkReasons).Error
	})
	if err != nil {
		return fmt.Errorf("migrating refusals from before the kind column: %w", err)
	}
	return nil
}

// legacyListRow is an old row whose lists are still joined text.
type legacyListRow struct {
	ID        int64
	Addresses string
	Redirects string
}

// convertLegacyLists rewrites the joined lists the SQL step left: redirect
// chains, and address lists with unusual characters.
func convertLegacyLists(tx *gorm.DB) error {
	var after int64
	for {
		var rows []legacyListRow
		err := tx.Raw(`SELECT id, addresses, redirects FROM refusals WHERE kind = '' AND id > ? AND
			((addresses <> '' AND addresses NOT LIKE '[%') OR (redirects <> '' AND redirects NOT LIKE '[%'))
			ORDER BY id LIMIT 1000`, after).Scan(&rows).Error
		if err != nil || len(rows) == 0 {
			return err
		}
		for _, r := range rows {
			addrs, err := legacyList(r.Addresses, ",")
			if err != nil {
				return err
			}
			redirects, err := legacyList(r.Redirects, "\n")
			if err != nil {
				return err
			}
			if err := tx.Exec("UPDATE refusals SET addresses = ?, redirects = ? WHERE id = ?", addrs, redirects, r.ID).Error; err != nil {
				return err
			}
		}
		after = rows[len(rows)-1].ID
	}
}

// legacyList re-encodes one old joined list, leaving a converted one as it is.
func legacyList(text, sep string) (string, error) {
	if text == "" || strings.HasPrefix(text, "[") {
		return text, nil
	}
	var items []string
	for _, p := range strings.Split(text, sep) {
		if p = strings.TrimSpace(p); p != "" {
			items = append(items, p)
		}
	}
	if len(items) == 0 {
		return "", nil
	}
	b, err := json.Marshal(items)
	return string(b), err
}
