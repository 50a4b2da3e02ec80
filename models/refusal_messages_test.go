package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// On PostgreSQL the log writer stores each message once and the search
// text without it; rows written with the message inline (the multi-row
// path, rows from before migration 19) stay as they are. A search finds
// a word in either part of either form, through the window and through
// the trigram indexes alike, alone and with another filter. On SQLite
// the text keeps its message.
func TestMessagesAreStoredOnceAndSearched(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		defer func(n, f, m int64) { pgScanRows, pgFirstWindow, trigramMaxRows = n, f, m }(pgScanRows, pgFirstWindow, trigramMaxRows)
		// Windows far smaller than the log: a page that finds rows far
		// below its window found them through the trigram indexes.
		pgScanRows, pgFirstWindow = 20, 10
		messages := []string{"Refused: Alpha one", "Refused: beta TWO", "Refused: gamma Ünïcode", ""}
		base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		row := func(i int, msg string) Refusal {
			return Refusal{Time: base.Add(time.Duration(i) * time.Minute), Code: []string{"bad_port", "not_allowlisted"}[i%2],
				URL: fmt.Sprintf("https://h%d.example/p/%d", i%5, i), Message: msg, Trigger: "email"}
		}
		var first, second []Refusal
		for i := range 150 {
			msg := messages[i%len(messages)]
			if i == 2 || i == 5 {
				msg = "Refused: epsilon, deep down" // only far below every window
			}
			first = append(first, row(i, msg))
		}
		for i := 150; i < 200; i++ {
			second = append(second, row(i, []string{messages[i%2], "Refused: delta"}[i%3/2]))
		}
		for _, batch := range [][]Refusal{first, second} {
			if err := s.InsertRefusals(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		// Rows with the message in their text, as the multi-row path and
		// older releases write them.
		legacy := []Refusal{row(200, "Refused: alpha, the LEGACY way"), row(201, "Refused: epsilon, deep down")}
		if err := s.insertRefusalRows(ctx, legacy); err != nil {
			t.Fatal(err)
		}

		type text struct {
			ID    int64
			Text  string
			MsgID *int64
		}
		var texts []text
		if testOnPostgres(t) {
			if err := s.r.Raw("SELECT id, text, msg_id FROM refusal_texts ORDER BY id").Scan(&texts).Error; err != nil {
				t.Fatal(err)
			}
			var stored []string
			if err := s.r.Raw("SELECT text FROM refusal_messages ORDER BY text").Scan(&stored).Error; err != nil {
				t.Fatal(err)
			}
			want := []string{"refused: alpha one", "refused: beta two", "refused: delta", "refused: epsilon, deep down", "refused: gamma ünïcode"}
			if !slices.Equal(stored, want) {
				t.Fatalf("messages stored %q, want each once: %q", stored, want)
			}
		} else if err := s.r.Raw("SELECT id, text FROM refusal_texts ORDER BY id").Scan(&texts).Error; err != nil {
			t.Fatal(err)
		}
		var all []Refusal
		if err := s.r.Order("id").Find(&all).Error; err != nil {
			t.Fatal(err)
		}
		if len(texts) != len(all) || len(all) != len(first)+len(second)+len(legacy) {
			t.Fatalf("%d search texts for %d refusals", len(texts), len(all))
		}
		for i, r := range all {
			inline := !testOnPostgres(t) || i >= len(first)+len(second) || r.Message == ""
			if got := texts[i].MsgID != nil; got == inline || strings.Contains(texts[i].Text, "refused") != (inline && r.Message != "") {
				t.Fatalf("refusal %d (message %q): text %q, message ID %v; want the message inline: %v", r.ID, r.Message, texts[i].Text, got, inline)
			}
		}

		slices.Reverse(all) // newest first, as pages list them
		defer func(n int) { maxWordMessages = n }(maxWordMessages)
		// The trigram index answering and giving up, and the words named
		// by their messages' IDs and (in more than one message) matched
		// by reading each row's message.
		for _, limits := range [][2]int{{1000, 10}, {2, 10}, {1000, 1}, {2, 1}} {
			trigramMaxRows, maxWordMessages = int64(limits[0]), limits[1]
			s.searches = searchMemo{}
			for _, search := range []string{"epsilon", "ALPHA", "alpha h3.example", "ünïcode /p/1", "legacy", "delta email", "refused", "refused: beta", "no-such-word"} {
				words, _ := SearchWords(search)
				for _, q := range []RefusalQuery{{Search: search}, {Search: search, Code: "bad_port"}} {
					var want []int64
					for _, r := range all {
						ok := q.Code == "" || r.Code == q.Code
						for _, w := range words {
							ok = ok && strings.Contains(searchText(&r), w)
						}
						if ok {
							want = append(want, r.ID)
						}
					}
					q.Limit = 7
					if got := pagedIDs(t, s, q); !slices.Equal(got, want) {
						t.Errorf("%q code %q (index limit %d, messages named %d): got %v, want %v", search, q.Code, trigramMaxRows, maxWordMessages, got, want)
					}
				}
			}
		}
		if !testOnPostgres(t) {
			return
		}
		// A search the index gives up on is remembered as it was typed,
		// not in the order its words are looked up in (found in review:
		// the memo missed it, and every page asked the index again).
		trigramMaxRows = 2
		s.searches = searchMemo{}
		if _, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "alpha refused"}); err != nil || !s.searches.slowFor([]string{"alpha", "refused"}) {
			t.Fatalf("a search of many rows: %v, remembered %v", err, s.searches.slowFor([]string{"alpha", "refused"}))
		}
		// A rare message word, far below the first window, is answered
		// by the indexes: on the first page, to the end of the log.
		trigramMaxRows = 1000
		s.searches = searchMemo{}
		got, next, err := s.ListRefusals(ctx, RefusalQuery{Search: "epsilon"})
		if err != nil || len(got) != 3 || next != 0 {
			t.Fatalf("a rare message word: %d rows, next %d, %v; want its 3 rows and the end on the first page", len(got), next, err)
		}
	})
}

