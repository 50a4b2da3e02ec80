package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// serverGCPercent is the garbage collector's target when GOGC is not set.
//
// Why not Go's default of 100: a console or proxy keeps a small live heap
// (tens of MB) and allocates for every request it answers, so at 100 the
// collector runs many times a second under agent load. Measured on the
// 2-core test machine with the refusal log at rate (TestIngestLoad),
// collection and the allocator's assists were a fifth of the serving
// process's CPU, and 400 cut the CPU per record from 204 to 150 µs. The
// price is a heap up to five times the live one between collections.
const serverGCPercent = 400

// serverMemoryLimit is the soft memory limit when GOMEMLIMIT is not set:
// near it the collector runs as often as it must, whatever the percent.
// Why: the live heap is small except while the log's writers hold a
// stalled database's rows (their queues are bounded at 64 MB each before
// spilling to disk), and five times that is more than a small container
// should give; the limit keeps such a stall from growing the heap past it.
// In a container with less memory than that, the limit is three quarters
// of the container's (cgroupMemoryMax).
const serverMemoryLimit = 768 << 20

// tuneGC applies serverGCPercent and the memory limit unless the
// environment sets GOGC or GOMEMLIMIT (the environment wins, as Go's
// documentation promises), and returns the percent and limit in force.
// containerMax is the container's memory limit in bytes, 0 for none.
func tuneGC(getenv func(string) string, containerMax int64) (percent int, limit int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		limit := int64(serverMemoryLimit)
		if containerMax > 0 {
			limit = min(limit, containerMax/4*3)
		}
		debug.SetMemoryLimit(limit)
	}
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// cgroupMemoryMax is the memory limit of this process's cgroup (v2's
// memory.max, or v1's memory.limit_in_bytes), or 0 when there is none or
// it cannot be read.
func cgroupMemoryMax(readFile func(string) ([]byte, error)) int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := readFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's "no limit"
			return 0
		}
		return n
	}
	return 0
}

func tuneGCForThisProcess() { tuneGC(os.Getenv, cgroupMemoryMax(os.ReadFile)) }
