package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// minimalProxyEnv makes the test binary a minimal forward proxy process
// (TestMinimalProxyProcess), the floor TestProxyFloor compares with.
const minimalProxyEnv = "OUTBOUND_MINIMAL_PROXY"

// TestMinimalProxyProcess is not a test: run by TestProxyFloor as a child
// process with minimalProxyEnv set, it serves minimalProxy on a loopback
// port, prints "listening on http://ADDR" and runs until killed.
func TestMinimalProxyProcess(t *testing.T) {
	if os.Getenv(minimalProxyEnv) == "" {
		t.Skip("a helper process of TestProxyFloor")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", l.Addr())
	_ = http.Serve(l, minimalProxy(&http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}))
}

// TestProxyFloor measures `console proxy` against the floor: a minimal
// unguarded Go forward proxy (minimalProxy, which checks nothing and logs
// nothing), each its own process, with 64 keep-alive clients fetching 4 KB
// and 64 KB answers from one loopback server, beside the same clients
// fetching directly. The guarded proxy authenticates every request with a
// token over the store, decides, checks the address at connect time and
// writes its decision log line to a file (the process's stderr). The
// clients and the server are this process.
//
// On a machine shared with other work one measurement swings with the
// load, so it runs OUTBOUND_FLOOR_ROUNDS rounds (default 5) of
// OUTBOUND_FLOOR_SECONDS seconds (default 3) per contestant, interleaved
// (direct, minimal, guarded; the order rotates each round), and reports
// medians: req/s, the proxy process's CPU per request (utime+stime from
// /proc/PID/stat, which no other process's load inflates much), and the
// guarded/minimal ratio of each round's req/s and CPU. Target: guarded ≥
// 0.9 × minimal at both sizes. It asserts nothing about speed. Turn it on
// with OUTBOUND_LOAD=1.
func TestProxyFloor(t *testing.T) {
	bin := loadTestBinary(t)
	bodies := map[string]string{"/4k": strings.Repeat("x", 4<<10), "/64k": strings.Repeat("x", 64<<10)}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, bodies[r.URL.Path])
	}))
	defer server.Close()

	db := tempDB(t)
	t.Setenv("CONSOLE_SECRET_KEY", replicaKey)
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	// The server is on loopback, which only a literal entry unlocks.
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(server.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "token", "create", "--db", db, "floor-agent")
	token := tokenLine.FindString(r.stdout)
	if r.code != 0 || token == "" {
		t.Fatal(r)
	}
	logPath := filepath.Join(t.TempDir(), "decisions.log")
	guarded := startProcess(t, exec.Command(bin, "proxy", "--db", db, "--addr", "127.0.0.1:0"), logPath, proxyLine)
	minimalCmd := exec.Command(os.Args[0], "-test.run=^TestMinimalProxyProcess$")
	minimalCmd.Env = append(os.Environ(), minimalProxyEnv+"=1")
	minimal := startProcess(t, minimalCmd, filepath.Join(t.TempDir(), "minimal.log"), proxyLine)

	rounds := loadSetting("OUTBOUND_FLOOR_ROUNDS", 5)
	seconds := loadSetting("OUTBOUND_FLOOR_SECONDS", 3)
	type contestant struct {
		name  string
		proxy *url.URL
		pid   int
	}
	gu, _ := url.Parse(guarded.addr)
	gu.User = url.UserPassword("agent", token)
	mu, _ := url.Parse(minimal.addr)
	all := []contestant{{"direct", nil, 0}, {"minimal", mu, minimal.pid}, {"guarded", gu, guarded.pid}}
	for _, size := range []string{"/4k", "/64k"} {
		reqs := map[string][]float64{}
		cpus := map[string][]float64{}
		var ratios, cpuRatios []float64
		for round := range rounds {
			got := map[string]floorRun{}
			for i := range all {
				c := all[(i+round)%len(all)]
				got[c.name] = floorOnce(t, server.URL+size, c.proxy, c.pid, time.Duration(seconds)*time.Second)
				reqs[c.name] = append(reqs[c.name], got[c.name].perSecond)
				cpus[c.name] = append(cpus[c.name], got[c.name].cpuPerRequest)
			}
			ratios = append(ratios, got["guarded"].perSecond/got["minimal"].perSecond)
			cpuRatios = append(cpuRatios, got["minimal"].cpuPerRequest/got["guarded"].cpuPerRequest)
		}
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("%s, %d rounds of %d s, 64 keep-alive clients, medians (all rounds): direct %.0f req/s %v; minimal %.0f req/s %v, %.1f proxy-cpu-µs/req; guarded %.0f req/s %v, %.1f proxy-cpu-µs/req; guarded/minimal req/s %.2f× %v; minimal/guarded CPU per request %.2f× %v; loadavg %s",
			size, rounds, seconds, median(reqs["direct"]), rounded(reqs["direct"]),
			median(reqs["minimal"]), rounded(reqs["minimal"]), median(cpus["minimal"]),
			median(reqs["guarded"]), rounded(reqs["guarded"]), median(cpus["guarded"]),
			median(ratios), rounded2(ratios), median(cpuRatios), rounded2(cpuRatios), strings.Fields(string(load))[:3])
	}
}

type floorRun struct{ perSecond, cpuPerRequest float64 }

// floorOnce runs 64 keep-alive clients against target for d, through
// proxy when it is set, and measures req/s and the CPU of process pid (if
// any) per request.
func floorOnce(t *testing.T, target string, proxy *url.URL, pid int, d time.Duration) floorRun {
	tr := &http.Transport{MaxIdleConnsPerHost: proxyBenchClients}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var pids []int
	if pid != 0 {
		pids = []int{pid}
	}
	cpu := pidsCPU(t, pids)
	start := time.Now()
	deadline := start.Add(d)
	done, err := guardtest.Load(proxyBenchClients, func() bool { return time.Now().Before(deadline) }, func() (*http.Response, error) { return client.Get(target) })
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("a request through %v failed: %v", proxy, err)
	}
	n := float64(done)
	return floorRun{perSecond: n / elapsed.Seconds(), cpuPerRequest: float64((pidsCPU(t, pids) - cpu).Microseconds()) / n}
}

// startProcess starts cmd with its stderr in the file logPath and waits
// for the line whose first group is its address; it is killed when the
// test ends.
func startProcess(t *testing.T, cmd *exec.Cmd, logPath string, addrLine *regexp.Regexp) *replicaProc {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r, err := os.Open(logPath)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := addrLine.FindStringSubmatch(sc.Text()); m != nil {
				r.Close()
				return &replicaProc{addr: m[1], pid: cmd.Process.Pid}
			}
		}
		r.Close()
	}
	out, _ := os.ReadFile(logPath)
	t.Fatalf("%s did not print its address within 30s:\n%s", cmd.Path, out)
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}

func rounded2(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%.2f", x)
	}
	return out
}
