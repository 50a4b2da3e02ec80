package guard

import (
	"strconv"
	"time"
)

// FormatDuration prints a duration the way people write it, not Go's way
// (5m0s, 1h0m0s): whole minutes as hours and minutes (5m, 1h30m, 1h),
// other whole seconds as seconds (90s, 15s), anything finer as Go prints
// it (1.5s, 250ms). Parsing what it prints gives d back. Every message
// the guard writes about a duration uses it, so an admin reads the
// setting in the form they typed it.
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < 0:
		return "-" + FormatDuration(-d)
	case d%time.Minute == 0:
		h, m := d/time.Hour, (d%time.Hour)/time.Minute
		switch {
		case h == 0:
			return strconv.FormatInt(int64(m), 10) + "m"
		case m == 0:
			return strconv.FormatInt(int64(h), 10) + "h"
		}
		return strconv.FormatInt(int64(h), 10) + "h" + strconv.FormatInt(int64(m), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
