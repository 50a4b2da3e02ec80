package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// loadEnv turns the ingest load test on: it runs the console binary for a
// minute or more per store and is meant for measuring, not for every run.
const loadEnv = "OUTBOUND_LOAD"

// loadSetting reads an optional positive integer knob of the load test.
func loadSetting(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestIngestLoad measures the refusal log at rate through the real
// processes: `console serve` (the JSON API) and `console proxy`, built
// from this tree and run as child processes on SQLite and on PostgreSQL
// (OUTBOUND_TEST_POSTGRES). OUTBOUND_LOAD_CLIENTS keep-alive clients
// (default 32) send as fast as they are answered for OUTBOUND_LOAD_SECONDS
// (default 10), or at OUTBOUND_LOAD_RATE requests a second in all (the
// page's p95 "while the log takes 10,000 a second" is measured at that
// rate, not on a machine the load generator saturates on purpose), every request a refused URL no other request uses (a
// distinct path, on one of OUTBOUND_LOAD_HOSTS hosts, default 5000; set it
// to a number above the requests sent for a host per request), so no
// aggregation of identical refusals can shorten the work. Meanwhile an
// admin loads the refusal log page every 100 ms from another `console
// serve` on the same store.
//
// It reports, per store and path: requests answered per second during
// the load; rows committed per second (every answered refusal counted as
// a row in the store, from the first request until the last row was
// committed, so a writer that falls behind lowers it); the CPU time spent
// per record by the serving process (utime+stime from /proc/PID/stat, so
// the load generator in this process is not counted) and, on PostgreSQL,
// by the server (every backend's, pgtest.ServerCPU), and of that the log
// page's queries (its console's backends); the log page's p95; the
// requests' latencies (loadGen.latencies); and the slowest second. It
// asserts only what must hold at any speed: every answered refusal is a
// row. Turn it on with OUTBOUND_LOAD=1.
func TestIngestLoad(t *testing.T) {
	bin := loadTestBinary(t)
	t.Setenv("CONSOLE_SECRET_KEY", replicaKey)
	// The load generator collects as seldom as the console does (see
	// serverGCPercent): its CPU is taken from the processes it measures.
	defer debug.SetGCPercent(debug.SetGCPercent(serverGCPercent))
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return tempDB(t) },
		"postgres": func(t *testing.T) string { return pgtest.Schema(t) },
	}
	for _, store := range []string{"sqlite", "postgres"} {
		for _, path := range []string{"api", "proxy"} {
			t.Run(store+"/"+path, func(t *testing.T) { ingestLoad(t, bin, stores[store](t), path) })
		}
	}
}

