//go:build !linux

package extract

import "time"

// threadCPUTime is not measured outside Linux; the benchmark reports the
// wall clock only.
func threadCPUTime() (time.Duration, bool) { return 0, false }