// The trigram lookup of a word in messages reaches the rows through the
// text's trigram index and the index of message IDs, in one bitmap: a
// plan that read the table would take seconds at ten million rows,
// cancelled at its budget every time.
func TestTrigramLookupOfAMessageWordUsesTheIndexes(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		if !testOnPostgres(t) {
			t.Skip("the messages table and the trigram indexes are PostgreSQL's")
		}
		s := openTestStore(t)
		ctx := testCtx(t)
		// Enough other rows that reading the ID range costs the planner
		// more than the indexes, as on a real log.
		rows := []Refusal{{URL: "https://xylophone.test/", Message: "Refused: needle"}}
		for i := range 20_000 {
			rows = append(rows, Refusal{URL: fmt.Sprintf("https://h%d.example.org/p/%d", i%500, i), Message: fmt.Sprintf("Refused: filler %d", i%50)})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		// VACUUM moves the trigram index's pending entries into the index
		// proper, as autovacuum does on a live log: the planner costs a
		// long pending list as a reason not to use the index.
		for _, table := range []string{"refusal_texts", "refusal_messages"} {
			if err := s.w.Exec("VACUUM ANALYZE " + table).Error; err != nil {
				t.Fatal(err)
			}
		}
		var plan []string
		err := s.w.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
			msgs, err := lookupWordMessages(tx, []string{"needle"})
			if err != nil {
				return err
			}
			cond, args := pgTextMatch([]string{"needle"}, msgs, true)
			return tx.Raw("EXPLAIN SELECT t.id FROM refusal_texts AS t WHERE t.id < 100000 AND "+cond, args...).Scan(&plan).Error
		})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		for _, want := range []string{"BitmapOr", "idx_refusal_texts_trgm", "idx_refusal_texts_msg"} {
			if !strings.Contains(text, want) {
				t.Errorf("the plan does not use %s:\n%s", want, text)
			}
		}
		if strings.Contains(text, "Seq Scan") {
			t.Errorf("the plan reads a table:\n%s", text)
		}
	})
}