func ingestLoad(t *testing.T, bin, db, path string) {
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLIWithStdin(t, "correct horse battery\n", "user", "add", "--role", "admin", "--db", db, "ada"); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "token", "create", "--db", db, "load-agent")
	token := tokenLine.FindString(r.stdout)
	if r.code != 0 || token == "" {
		t.Fatal(r)
	}
	if os.Getenv("OUTBOUND_LOAD_NO_TRIGRAM") != "" && models.IsPostgres(db) {
		// The trade docs/USER-GUIDE.md describes: without the search
		// text's trigram index every refusal costs PostgreSQL less, and
		// searches read their windows.
		pgtest.Exec(t, db, "DROP INDEX IF EXISTS idx_refusal_texts_trgm")
	}
	// The log page comes from a console of its own (a second replica on
	// the same store), so the serving process's CPU is the records' alone.
	// On PostgreSQL its connections are named, so the CPU of their
	// backends (the page's queries) is told apart from the writer's.
	const pageApp = "outbound-load-log-page"
	pageDB := db
	if models.IsPostgres(db) {
		pageDB = pgtest.WithApplicationName(db, pageApp)
	}
	console := startReplica(t, bin, pageDB, serveLine, "serve")
	var served *replicaProc
	var newSender func() func(string) error
	// The serving process's decision log (a JSON line per request) goes to
	// a file, as a service's stderr does, not through a pipe this process
	// would have to read while it generates the load.
	servedLog := filepath.Join(t.TempDir(), "served.log")
	switch path {
	case "api":
		served = startProcess(t, exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0"), servedLog, serveLine)
		newSender = apiRefusal(served.addr, token)
	case "proxy":
		served = startProcess(t, exec.Command(bin, "proxy", "--db", db, "--addr", "127.0.0.1:0"), servedLog, proxyLine)
		newSender = proxyRefusal(served.addr, token)
	}
	procs := []*replicaProc{served}
	ada := newConsoleClient(t)
	login := ada.form(console.addr+"/login", `form[action="/login"]`)
	login.Set("name", "ada")
	login.Set("password", "correct horse battery")
	if code := ada.post(console.addr+"/login", login); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d\n%s", code, console.log())
	}
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	clients := loadSetting("OUTBOUND_LOAD_CLIENTS", 32)
	seconds := loadSetting("OUTBOUND_LOAD_SECONDS", 10)
	hosts := loadSetting("OUTBOUND_LOAD_HOSTS", 5000)
	rate := loadSetting("OUTBOUND_LOAD_RATE", 0) // 0: as fast as answered

	// The page, loaded by an admin every 100 ms during the load.
	loadPage := func() (time.Duration, error) {
		start := time.Now()
		resp, err := ada.client.Get(console.addr + "/refusals")
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET /refusals: %s", resp.Status)
		}
		return time.Since(start), nil
	}
	// stop ends the page loads and the sampler: at once after the load,
	// or when the test fails before that.
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopAll := func() { stopOnce.Do(func() { close(stop) }) }
	defer stopAll()
	var pages []time.Duration
	var pageErr atomic.Value
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			d, err := loadPage()
			if err != nil {
				pageErr.CompareAndSwap(nil, err.Error())
				continue
			}
			pages = append(pages, d)
		}
	})

	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.pid
	}
	// On PostgreSQL the server's backends write the rows: their CPU is
	// the store's share of each record (the log page's queries included).
	storeCPU := func() time.Duration { d, _ := pgtest.ServerCPU(db); return d }
	pageCPU := func() map[int]time.Duration {
		if !models.IsPostgres(db) {
			return nil
		}
		m, err := pgtest.BackendsCPU(db, pageApp)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cpu0, store0, page0 := pidsCPU(t, pids), storeCPU(), pageCPU()
	gen0 := pidsCPU(t, []int{os.Getpid()})
	// The whole machine's busy time too: what none of the measured
	// processes used (kernel threads writing the database's files, other
	// tenants of a virtual machine) is what a slow run had less of.
	machine0, pageConsole0 := machineBusy(), pidsCPU(t, []int{console.pid})
	traffic := startLoad(clients, rate, hosts, time.Duration(seconds)*time.Second, newSender)
	start := traffic.start
	// Every 250 ms: what was answered and committed, and the CPU the
	// serving process, PostgreSQL and the machine had used, so a run that
	// falls behind says when and what was short of CPU then.
	var timeline []loadSample
	servingCPU := func() time.Duration { d, _ := readPidsCPU(pids); return d } // not t.Fatal: another goroutine
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			// The moment and the answers first, then what was committed
			// by then: read the other way round, the count's query time
			// would show as rows not yet committed.
			at, a := time.Since(start), traffic.answered.Load()
			n, _ := store.CountRefusalsSince(context.Background(), time.Time{})
			timeline = append(timeline, loadSample{at: at, answered: a, committed: n,
				serving: servingCPU(), store: storeCPU(), machine: machineBusy()})
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	loadTime := traffic.wait()
	want := traffic.answered.Load()
	var have int64
	for {
		if have, err = store.CountRefusalsSince(context.Background(), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if have >= want || time.Since(start) > loadTime+60*time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	committed := time.Since(start)
	cpu, storeUsed := pidsCPU(t, pids)-cpu0, storeCPU()-store0
	var pageUsed time.Duration
	for pid, d := range pageCPU() {
		pageUsed += d - page0[pid] // a backend new since the start counts whole
	}
	gen := pidsCPU(t, []int{os.Getpid()}) - gen0
	machine, pageConsole := machineBusy()-machine0, pidsCPU(t, []int{console.pid})-pageConsole0
	other := max(0, machine-cpu-storeUsed-gen-pageConsole) // below a tick of 10 ms a process is noise
	stopAll()
	reader.Wait()
	<-sampled
	if msg := traffic.failed.Load(); msg != nil {
		t.Fatalf("a request failed: %v", msg)
	}
	if msg := pageErr.Load(); msg != nil {
		t.Errorf("the log page failed during the load: %v", msg)
	}
	if have != want {
		t.Errorf("%d refusals were answered, %d are in the store 60 s after the load", want, have)
	}
	// The same page on the same rows with the load over, for comparison.
	var idle []time.Duration
	for range 40 {
		d, err := loadPage()
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, d)
	}
	// A writer that falls behind by its queue's bound (or a batch that
	// takes StallAfter) spills rows to disk, which costs every row a write
	// and a read back: said, as the served process logged it.
	servedLines, _ := os.ReadFile(servedLog)
	spills := bytes.Count(servedLines, []byte("spilling rows to disk"))
	p95, idleP95 := percentile95(pages), percentile95(idle)
	load, _ := os.ReadFile("/proc/loadavg")
	target := "as fast as answered"
	if rate > 0 {
		target = fmt.Sprintf("target %d/s", rate)
	}
	defer t.Logf("%s", slowestSecond(timeline, traffic.deadline.Sub(start)))
	defer t.Logf("%s", traffic.latencies())
	t.Logf("%s (%s): %d refusals from %d clients over %d hosts: answered %.0f/s during %v; committed %.0f rows/s (last row %v after the last answer); serving CPU %.1f µs/record (process %.1f + PostgreSQL %.1f, of which the log page's queries %.1f; load generator %.1f µs/request); log page p95 %v over %d loads (%v after the load); spilled to disk %d times; machine busy %.2f of %d cores, %.2f of them outside the measured processes; loadavg %s",
		path, target, want, clients, min(int64(hosts), want), float64(want)/loadTime.Seconds(), loadTime.Round(time.Millisecond),
		float64(want)/committed.Seconds(), (committed - loadTime).Round(time.Millisecond),
		float64((cpu+storeUsed).Microseconds())/float64(want), float64(cpu.Microseconds())/float64(want), float64(storeUsed.Microseconds())/float64(want), float64(pageUsed.Microseconds())/float64(want),
		float64(gen.Microseconds())/float64(want), p95.Round(100*time.Microsecond), len(pages), idleP95.Round(100*time.Microsecond), spills, machine.Seconds()/committed.Seconds(), runtime.NumCPU(), other.Seconds()/committed.Seconds(), strings.Fields(string(load))[:3])
}

// apiRefusal sends fetch_url calls through the JSON API; each must be
// answered with the tool's refusal. Each client keeps its own keep-alive
// connection (see loadConn).
func apiRefusal(base, token string) func() func(target string) error {
	host := strings.TrimPrefix(base, "http://")
	return func() func(string) error {
		c := &loadConn{addr: host}
		return func(target string) error {
			body := `{"url":"` + target + `"}`
			c.req = append(c.req[:0], "POST /api/v1/tools/fetch_url HTTP/1.1\r\nHost: "...)
			c.req = append(c.req, host...)
			c.req = append(c.req, "\r\nAuthorization: Bearer "...)
			c.req = append(c.req, token...)
			c.req = append(c.req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
			c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
			c.req = append(c.req, "\r\n\r\n"...)
			c.req = append(c.req, body...)
			status, answer, err := c.roundTrip()
			if err != nil {
				return err
			}
			if status != http.StatusOK || !bytes.Contains(answer, []byte(`"code":"forbidden"`)) {
				return fmt.Errorf("the API answered %d: %.300s", status, answer)
			}
			return nil
		}
	}
}

// proxyRefusal sends GETs through the proxy; each must be refused (403).
func proxyRefusal(proxy, token string) func() func(target string) error {
	host := strings.TrimPrefix(proxy, "http://")
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("agent:"+token))
	return func() func(string) error {
		c := &loadConn{addr: host}
		return func(target string) error {
			u, err := url.Parse(target)
			if err != nil {
				return err
			}
			c.req = append(c.req[:0], "GET "...)
			c.req = append(c.req, target...)
			c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
			c.req = append(c.req, u.Host...)
			c.req = append(c.req, "\r\nProxy-Authorization: "...)
			c.req = append(c.req, auth...)
			c.req = append(c.req, "\r\n\r\n"...)
			status, answer, err := c.roundTrip()
			if err != nil {
				return err
			}
			if status != http.StatusForbidden {
				return fmt.Errorf("the proxy answered %d, want 403: %.300s", status, answer)
			}
			return nil
		}
	}
}

// loadConn is one load client's keep-alive HTTP/1.1 connection: it writes
// a request it was handed as bytes and reads the answer on the same
// goroutine. net/http's Transport hands every request between three
// goroutines (the caller's, the connection's writer and reader), and on
// this 2-core machine the load generator's CPU is taken from the servers
// it measures; a client this lean leaves them the machine.
type loadConn struct {
	addr     string
	conn     net.Conn
	deadline time.Time // the connection's, moved on when near
	br       *bufio.Reader
	req      []byte
	body     []byte
}

// roundTrip sends c.req and returns the answer's status and body. Only a
// keep-alive connection the server closed before answering anything is
// dialled again, once: a request that may have been answered is never sent
// twice (the store would then hold one row more than was answered). Every
// exchange has a deadline, so a stalled server fails the test with a
// message rather than hanging it.
func (c *loadConn) roundTrip() (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		reused := c.conn != nil
		if c.conn == nil {
			conn, err := net.DialTimeout("tcp", c.addr, 10*time.Second)
			if err != nil {
				return 0, nil, err
			}
			c.conn, c.br, c.deadline = conn, bufio.NewReaderSize(conn, 16<<10), time.Time{}
		}
		status, body, err := c.exchange()
		if err == nil {
			return status, body, nil
		}
		c.conn.Close()
		c.conn = nil
		if attempt > 0 || !reused || !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
	}
}

