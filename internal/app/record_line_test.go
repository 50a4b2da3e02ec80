package app

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// field is one key and decoded value of a JSON object, in order.
type field struct {
	key   string
	value any
}

// fieldsOf decodes one JSON object line into its fields, in order.
func fieldsOf(t *testing.T, line []byte) []field {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %v %q", err, line)
	}
	var out []field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		out = append(out, field{k.(string), v})
	}
	return out
}

// The hand-written decision line is the line slog's JSON handler writes
// for the same record: the same keys in the same order with the same
// values, whatever the strings hold.
func TestDecisionLineIsTheJSONHandlersLine(t *testing.T) {
	odd := "quote\" back\\ nl\n cr\r tab\t nul\x00 bell\x07 <b>&amp; é 😀 \u2028\u2029 bad\xff\xfe end"
	refusal := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress, Host: "10.0.0.1",
		Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")},
		Remedy:    guard.Remedy{Kind: guard.RemedyAddEntry, Entry: "10.0.0.1"}}
	records := map[string]guard.Record{
		"allowed": {Caller: guard.Caller{Tool: "fetch_url", Agent: "bot", Thread: "T-1", Ticket: "SUP-1"},
			URL: "https://example.com/a?b=c", Host: "example.com", Port: 443, Elapsed: 1234 * time.Millisecond, Cached: true},
		"refused": {Caller: guard.Caller{Tool: "proxy", Agent: "bot"}, URL: "http://10.0.0.1/", Host: "10.0.0.1", Port: 80,
			Refusal: refusal, Proxied: true, Redirects: []string{"https://a.example/", "http://10.0.0.1/"}},
		"refused without addresses": {Caller: guard.Caller{Tool: "fetch_url"}, URL: "http://intranet/",
			Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalName}},
		"would refuse": {Caller: guard.Caller{Tool: "call_integration", Service: "crm", Agent: "bot"}, URL: "https://crm.example/x", Host: "crm.example", Port: 443,
			WouldRefuse: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted}},
		"odd strings": {Caller: guard.Caller{Tool: odd, Service: odd, Agent: odd, Thread: odd, Ticket: odd, Trigger: odd}, URL: odd, Host: odd,
			Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalName}, Redirects: []string{odd, ""}},
	}
	now := time.Date(2026, 12, 1, 19, 4, 5, 678912345, time.UTC)
	for name, rec := range records {
		t.Run(name, func(t *testing.T) {
			var viaSlog bytes.Buffer
			a := &App{log: slog.New(slog.NewJSONHandler(&viaSlog, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			a.logRecord(&rec)
			line := appendDecisionLine(nil, now, &rec)
			if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
				t.Fatalf("not one line: %q", line)
			}
			mine, theirs := fieldsOf(t, line), fieldsOf(t, viaSlog.Bytes())
			if len(mine) == 0 || mine[0].key != "time" || mine[0].value != "2026-12-01T19:04:05.678Z" {
				t.Errorf("time field = %+v, want 2026-12-01T19:04:05.678Z first", mine[:min(1, len(mine))])
			}
			if len(theirs) > 0 {
				theirs[0].value = mine[0].value // slog stamped its own clock
			}
			if !reflect.DeepEqual(mine, theirs) {
				t.Errorf("the hand-written line differs from slog's:\nmine:   %s\nslog's: %s", line, viaSlog.Bytes())
			}
			if name == "odd strings" && !strings.Contains(string(line), `\u2028`) {
				t.Errorf("U+2028 is not escaped: %s", line)
			}
		})
	}
}

// With Options.DecisionLog the app writes decision lines there by hand;
// the logger's level still decides whether they are written.
func TestDecisionLogWriterGetsTheLineAndHonoursTheLevel(t *testing.T) {
	rec := guard.Record{Caller: guard.Caller{Tool: "fetch_url", Agent: "bot"}, URL: "https://example.com/", Host: "example.com", Port: 443}
	var direct, viaSlog bytes.Buffer
	a := &App{log: slog.New(slog.NewJSONHandler(&viaSlog, nil)), decisionLog: &direct}
	a.logRecord(&rec)
	if viaSlog.Len() != 0 || !strings.Contains(direct.String(), `"msg":"allowed"`) {
		t.Fatalf("decision line: direct %q, via slog %q; want it direct only", direct.String(), viaSlog.String())
	}
	direct.Reset()
	a.log = slog.New(slog.NewJSONHandler(&viaSlog, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a.logRecord(&rec)
	if direct.Len() != 0 || viaSlog.Len() != 0 {
		t.Fatalf("a warn-level logger got the info-level decision line: %q %q", direct.String(), viaSlog.String())
	}
}

func BenchmarkDecisionLine(b *testing.B) {
	rec := guard.Record{Caller: guard.Caller{Tool: "proxy", Agent: "bot"}, URL: "http://10.0.0.1/page/12345", Host: "10.0.0.1", Port: 80, Proxied: true,
		Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress, Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}}
	for _, via := range []string{"slog", "by-hand"} {
		b.Run(via, func(b *testing.B) {
			a := &App{log: slog.New(slog.NewJSONHandler(discard{}, nil))}
			if via == "by-hand" {
				a.decisionLog = discard{}
			}
			b.ReportAllocs()
			for b.Loop() {
				a.logRecord(&rec)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// appendLineTime writes what AppendFormat writes with slog's layout, in
// any zone, across seconds and a change of offset, whichever time came
// before.
func TestLineTimeIsAppendFormats(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600)
	}
	dst := time.Date(2026, 3, 8, 6, 59, 59, 999_000_000, time.UTC) // a second before New York's clocks go forward
	times := []time.Time{
		time.Date(2026, 12, 1, 19, 4, 5, 678912345, time.UTC),
		time.Date(2026, 12, 1, 19, 4, 5, 999999999, time.UTC),
		time.Date(2026, 12, 1, 19, 4, 6, 0, time.UTC),
		time.Date(2026, 12, 1, 19, 4, 6, 5_000_000, time.FixedZone("IST", 5*3600+1800)),
		dst.In(ny), dst.Add(time.Millisecond).In(ny), dst.Add(2 * time.Millisecond).In(ny),
		time.Date(1969, 12, 31, 23, 59, 59, 10_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 123_000_000, time.UTC),
		time.Now(), time.Now().UTC(),
	}
	for _, tm := range append(times, times...) {
		if got, want := string(appendLineTime(nil, tm)), tm.Format(lineTimeLayout); got != want {
			t.Errorf("appendLineTime(%v) = %s, want %s", tm, got, want)
		}
	}
}
