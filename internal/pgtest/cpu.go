package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerCPU is the CPU time (user and system) the PostgreSQL server dsn
// names has used so far: its postmaster, every live child (backends, WAL
// writer, checkpointer, autovacuum) and every child that has exited
// (reaped by the postmaster, so counted in its cutime and cstime). A
// benchmark or load test takes the difference of two calls as the
// store's share of the work, whichever backends did it and however
// briefly they lived. It works only for a server on this machine that
// listens on a unix socket named in the DSN's host parameter (as
// scripts/pg-test-cluster.sh's does), and reports false otherwise.
func ServerCPU(dsn string) (time.Duration, bool) {
	master, ok := postmaster(dsn)
	if !ok {
		return 0, false
	}
	f, err := procStat(master)
	if err != nil {
		return 0, false
	}
	// utime, stime, cutime, cstime: the 12th to 15th fields after the
	// command, in clock ticks (100 a second on Linux).
	total := ticks(f[11]) + ticks(f[12]) + ticks(f[13]) + ticks(f[14])
	dirs, _ := os.ReadDir("/proc")
	parent := strconv.Itoa(master)
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		f, err := procStat(pid)
		if err != nil || len(f) < 13 || f[1] != parent {
			continue // gone, or not the server's
		}
		total += ticks(f[11]) + ticks(f[12])
	}
	return total, true
}

// postmaster is the PID of the server listening on dsn's unix socket: the
// first line of the socket's lock file.
func postmaster(dsn string) (int, bool) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Query().Get("host") == "" {
		return 0, false
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	lock, err := os.ReadFile(filepath.Join(u.Query().Get("host"), ".s.PGSQL."+port+".lock"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(lock), "\n", 2)[0]))
	return pid, err == nil
}

// procStat is /proc/PID/stat's fields after the command (which is in
// parentheses and may hold spaces): the state is f[0], the parent f[1].
func procStat(pid int) ([]string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

func ticks(s string) time.Duration {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Duration(n) * 10 * time.Millisecond
}

// BackendsCPU is the CPU time each live backend of the server dsn names
// has used, by PID, for the connections whose application_name is app (a
// DSN parameter): so a test can tell one client process's share of the
// server's CPU from another's.
func BackendsCPU(dsn, app string) (map[int]time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if f, err := procStat(int(pid)); err == nil {
			out[int(pid)] = ticks(f[11]) + ticks(f[12])
		}
	}
	return out, nil
}

// WithApplicationName is dsn with its connections named app
// (application_name), for BackendsCPU.
func WithApplicationName(dsn, app string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}
