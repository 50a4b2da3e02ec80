package models

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRowsStmtChunksCoverEveryRowInFixedSizes(t *testing.T) {
	var sizes []int
	next := 0
	err := refusalInsert.chunks(733, func(first, n int) error {
		if first != next {
			t.Fatalf("a chunk starts at row %d, want %d", first, next)
		}
		next += n
		sizes = append(sizes, n)
		return nil
	})
	if err != nil || next != 733 {
		t.Fatalf("chunks covered %d rows (%v), want 733", next, err)
	}
	if got := fmt.Sprint(sizes); got != "[500 50 50 50 50 5 5 5 5 5 5 1 1 1]" {
		t.Errorf("733 rows went in statements of %s, want [500 50 50 50 50 5 5 5 5 5 5 1 1 1]", got)
	}
	if got := hostInsert.text(2, "postgres"); got != "INSERT INTO refusal_hosts (host) VALUES ($1),($2) ON CONFLICT DO NOTHING" {
		t.Errorf("PostgreSQL text: %s", got)
	}
	if got := textInsert.text(2, "sqlite"); got != "INSERT INTO refusal_texts (id, text) VALUES (?,?),(?,?)" {
		t.Errorf("SQLite text: %s", got)
	}
}

// A batch of every statement size, then another: each refusal gets its
// own ID, in order, its own search text, and the hosts and counters add
// up, on both engines.
func TestInsertRefusalsInStatementSizes(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		batch := func(from, n int) []Refusal {
			rows := make([]Refusal, n)
			for i := range rows {
				rows[i] = Refusal{Time: at, Tool: "proxy", Host: fmt.Sprintf("h%d.example", (from+i)%7), URL: fmt.Sprintf("https://H.example/Page/%d", from+i),
					Code: "forbidden", Reason: "not_allowlisted", Message: "Refused.", Agent: "bot", Redirects: StringList{fmt.Sprintf("https://r.example/%d", from+i)}}
			}
			return rows
		}
		if err := s.InsertRefusals(ctx, batch(0, 733)); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertRefusals(ctx, batch(733, 5)); err != nil {
			t.Fatal(err)
		}
		var got []struct {
			ID             int64
			URL, Text, Msg string
			Redirects      StringList
		}
		// On PostgreSQL the message is stored once, apart (refusal_messages.go).
		msg := "''"
		if testOnPostgres(t) {
			msg = "COALESCE((SELECT m.text FROM refusal_messages m WHERE m.id = t.msg_id), '')"
		}
		if err := s.r.Raw("SELECT r.id, r.url, r.redirects, t.text, " + msg + " AS msg FROM refusals r LEFT JOIN refusal_texts t ON t.id = r.id ORDER BY r.id").Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if len(got) != 738 {
			t.Fatalf("%d rows stored, want 738", len(got))
		}
		for i, g := range got {
			url := fmt.Sprintf("https://H.example/Page/%d", i)
			if g.URL != url {
				t.Fatalf("row %d (ID %d) is %s, want %s: IDs out of insertion order", i, g.ID, g.URL, url)
			}
			text, msg := strings.ToLower(url)+"\nhttps://r.example/"+fmt.Sprint(i)+"\nrefused.\n", ""
			if testOnPostgres(t) {
				text, msg = strings.ToLower(url)+"\nhttps://r.example/"+fmt.Sprint(i)+"\n", "refused."
			}
			if g.Text != text || g.Msg != msg {
				t.Fatalf("row %d's search text is %q and message %q, want %q and %q", i, g.Text, g.Msg, text, msg)
			}
			if len(g.Redirects) != 1 {
				t.Fatalf("row %d's redirects: %v", i, g.Redirects)
			}
		}
		var hosts int64
		if err := s.r.Raw("SELECT COUNT(*) FROM refusal_hosts").Scan(&hosts).Error; err != nil || hosts != 7 {
			t.Errorf("refusal_hosts holds %d hosts (%v), want 7", hosts, err)
		}
		if n, err := s.CountRefusalsSince(ctx, at.Add(-time.Hour)); err != nil || n != 738 {
			t.Errorf("the counters say %d (%v), want 738", n, err)
		}
		top, err := s.TopRefusedHosts(ctx, at.Truncate(24*time.Hour), 1)
		if err != nil || len(top) != 1 || top[0].Count != 106 {
			t.Errorf("top host: %+v (%v), want a host refused 106 times", top, err)
		}
	})
}
