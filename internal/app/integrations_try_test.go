package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// teeRecords keeps every record the App's sink counts and every refusal
// row it writes, passing the rows on to the store's writer.
type teeRecords struct {
	refusalRows
	mu      sync.Mutex
	records []guard.Record
	rows    []models.Refusal
}

func (t *teeRecords) Record(rec guard.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.records = append(t.records, rec)
}

func (t *teeRecords) Write(r models.Refusal) bool {
	t.mu.Lock()
	t.rows = append(t.rows, r)
	t.mu.Unlock()
	return t.refusalRows.Write(r)
}

// since returns the records and rows after the counts n and m.
func (t *teeRecords) since(n, m int) ([]guard.Record, []models.Refusal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]guard.Record(nil), t.records[n:]...), append([]models.Refusal(nil), t.rows[m:]...)
}

func (t *teeRecords) counts() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.records), len(t.rows)
}

// TestIntegrationTestIsOneRecord: the console's Test button is one call
// of call_integration, recorded once by the one sink like an agent's call:
// a parameter refusal reaches the refusal log, a refused host is one row
// (not one per request), a body over max_bytes is one refusal (not an
// allowed record and then a refusal), and an answer is one allowed record.
func TestIntegrationTestIsOneRecord(t *testing.T) {
	ctx := context.Background()
	tee := &teeRecords{}
	a, err := Open(ctx, filepath.Join(t.TempDir(), "console.db"), Options{
		Resolver: guardtest.NewResolver(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv, Metrics: tee,
	})
	if err != nil {
		t.Fatal(err)
	}
	tee.refusalRows = a.refusals
	a.refusals = tee
	t.Cleanup(func() { a.Close() })

	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/orders/big") {
			for range 48 { // 3 MiB, over the default max_bytes, with no declared length
				w.Write([]byte(strings.Repeat("x", 64<<10)))
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status": "shipped"}`)
	}))
	defer svc.Close()
	if _, err := a.CreateIntegration(ctx, SaveIntegration{Input: orderInput(svc.URL), Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}

	test := func(t *testing.T, id string) ([]guard.Record, []models.Refusal) {
		t.Helper()
		n, m := tee.counts()
		samples := map[string]string{}
		if id != "" {
			samples["id"] = id
		}
		if _, err := a.TestIntegration(ctx, TestIntegration{Name: "order_status", Samples: samples, Agent: "console:ada"}); err != nil {
			t.Fatal(err)
		}
		return tee.since(n, m)
	}
	// check asserts one record of the Test, as the console's caller, and
	// one refusal row when it was refused for reason.
	check := func(t *testing.T, recs []guard.Record, rows []models.Refusal, reason guard.Reason) {
		t.Helper()
		if len(recs) != 1 {
			t.Fatalf("%d records, want one: %+v", len(recs), recs)
		}
		want := guard.Caller{Tool: tools.CallIntegrationName, Agent: "console:ada", Thread: "integration-test", Trigger: "test order_status", Service: "order_status"}
		if rec := recs[0]; rec.Caller != want || rec.Proxied {
			t.Fatalf("the record's caller is %+v (proxied %v), want %+v", rec.Caller, rec.Proxied, want)
		}
		switch ref := recs[0].Refusal; {
		case reason == "" && ref != nil:
			t.Fatalf("refused: %+v", ref)
		case reason != "" && (ref == nil || ref.Reason != reason):
			t.Fatalf("the record's refusal is %+v, want %s", ref, reason)
		}
		wantRows := 0
		if reason != "" {
			wantRows = 1
		}
		if len(rows) != wantRows {
			t.Fatalf("%d refusal rows, want %d: %+v", len(rows), wantRows, rows)
		}
		for _, row := range rows {
			if row.Reason != string(reason) || row.Tool != tools.CallIntegrationName || row.Agent != "console:ada" || row.Thread != "integration-test" || row.Trigger != "test order_status" || row.Integration != "order_status" {
				t.Fatalf("row %+v", row)
			}
		}
	}

	t.Run("bad parameters", func(t *testing.T) {
		recs, rows := test(t, "")
		check(t, recs, rows, tools.ReasonBadParams)
	})
	t.Run("a refused host", func(t *testing.T) {
		recs, rows := test(t, "A-1")
		check(t, recs, rows, guard.ReasonInternalAddress)
	})
	host := strings.TrimPrefix(svc.URL, "http://")
	if _, err := a.AddEntries(ctx, AddEntries{Entries: []string{host}, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	t.Run("an answer", func(t *testing.T) {
		recs, rows := test(t, "A-1")
		check(t, recs, rows, "")
	})
	t.Run("a body over max_bytes", func(t *testing.T) {
		recs, rows := test(t, "big")
		check(t, recs, rows, guard.ReasonStreamedSize)
	})
}