func (c *loadConn) exchange() (int, []byte, error) {
	// A deadline at least 15 s away, moved rarely: arming the runtime's
	// timer on every exchange cost the generator a fifth of its CPU.
	if now := time.Now(); c.deadline.Sub(now) < 15*time.Second {
		c.deadline = now.Add(30 * time.Second)
		if err := c.conn.SetDeadline(c.deadline); err != nil {
			return 0, nil, err
		}
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, nil, err // io.EOF: closed before any byte of an answer
	}
	buf := bytes.NewBuffer(c.body[:0])
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	c.body = buf.Bytes()
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.Close {
		c.conn.Close()
		c.conn = nil
	}
	return resp.StatusCode, c.body, nil
}

// loadSample is what the load test read at one moment of a run.
type loadSample struct {
	at                      time.Duration // since the load began
	answered, committed     int64
	serving, store, machine time.Duration // CPU used so far
}

// slowestSecond describes the second of the load in which the fewest
// requests were answered, and the moment the writer was furthest behind,
// both after the first two seconds (when every run is slowest: new
// connections, cold caches) and apart from them: a run that misses its
// target says whether it was a pause or a slow stretch, and which process
// had the CPU then.
func slowestSecond(timeline []loadSample, sending time.Duration) string {
	const span = 4 // samples 250 ms apart
	const warm = 2 * time.Second
	// A rate, not a count: a sampler that is late (in exactly the slow
	// stretches) spans more than a second between its samples.
	rate := func(i int) float64 {
		a, b := timeline[i-span], timeline[i]
		return float64(b.answered-a.answered) / (b.at - a.at).Seconds()
	}
	second := func(i int) string {
		a, b := timeline[i-span], timeline[i]
		wall := (b.at - a.at).Seconds()
		return fmt.Sprintf("%.0f answered/s from %v to %v (serving process %.2f cores, PostgreSQL %.2f, machine %.2f)",
			rate(i), a.at.Round(10*time.Millisecond), b.at.Round(10*time.Millisecond),
			(b.serving-a.serving).Seconds()/wall, (b.store-a.store).Seconds()/wall, (b.machine-a.machine).Seconds()/wall)
	}
	worst := -1
	// Seconds within the sending, after the first two.
	for i := span; i < len(timeline) && timeline[i].at <= sending; i++ {
		if timeline[i-span].at < warm {
			continue
		}
		if worst < 0 || rate(i) < rate(worst) {
			worst = i
		}
	}
	var behind [2]int64 // before and after warm
	var at [2]time.Duration
	for _, s := range timeline {
		k := 0
		if s.at >= warm {
			k = 1
		}
		if d := s.answered - s.committed; d > behind[k] {
			behind[k], at[k] = d, s.at
		}
	}
	out := fmt.Sprintf("rows answered and not yet committed: at most %d (at %v) in the first %v, %d (at %v) after",
		behind[0], at[0].Round(10*time.Millisecond), warm, behind[1], at[1].Round(10*time.Millisecond))
	if len(timeline) > span {
		out = "first second: " + second(span) + "; " + out
	}
	if worst >= 0 {
		out = "slowest second after the first " + warm.String() + ": " + second(worst) + "; " + out
	}
	return out
}

// pidsCPU is the CPU time (user and system) the processes have used.
func pidsCPU(t *testing.T, pids []int) time.Duration {
	d, err := readPidsCPU(pids)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readPidsCPU(pids []int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, fmt.Errorf("CPU time of process %d: %v", pid, err)
		}
		// Fields after the command (which is in parentheses and may hold
		// spaces): utime and stime are the 12th and 13th, in clock ticks
		// (100 a second on Linux).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return total, nil
}

// machineBusy is the time every CPU of the machine has spent busy (user,
// nice, system, interrupts, steal: the first line of /proc/stat), 0 where
// it cannot be read.
func machineBusy() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		if i < len(f) {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func percentile95(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return nearestRank(ds, 950)
}

// loadTestBinary skips t unless load tests are on, and builds the console
// binary the load tests run as child processes.
func loadTestBinary(t *testing.T) string {
	if os.Getenv(loadEnv) == "" {
		t.Skipf("a load measurement of a minute or more; set %s=1 to run it", loadEnv)
	}
	bin := filepath.Join(t.TempDir(), "console")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
