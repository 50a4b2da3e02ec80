package models

import (
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// The counters' periods are UTC hours: a session in another zone (the
// server's default, or one the URL names) would truncate times to its own
// hours. Every session of the store works in UTC.
func TestPostgresSessionsWorkInUTC(t *testing.T) {
	dsn := pgtest.Schema(t) + "&timezone=Asia%2FKolkata"
	s, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var zone string
	var hour time.Time
	if err := s.r.Raw("SELECT current_setting('TimeZone')").Scan(&zone).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.r.Raw("SELECT date_trunc('hour', timestamptz '2026-12-01 10:45:00+00')").Scan(&hour).Error; err != nil {
		t.Fatal(err)
	}
	if zone != "UTC" || !hour.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("session zone %q, 10:45 UTC truncated to %v; want UTC and 10:00 UTC", zone, hour)
	}
}
