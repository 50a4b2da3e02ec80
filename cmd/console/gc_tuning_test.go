package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGCRaisesTheTargetUnlessTheEnvironmentSetsIt(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })

	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	if p, l := tuneGC(env(nil)); p != serverGCPercent || l != serverMemoryLimit {
		t.Errorf("tuneGC without GOGC and GOMEMLIMIT = %d%%, %d bytes; want %d%%, %d", p, l, serverGCPercent, serverMemoryLimit)
	}
	// GOGC and GOMEMLIMIT were applied by the runtime at start; tuneGC
	// leaves what they set alone.
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	if p, l := tuneGC(env(map[string]string{"GOGC": "100", "GOMEMLIMIT": "off"})); p != 100 || l != math.MaxInt64 {
		t.Errorf("tuneGC with GOGC=100 GOMEMLIMIT=off = %d%%, %d bytes; want the runtime's 100%% and no limit left in force", p, l)
	}
}
