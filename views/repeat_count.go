package views

import (
	"strconv"
	"time"
)

// RepeatText is how a row that stands for a burst of alike refusals (the
// log's aggregation) shows how many: "×1,532"; "" for a single one.
func RepeatText(n int64) string {
	if n <= 1 {
		return ""
	}
	s := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return "×" + string(out)
}

// repeatTitle explains RepeatText where it is shown.
func repeatTitle(n int64, last time.Time) string {
	t := RepeatText(n)[len("×"):] + " alike refusals (same agent, tool, host, code and reason)"
	if !last.IsZero() {
		t += " until " + when(last)
	}
	return t + " are this one row; the decision log has a line for each. The URL shown is the first."
}