// A purge removes the messages only purged refusals had, and keeps those
// a refusal left still names.
func TestPurgeRemovesTheMessagesNoRefusalNames(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		if !testOnPostgres(t) {
			t.Skip("SQLite keeps each message in its refusal's text")
		}
		s := openTestStore(t)
		ctx := testCtx(t)
		old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		rows := []Refusal{
			{Time: old, URL: "https://a.example/", Message: "Only old"},
			{Time: old, URL: "https://b.example/", Message: "Old and new"},
			{URL: "https://c.example/", Message: "Old and new"},
			{URL: "https://d.example/", Message: "Only new"},
		}
		// More old messages than one chunk of the purge's sweep holds.
		for i := range 2*unusedPurgeChunk + 1 {
			rows = append(rows, Refusal{Time: old, URL: "https://e.example/", Message: fmt.Sprintf("Old %d", i)})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PurgeRefusalsBefore(ctx, old.Add(time.Hour)); err != nil || n != int64(len(rows)-2) {
			t.Fatalf("purge: %d %v, want %d rows", n, err, len(rows)-2)
		}
		var left []string
		if err := s.r.Raw("SELECT text FROM refusal_messages ORDER BY text").Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		if want := []string{"old and new", "only new"}; !slices.Equal(left, want) {
			t.Fatalf("messages after the purge: %q, want %q", left, want)
		}
		got, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "old"})
		if err != nil || len(got) != 1 || got[0].URL != "https://c.example/" {
			t.Fatalf("search after the purge: %v %+v", err, got)
		}
	})
}

// A page looks its words' messages up once; a batch committed after the
// lookup may bring a message the lookup did not see, and its rows are
// found all the same (found in review: they were missed, and a page of
// newer rows could step past them for good). A search the lookup gives
// up on is remembered, and the lookup takes no write lock.
func TestMessagesStoredAfterTheLookupAreFound(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		if !testOnPostgres(t) {
			t.Skip("SQLite keeps each message in its refusal's text")
		}
		s := openTestStore(t)
		ctx := testCtx(t)
		if err := s.InsertRefusals(ctx, []Refusal{{URL: "https://a.example/", Message: "Refused: zeta one"}}); err != nil {
			t.Fatal(err)
		}
		words := []string{"zeta"}
		found, err := lookupWordMessages(s.r, words)
		if err != nil || len(found.ids[0]) != 1 {
			t.Fatalf("lookup: %+v, %v", found, err)
		}
		// Later: a new message, and an old one again.
		if err := s.InsertRefusals(ctx, []Refusal{{URL: "https://b.example/", Message: "Refused: zeta two"}, {URL: "https://c.example/", Message: "Refused: zeta one"}}); err != nil {
			t.Fatal(err)
		}
		for _, forIndex := range []bool{false, true} {
			cond, args := pgTextMatch(words, found, forIndex)
			var n int64
			if err := s.r.Table("refusal_texts AS t").Where(cond, args...).Count(&n).Error; err != nil || n != 3 {
				t.Fatalf("rows found with a lookup made before the last batch (index form %v): %d, %v; want 3", forIndex, n, err)
			}
		}

		// A word in more messages than a lookup may name: the search
		// reads each row's message, and remembers to do so at once for
		// that word; the other words keep their lists.
		defer func(n int) { maxWordMessages = n }(maxWordMessages)
		maxWordMessages = 1
		got, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "zeta two"})
		if err != nil || len(got) != 1 || !s.searches.slowFor(messageMemoKey("zeta")) || s.searches.slowFor(messageMemoKey("two")) {
			t.Fatalf("a word in too many messages: %d rows, %v, remembered %v and %v", len(got), err,
				s.searches.slowFor(messageMemoKey("zeta")), s.searches.slowFor(messageMemoKey("two")))
		}
		q := RefusalQuery{memo: &s.searches}
		again, err := q.wordMessages(s.r, []string{"zeta", "two"})
		if err != nil || again.ids[0] != nil || len(again.ids[1]) != 1 || !again.indexable() {
			t.Fatalf("the next lookup of the same words: %+v, %v; want zeta remembered and two's message listed", again, err)
		}

		// While a writer holds the write lock, a search's pages still
		// answer: the lookup's transaction is read-only.
		held, release := make(chan struct{}), make(chan struct{})
		go func() {
			_ = s.w.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("UPDATE settings SET value = value WHERE 1 = 0").Error; err != nil {
					return err
				}
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		defer close(release)
		maxWordMessages = 10
		s.searches = searchMemo{}
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if rows, _, err := s.ListRefusalsAfter(short, RefusalQuery{Search: "zeta"}, 0); err != nil || len(rows) != 3 {
			t.Fatalf("a page of newer rows while the write lock is held: %d rows, %v", len(rows), err)
		}
		if rows, _, err := s.ListRefusals(short, RefusalQuery{Search: "zeta", Since: time.Now().Add(-time.Hour)}); err != nil || len(rows) != 3 {
			t.Fatalf("a page of a time window while the write lock is held: %d rows, %v", len(rows), err)
		}
	})
}

