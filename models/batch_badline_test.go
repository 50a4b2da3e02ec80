package models

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A spill line the writer cannot decode (one written by a version whose
// field types differ, a disk error) blocked the log silently: the read
// failed before any failure was counted or a stall timed, /healthz said
// "draining", and every new row was appended behind the line until the
// file's bound, then dropped. Now the line is moved to FILE.bad, said
// loudly (which file, which byte, where it went), counted as a failure,
// and the rows after it are written.
func TestAnUndecodableSpillLineIsMovedAsideAndTheLogGoesOn(t *testing.T) {
	s := openTestStore(t)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	bad := "{\"Port\":\"x\"}\n"
	if err := os.WriteFile(spill, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged lockedLines
	w := NewLogWriter(s.InsertRefusals, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill,
		Name: "refusal log", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	w.Write(Refusal{Host: "h0"})
	for deadline := time.Now().Add(3 * time.Second); w.Stats().Written == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	st := w.Stats()
	closeWriter(t, w)
	out := logged.String()
	if !strings.Contains(out, "undecodable") || !strings.Contains(out, spill+".bad") || !strings.Contains(out, "byte=0") {
		t.Errorf("the log does not name the undecodable line, its place and where it went:\n%s", out)
	}
	if st.Failures == 0 {
		t.Errorf("Stats = %+v: the undecodable line is not counted as a failure", st)
	}
	wantHosts(t, s, 1)
	if b, err := os.ReadFile(spill + ".bad"); err != nil || string(b) != bad {
		t.Errorf("%s.bad holds %q (%v), want the undecodable line, kept for a person to look at", spill, b, err)
	}
}

// A bad line between good ones costs only itself: the rows before and
// after it are written, in order, before the new ones.
func TestAnUndecodableSpillLineBetweenRowsCostsOnlyItself(t *testing.T) {
	s := openTestStore(t)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	content := "{\"Host\":\"h0\"}\n{\"Port\":\"x\"}\n{\"Port\":\"y\"}\n{\"Host\":\"h1\"}\n"
	if err := os.WriteFile(spill, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	w := NewLogWriter(s.InsertRefusals, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	w.Write(Refusal{Host: "h2"})
	closeWriter(t, w)
	wantHosts(t, s, 3)
	if b, _ := os.ReadFile(spill + ".bad"); string(b) != "{\"Port\":\"x\"}\n{\"Port\":\"y\"}\n" {
		t.Errorf("%s.bad holds %q, want both undecodable lines", spill, b)
	}
}
