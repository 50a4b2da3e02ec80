package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/web"
)

// minimalAPIEnv makes the test binary a minimal JSON API process
// (TestMinimalAPIProcess), the floor TestAPIFloor compares console serve
// with; its value is the bearer token the process accepts.
const minimalAPIEnv = "OUTBOUND_MINIMAL_API"

// TestMinimalAPIProcess is not a test: run by TestAPIFloor as a child
// process with minimalAPIEnv set, it serves minimalAPI on a loopback port,
// prints "listening on http://ADDR" and runs until killed.
func TestMinimalAPIProcess(t *testing.T) {
	token := os.Getenv(minimalAPIEnv)
	if token == "" {
		t.Skip("a helper process of TestAPIFloor")
	}
	tuneGCForThisProcess() // as console serve collects
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", l.Addr())
	// console serve's limits: a server on a network needs them, and they
	// cost deadlines on every request (measured: within the noise).
	limits := web.DefaultTimeouts()
	srv := &http.Server{Handler: minimalAPI(token), ReadHeaderTimeout: limits.ReadHeader, ReadTimeout: limits.Read,
		WriteTimeout: limits.Write, IdleTimeout: limits.Idle, MaxHeaderBytes: limits.MaxHeaderBytes}
	_ = srv.Serve(l)
}

