package main

import (
	"errors"
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGCRaisesTheTargetUnlessTheEnvironmentSetsIt(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })

	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	if p, l := tuneGC(env(nil), 0); p != serverGCPercent || l != serverMemoryLimit {
		t.Errorf("tuneGC without GOGC and GOMEMLIMIT = %d%%, %d bytes; want %d%%, %d", p, l, serverGCPercent, serverMemoryLimit)
	}
	// A container of 512 MiB: three quarters of it, not 768 MiB.
	if _, l := tuneGC(env(nil), 512<<20); l != 384<<20 {
		t.Errorf("in a 512 MiB container the limit is %d bytes, want %d", l, 384<<20)
	}
	// A big container keeps the default.
	if _, l := tuneGC(env(nil), 8<<30); l != serverMemoryLimit {
		t.Errorf("in an 8 GiB container the limit is %d bytes, want %d", l, serverMemoryLimit)
	}
	// GOGC and GOMEMLIMIT were applied by the runtime at start; tuneGC
	// leaves what they set alone.
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	if p, l := tuneGC(env(map[string]string{"GOGC": "100", "GOMEMLIMIT": "off"}), 512<<20); p != 100 || l != math.MaxInt64 {
		t.Errorf("tuneGC with GOGC=100 GOMEMLIMIT=off = %d%%, %d bytes; want the runtime's 100%% and no limit left in force", p, l)
	}
}

func TestCgroupMemoryMaxReadsV2ThenV1(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, errors.New("no such file")
		}
	}
	for name, tt := range map[string]struct {
		files map[string]string
		want  int64
	}{
		"v2 limit":       {map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, 512 << 20},
		"v2 unlimited":   {map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0},
		"v1 limit":       {map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		"v1 unlimited":   {map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		"no cgroup file": {nil, 0},
	} {
		if got := cgroupMemoryMax(files(tt.files)); got != tt.want {
			t.Errorf("%s: %d, want %d", name, got, tt.want)
		}
	}
}
