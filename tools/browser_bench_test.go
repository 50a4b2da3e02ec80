package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkBrowserOpenWarm: browser_open of a local page in a
// conversation whose tab is open (the browser warm), as the agent calls
// it. Reports the median. Run with -benchtime=20x.
func BenchmarkBrowserOpenWarm(b *testing.B) {
	e, _ := newVendorEnv(b)
	a := e.agent(b, "bench")
	if res := a.open("http://shop.example.com/list"); !res.OK() {
		b.Fatal(res.Text)
	}
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if res := a.open("http://shop.example.com/list"); !res.OK() {
			b.Fatal(res.Text)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
}

// BenchmarkBrowserTenConversations: ten conversations open a page at
// once; reports the time they took, the browser's memory (RSS of this
// process's Chromium processes) before, with the ten tabs, and after
// they close.
func BenchmarkBrowserTenConversations(b *testing.B) {
	e, _ := newVendorEnv(b)
	// Ten new contexts at once on a small machine: the numbers, not the
	// default timeout, are what this measures.
	e.settings(func(s *Settings) { s.Guard.Timeout = 2 * time.Minute })
	warm := e.agent(b, "warm")
	if res := warm.open("http://shop.example.com/"); !res.OK() {
		b.Fatal(res.Text)
	}
	e.tabs.Close() // the browser stays up, with no tab
	e.tabs = NewTabs(e.shooter, e.tabs.settings)
	e.reg = NewRegistry(e.guard)
	e.reg.AddSource(e.tabs)
	time.Sleep(2 * time.Second)
	before := chromiumRSS()
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		start := time.Now()
		errs := make(chan string, 10)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := e.agent(b, fmt.Sprintf("c%d", i))
				if res := a.open("http://shop.example.com/product"); !res.OK() {
					errs <- res.Text
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			b.Fatal(msg)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ten-opens-ms")
		with := chromiumRSS()
		e.tabs.Close()
		time.Sleep(3 * time.Second)
		after := chromiumRSS()
		b.ReportMetric(float64(before)/1024, "rss-before-MB")
		b.ReportMetric(float64(with)/1024, "rss-10-tabs-MB")
		b.ReportMetric(float64(after)/1024, "rss-after-close-MB")
		e.tabs = NewTabs(e.shooter, e.tabs.settings)
		e.reg = NewRegistry(e.guard)
		e.reg.AddSource(e.tabs)
	}
}

// chromiumRSS sums the resident memory, in KiB, of the Chromium
// processes descended from this one (not the driver's node).
func chromiumRSS() int {
	parent := map[int]int{}
	comm := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		parent[pid], _ = strconv.Atoi(fields[1])
		comm[pid] = s[strings.IndexByte(s, '(')+1 : i]
	}
	self := os.Getpid()
	descends := func(pid int) bool {
		for n := 0; pid > 1 && n < 64; n++ {
			if pid = parent[pid]; pid == self {
				return true
			}
		}
		return false
	}
	total := 0
	for pid, name := range comm {
		if !strings.Contains(name, "chrom") || !descends(pid) {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				total += kb
			}
		}
	}
	return total
}