// minimalAPI is the least an HTTP JSON API answering fetch_url's refusal
// does, on net/http alone (with console serve's timeouts): it checks the
// bearer token (as a hash, in constant time), reads and decodes the JSON
// body, and writes an answer with the keys, about the length and the
// headers of console serve's refusal of a private address (TestAPIFloor
// checks all three). It has no router, middleware, guard, store, log or
// metrics.
func minimalAPI(token string) http.Handler {
	want := sha256.Sum256([]byte(token))
	type refusal struct {
		Code      string   `json:"code"`
		Reason    string   `json:"reason"`
		Message   string   `json:"message"`
		Fix       string   `json:"fix"`
		URL       string   `json:"url"`
		Host      string   `json:"host"`
		Port      int      `json:"port"`
		Addresses []string `json:"addresses"`
		Range     string   `json:"range"`
	}
	type answer struct {
		OK        bool     `json:"ok"`
		Error     refusal  `json:"error"`
		Start     int      `json:"start"`
		End       int      `json:"end"`
		Total     int      `json:"total"`
		NextStart *int     `json:"next_start"`
		Text      string   `json:"text"`
		Links     []string `json:"links"`
		Answer    string   `json:"answer"`
	}
	const rangeName = "private-use range 10.0.0.0/8"
	const fix = "This host is internal; ask an admin only if the task really needs it."
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if got := sha256.Sum256([]byte(bearer)); !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			http.Error(w, `{"error":{"code":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		var in struct {
			URL string `json:"url"`
		}
		if err == nil {
			err = json.Unmarshal(body, &in)
		}
		if err != nil || in.URL == "" {
			http.Error(w, `{"error":{"code":"bad_request"}}`, http.StatusBadRequest)
			return
		}
		host, _, _ := strings.Cut(strings.TrimPrefix(in.URL, "http://"), "/")
		message := host + " is in the " + rangeName + ", which is refused."
		out, _ := json.Marshal(answer{
			Error: refusal{Code: "forbidden", Reason: "internal_address", Message: message, Fix: fix,
				URL: in.URL, Host: host, Port: 80, Addresses: []string{host}, Range: rangeName},
			Links:  []string{},
			Answer: "fetch_url was refused: forbidden (internal_address).\nURL: " + in.URL + "\n" + message + "\nFix: " + fix + "\n",
		})
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	})
}

// TestAPIFloor measures console serve's JSON API against its floor, the
// minimal API above, each its own process, with TestIngestLoad's generator
// (the same clients, requests and pacing) in this process. console serve
// does everything the real API does: the token over the store, the tool,
// the guard's decision, the refusal log's row (on PostgreSQL when
// OUTBOUND_TEST_POSTGRES is set, else on SQLite) and the decision log line
// to a file.
//
// What it shows: how much of the serving process's CPU a request is the
// product's own work and how much any Go HTTP server pays on the machine.
// At a paced rate a server is idle between requests, and on a virtual
// machine the wake-ups (threads parked in epoll and futex, woken for each
// request) can cost more than the work; saturated, they mostly vanish. So
// it measures both: OUTBOUND_FLOOR_ROUNDS rounds (default 5) of
// OUTBOUND_FLOOR_SECONDS (default 5) per contestant, interleaved with the
// order rotating each round, at OUTBOUND_LOAD_RATE (default 10,000/s) and
// as fast as answered, with OUTBOUND_LOAD_CLIENTS clients (default 32). It
// reports medians of answers a second, the serving process's CPU a request
// (utime+stime from /proc/PID/stat) and the generator's, and latencies.
// It asserts nothing about speed. Turn it on with OUTBOUND_LOAD=1.
func TestAPIFloor(t *testing.T) {
	bin := loadTestBinary(t)
	t.Setenv("CONSOLE_SECRET_KEY", replicaKey)
	// The generator collects as seldom as in TestIngestLoad.
	defer debug.SetGCPercent(debug.SetGCPercent(serverGCPercent))
	store, db := "SQLite", tempDB(t)
	if os.Getenv(pgtest.DSNEnv) != "" {
		store, db = "PostgreSQL", pgtest.Schema(t)
	}
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "token", "create", "--db", db, "floor-agent")
	token := tokenLine.FindString(r.stdout)
	if r.code != 0 || token == "" {
		t.Fatal(r)
	}
	served := startProcess(t, exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0"), filepath.Join(t.TempDir(), "served.log"), serveLine)
	minimalCmd := exec.Command(os.Args[0], "-test.run=^TestMinimalAPIProcess$")
	minimalCmd.Env = append(os.Environ(), minimalAPIEnv+"="+token)
	minimal := startProcess(t, minimalCmd, filepath.Join(t.TempDir(), "minimal.log"), proxyLine)

	// The floor answers as console serve does, or it is no floor.
	shape, size := answerShape(t, served.addr, token, "http://10.1.2.3/page/1")
	minimalShape, minimalSize := answerShape(t, minimal.addr, token, "http://10.1.2.3/page/1")
	if shape != minimalShape || 20*max(size-minimalSize, minimalSize-size) > size {
		t.Fatalf("the minimal API answers unlike console serve:\nconsole serve: %s, %d bytes\nminimal:       %s, %d bytes", shape, size, minimalShape, minimalSize)
	}

	rounds := loadSetting("OUTBOUND_FLOOR_ROUNDS", 5)
	seconds := loadSetting("OUTBOUND_FLOOR_SECONDS", 5)
	clients := loadSetting("OUTBOUND_LOAD_CLIENTS", 32)
	paced := loadSetting("OUTBOUND_LOAD_RATE", 10000)
	contestants := []*replicaProc{minimal, served}
	names := map[*replicaProc]string{minimal: "minimal", served: "console serve"}
	for _, rate := range []int{paced, 0} {
		perSecond, serving, generator := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		var ratios []float64
		lastLatency := map[string]string{}
		for round := range rounds {
			cpu := map[string]float64{}
			for i := range contestants {
				p := contestants[(i+round)%len(contestants)]
				name := names[p]
				serving0, gen0 := pidsCPU(t, []int{p.pid}), pidsCPU(t, []int{os.Getpid()})
				traffic := startLoad(clients, rate, 5000, time.Duration(seconds)*time.Second, apiRefusal(p.addr, token))
				elapsed := traffic.wait()
				if msg := traffic.failed.Load(); msg != nil {
					t.Fatalf("%s: a request failed: %v", name, msg)
				}
				n := float64(traffic.answered.Load())
				cpu[name] = float64((pidsCPU(t, []int{p.pid}) - serving0).Microseconds()) / n
				perSecond[name] = append(perSecond[name], n/elapsed.Seconds())
				serving[name] = append(serving[name], cpu[name])
				generator[name] = append(generator[name], float64((pidsCPU(t, []int{os.Getpid()})-gen0).Microseconds())/n)
				lastLatency[name] = traffic.latencies()
			}
			ratios = append(ratios, cpu["console serve"]/cpu["minimal"])
		}
		target := "as fast as answered"
		if rate > 0 {
			target = fmt.Sprintf("paced at %d/s", rate)
		}
		load, _ := os.ReadFile("/proc/loadavg")
		for _, name := range []string{"minimal", "console serve"} {
			t.Logf("%s, %s, %d clients, %d rounds of %d s: %s answered %.0f/s %v; serving process %.1f µs/request %v; load generator %.1f µs/request %v; last round's %s",
				store, target, clients, rounds, seconds, name, median(perSecond[name]), rounded(perSecond[name]),
				median(serving[name]), rounded(serving[name]), median(generator[name]), rounded(generator[name]), lastLatency[name])
		}
		t.Logf("%s, %s: console serve's CPU a request over the minimal API's, per round: median %.2f× %v; loadavg %s",
			store, target, median(ratios), rounded2(ratios), strings.Fields(string(load))[:3])
	}
}

// answerShape asks the API at base to fetch target and describes its
// answer: the status, the header names and the body's keys (the error
// object's too); and returns the body's length.
func answerShape(t *testing.T, base, token, target string) (string, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/tools/fetch_url", strings.NewReader(`{"url":"`+target+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var answer, refusal map[string]json.RawMessage
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatalf("%s answered %s: %v", base, body, err)
	}
	if err := json.Unmarshal(answer["error"], &refusal); err != nil {
		t.Fatalf("%s answered %s without an error object: %v", base, body, err)
	}
	keys := func(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }
	return fmt.Sprintf("%d, headers %v, keys %v, error keys %v", resp.StatusCode, slices.Sorted(maps.Keys(resp.Header)),
		keys(answer), keys(refusal)), len(body)
}
