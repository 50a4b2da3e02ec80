package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCRaisesTheTargetUnlessGOGCIsSet(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if got := tuneGC(func(string) string { return "" }); got != serverGCPercent {
		t.Errorf("tuneGC without GOGC = %d, want %d", got, serverGCPercent)
	}
	if now := debug.SetGCPercent(100); now != serverGCPercent {
		t.Errorf("the runtime's target is %d after tuneGC, want %d", now, serverGCPercent)
	}
	// GOGC in the environment was applied by the runtime at start; tuneGC
	// must leave whatever it set alone.
	if got := tuneGC(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}); got != 100 {
		t.Errorf("tuneGC with GOGC=100 = %d, want the runtime's 100 left in force", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("tuneGC with GOGC set changed the target to %d", now)
	}
}