// A message lookup that runs past its budget gives up on every word: the
// search then reads each row's message, finds what the lists would have
// found, and remembers the words, so the next pages do not wait for the
// budget again.
func TestAMessageLookupPastItsBudgetStillFindsTheRows(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		if !testOnPostgres(t) {
			t.Skip("SQLite keeps each message in its refusal's text")
		}
		s := openTestStore(t)
		ctx := testCtx(t)
		defer func(n, f int64, d time.Duration) { pgScanRows, pgFirstWindow, messageLookupBudget = n, f, d }(pgScanRows, pgFirstWindow, messageLookupBudget)
		// A first window of 10 rows and pages of up to 40: the two rows
		// to find are 15 rows down, so the page reads on below its first
		// window, testing each row's message there.
		pgScanRows, pgFirstWindow = 40, 10
		rows := []Refusal{
			{URL: "https://a.example/", Message: "Refused: omega kept apart"},
			{URL: "https://b.example/omega", Message: "Refused: something else"},
		}
		for i := range 15 {
			rows = append(rows, Refusal{URL: fmt.Sprintf("https://c.example/%d", i), Message: "Refused: nothing to find"})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		words := []string{"omega"}
		// Within a budget no loaded machine reaches.
		messageLookupBudget = 5 * time.Second
		if found, err := lookupWordMessages(s.r, words); err != nil || len(found.ids[0]) != 1 {
			t.Fatalf("a lookup within its budget: %+v, %v; want omega's one message", found, err)
		}
		// Messages enough, and no trigram index, that the lookup reads
		// them all: far more than a millisecond.
		for _, stmt := range []string{
			"DROP INDEX IF EXISTS idx_refusal_messages_trgm",
			"INSERT INTO refusal_messages (text) SELECT 'refused: filler message number ' || g FROM generate_series(1, 200000) g",
			"ANALYZE refusal_messages",
		} {
			if err := s.w.Exec(stmt).Error; err != nil {
				t.Fatal(err)
			}
		}
		messageLookupBudget = time.Millisecond
		found, err := lookupWordMessages(s.r, words)
		if err != nil || len(found.ids) != 1 || found.ids[0] != nil || found.maxID != 0 || found.indexable() {
			t.Fatalf("a lookup past its budget: %+v, %v; want every word given up on", found, err)
		}
		// Both forms of the condition (a read of rows, and the LIKE form
		// the trigram index would serve) still find the message's row and
		// the URL's. (The check above tells a give-up from an empty list;
		// these cannot: with no highest ID, both read every row's message.)
		for _, forIndex := range []bool{false, true} {
			cond, args := pgTextMatch(words, found, forIndex)
			var ids []int64
			if err := s.r.Table("refusal_texts AS t").Where(cond, args...).Order("id").Pluck("id", &ids).Error; err != nil || len(ids) != 2 {
				t.Fatalf("rows matched after a lookup past its budget (index form %v): %v, %v; want the message's and the URL's", forIndex, ids, err)
			}
		}
		got, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "omega"})
		if err != nil || len(got) != 2 || got[0].URL != "https://b.example/omega" || got[1].URL != "https://a.example/" {
			t.Fatalf("a search whose lookup ran past its budget: %+v, %v; want b then a", got, err)
		}
		if !s.searches.slowFor(messageMemoKey("omega")) {
			t.Error("the word a lookup gave up on is not remembered: every page would wait for the budget again")
		}
	})
}
