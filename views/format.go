package views

import (
	"fmt"
	"net/http"
	"time"
)

func statusText(status int) string { return fmt.Sprintf("%d %s", status, http.StatusText(status)) }

// when prints a time the way the console shows it everywhere: UTC, to the
// second, so that support staff in different places read the same value.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// day prints a date without the time.
func day(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02")
}

// countText is "1 refused", "3 allowed".
func countText(n int, what string) string { return fmt.Sprintf("%d %s", n, what) }
