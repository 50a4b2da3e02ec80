package app

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// The refusal log's fault tests run a real process (this test binary,
// re-executed) that records refusals at faultRate per second and prints
// how many were acknowledged, then stop it with SIGTERM or kill -9, with
// or without the database's write lock held by another connection, and
// count what reached the database after a restart. They take a while and
// load the machine: set OUTBOUND_FAULT_TESTS=1 to run them
// (OUTBOUND_FAULT_SECONDS sets how long the process runs, 3 by default;
// 60 plays the 60 s stall).
const faultRate = 10_000

func faultSeconds() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("OUTBOUND_FAULT_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 3 * time.Second
}

func TestRefusalLogFaults(t *testing.T) {
	if os.Getenv("OUTBOUND_FAULT_TESTS") == "" {
		t.Skip("set OUTBOUND_FAULT_TESTS=1 to run the refusal log's fault tests (a minute of load)")
	}
	for _, tt := range []struct {
		name  string
		sig   syscall.Signal
		stall bool
	}{
		{"SIGTERM", syscall.SIGTERM, false},
		{"SIGTERM during a stall", syscall.SIGTERM, true},
		{"kill -9", syscall.SIGKILL, false},
		{"kill -9 during a stall", syscall.SIGKILL, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for run := range 3 {
				acked, got, dAcked, dGot := faultRun(t, tt.sig, tt.stall)
				lost, dLost := acked-got, dAcked-dGot
				t.Logf("run %d: %d refusals acknowledged, %d in the database after restart, %d lost; allowed decisions: %d, %d, %d lost",
					run+1, acked, got, lost, dAcked, dGot, dLost)
				switch {
				case tt.sig == syscall.SIGTERM && dLost != 0:
					t.Errorf("SIGTERM lost %d acknowledged decisions", dLost)
				case tt.sig == syscall.SIGKILL && tt.stall && dLost > faultRate/10:
					t.Errorf("kill -9 during a stall lost %d decisions; everything acknowledged is spilled", dLost)
				case tt.sig == syscall.SIGKILL && dLost > faultRate/100*115/10+faultRate/10:
					t.Errorf("kill -9 lost %d decisions, more than the stated 1.15 s window", dLost)
				}
				switch {
				case tt.sig == syscall.SIGTERM && lost != 0:
					t.Errorf("SIGTERM lost %d acknowledged refusals", lost)
				// Beside the print granularity (1,000), kill -9 may lose the
				// aggregator's window in progress: the child's refusals are
				// of 500 kinds, so nearly all of them are merged counts.
				case tt.sig == syscall.SIGKILL && tt.stall && lost > int64(faultRate*models.AggregateWindow/time.Second)+1000:
					t.Errorf("kill -9 during a stall lost %d refusals; everything acknowledged but the aggregator's window is spilled", lost)
				case tt.sig == syscall.SIGKILL && lost > int64(faultRate*(1150*time.Millisecond+models.AggregateWindow)/time.Second)+1000:
					t.Errorf("kill -9 lost %d refusals, more than the stated 1.15 s and 0.5 s windows", lost)
				}
			}
		})
	}
}

// faultRun runs one child and returns what it acknowledged and what the
// database holds after the next start replayed any spill file.
func faultRun(t *testing.T, sig syscall.Signal, stall bool) (acked, got, dAcked, dGot int64) {
	path := filepath.Join(t.TempDir(), "console.db")
	a, err := Open(context.Background(), path, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	cmd := exec.Command(os.Args[0], "-test.run=TestRefusalLogFaultChild")
	cmd.Env = append(os.Environ(), "OUTBOUND_FAULT_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The child is up (it opened the database, which takes the write
	// lock) once it acknowledges its first refusals; then the stall.
	if l, ok := <-lines; !ok {
		t.Fatal("the child did not start")
	} else {
		acked, dAcked = ackedIn(l)
	}
	var lock *sql.Conn
	if stall {
		db, err := sql.Open("sqlite3", path+"?_busy_timeout=5000")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if lock, err = db.Conn(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := lock.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(faultSeconds())
	for waiting := true; waiting; {
		select {
		case <-deadline:
			waiting = false
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child stopped early")
			}
			a, d := ackedIn(l)
			acked, dAcked = max(acked, a), max(dAcked, d)
		}
	}
	_ = cmd.Process.Signal(sig)
	for l := range lines {
		a, d := ackedIn(l)
		acked, dAcked = max(acked, a), max(dAcked, d)
	}
	_ = cmd.Wait()
	if lock != nil {
		_, _ = lock.ExecContext(context.Background(), "ROLLBACK")
		lock.Close()
	}
	a, err = Open(context.Background(), path, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	// The restart writes what the child spilled; a long stall's spill
	// takes a while, so wait for it rather than for Close's grace.
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		drained := true
		for _, st := range a.LogWriterStats() {
			drained = drained && st.SpillRows == 0 && st.Queued+st.InFlight == 0
		}
		if drained {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the restart did not write the spilled rows in 10 minutes: %+v", a.LogWriterStats())
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(path, MustExist)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.CountRefusalsSince(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := s.DecisionsOfTicket(context.Background(), "T-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) > 0 {
		dGot = rows[0].ElapsedMS // the child numbers its decisions 1, 2, 3… in this field
	}
	var dRows int64
	db := openOther(t, path, "_query_only=on")
	defer db.Close()
	if err := db.QueryRow("SELECT COUNT(*) FROM decisions").Scan(&dRows); err != nil {
		t.Fatal(err)
	}
	if dRows != dGot && sig == syscall.SIGTERM {
		t.Errorf("%d decision rows, but the last is number %d: rows were lost in between or written twice", dRows, dGot)
	}
	return acked, n, dAcked, dRows
}

// ackedIn reads the child's "acked REFUSALS DECISIONS" line.
func ackedIn(line string) (refusals, decisions int64) {
	f := strings.Fields(strings.TrimPrefix(line, "acked "))
	if len(f) > 0 {
		refusals, _ = strconv.ParseInt(f[0], 10, 64)
	}
	if len(f) > 1 {
		decisions, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return refusals, decisions
}

// TestRefusalLogFaultChild is the child process: it records refusals at
// faultRate until SIGTERM, printing every 100th acknowledgement.
func TestRefusalLogFaultChild(t *testing.T) {
	path := os.Getenv("OUTBOUND_FAULT_CHILD")
	if path == "" {
		t.Skip("the fault tests' child process")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	a, err := Open(ctx, path, Options{Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), Getenv: noEnv, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var n, d int64
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			for range faultRate / 100 {
				n++
				a.record(guard.Record{Caller: guard.Caller{Tool: "proxy", Agent: "bot"}, Proxied: true,
					Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: fmt.Sprintf("h%d.example", n%500), URL: fmt.Sprintf("http://h%d.example/%d", n%500, n)}})
			}
			// And a tenth as many allowed decisions of a ticket, numbered.
			for range faultRate / 1000 {
				d++
				a.record(guard.Record{Caller: guard.Caller{Tool: "fetch_url", Agent: "bot", Ticket: "T-1"}, Host: "ok.example", URL: "https://ok.example/", Elapsed: time.Duration(d) * time.Millisecond})
			}
			fmt.Printf("acked %d %d\n", n, d)
		}
	}
	fmt.Printf("acked %d %d\n", n, d)
	if err := a.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
	}
}
