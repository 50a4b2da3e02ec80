package main

import "runtime/debug"

// serverGCPercent is the garbage collector's target when GOGC is not set.
//
// Why not Go's default of 100: a console or proxy keeps a small live heap
// (tens of MB) and allocates for every request it answers, so at 100 the
// collector runs many times a second under agent load. Measured on the
// 2-core test machine with the refusal log at rate (TestIngestLoad),
// collection and the allocator's assists were a fifth of the serving
// process's CPU, and 400 cut the CPU per record from 204 to 150 µs. The
// price is a peak heap up to five times the live one, a few hundred MB at
// most, which GOMEMLIMIT bounds where memory is tight (the runtime then
// collects sooner as the limit nears). GOGC set in the environment wins, as
// Go's documentation promises its users.
const serverGCPercent = 400

// tuneGC applies serverGCPercent unless the environment sets GOGC, and
// returns the percent in force.
func tuneGC(getenv func(string) string) int {
	if v := getenv("GOGC"); v != "" {
		old := debug.SetGCPercent(-1)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(serverGCPercent)
	return serverGCPercent
}
