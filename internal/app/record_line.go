package app

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/jsonout"
)

// The decision line, written by hand when the app is given the log's
// writer (Options.DecisionLog). It is the line slog's JSON handler writes
// for the same record (logRecord): the same keys in the same order, the
// same values, time to the millisecond; a test decodes both and compares
// them. The bytes may differ only in how a JSON parser reads them alike
// (encoding/json, which slog uses for the redirect list, writes \b and
// \u003c where this writes \u0008 and <). Why by hand: it is written for every request the proxy and the
// API answer, and slog's general path (attributes boxed into a record, a
// reflective encoder for the address and redirect lists, a handler lock)
// cost about 4.5 µs and 6 KB of stack a line, some 10% of a proxied
// request's CPU.

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeDecisionLine writes rec's line to a.decisionLog in one Write.
func (a *App) writeDecisionLine(now time.Time, rec *guard.Record) {
	bp := linePool.Get().(*[]byte)
	b := appendDecisionLine((*bp)[:0], now, rec)
	_, _ = a.decisionLog.Write(b)
	if cap(b) <= 64<<10 { // one huge URL does not pin its buffer
		*bp = b
		linePool.Put(bp)
	}
}

// appendDecisionLine appends rec's line, ending in a newline, to b.
func appendDecisionLine(b []byte, now time.Time, rec *guard.Record) []byte {
	decision := decisionOf(*rec)
	b = append(b, `{"time":"`...)
	b = appendLineTime(b, now)
	b = append(b, `","level":"INFO","msg":`...)
	b = jsonout.AppendString(b, decision)
	str := func(key, v string) {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = jsonout.AppendString(b, v)
	}
	str(LogTool, rec.Caller.Tool)
	str(LogIntegration, rec.Caller.Service)
	str(LogAgent, rec.Caller.Agent)
	str(LogThread, rec.Caller.Thread)
	str(LogTicket, rec.Caller.Ticket)
	str(LogTrigger, rec.Caller.Trigger)
	str(LogURL, rec.URL)
	str(LogHost, rec.Host)
	b = append(b, `,"`+LogPort+`":`...)
	b = strconv.AppendInt(b, int64(rec.Port), 10)
	str(LogDecision, decision)
	if r := rec.WouldRefuse; r != nil && rec.Refusal == nil {
		str(LogCode, string(r.Code))
		str(LogReason, string(r.Reason))
	}
	if r := rec.Refusal; r != nil {
		str(LogCode, string(r.Code))
		str(LogReason, string(r.Reason))
		str(LogKind, string(r.KindOf()))
		str(LogRemedy, string(r.Remedy.Kind))
		b = append(b, `,"`+LogAddresses+`":`...)
		if len(r.Addresses) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, addr := range r.Addresses {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, '"')
				b = addr.AppendTo(b) // an address needs no escaping
				b = append(b, '"')
			}
			b = append(b, ']')
		}
		b = append(b, `,"`+LogRedirects+`":`...)
		b = jsonout.AppendStrings(b, rec.Redirects)
	}
	b = append(b, `,"`+LogCached+`":`...)
	b = strconv.AppendBool(b, rec.Cached)
	b = append(b, `,"`+LogProxied+`":`...)
	b = strconv.AppendBool(b, rec.Proxied)
	b = append(b, `,"`+LogMS+`":`...)
	b = strconv.AppendInt(b, rec.Elapsed.Milliseconds(), 10)
	return append(b, '}', '\n')
}

// lineTimeLayout is slog's JSON handler's time: RFC 3339 to the
// millisecond.
const lineTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// lineSecond is the text of one second of lineTimeLayout in one
// location: the text before the milliseconds and the zone after them.
type lineSecond struct {
	unix       int64
	loc        *time.Location
	date, zone []byte
}

// lastLineSecond is the second the last line was written in. Lines come
// many a second, and formatting the whole time took a quarter of a
// line's cost; within the second only the milliseconds are new (a zone's
// offset changes on a whole second, so it is the second's too).
var lastLineSecond atomic.Pointer[lineSecond]

// appendLineTime appends t as lineTimeLayout does.
func appendLineTime(b []byte, t time.Time) []byte {
	s := lastLineSecond.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		whole := t.Truncate(time.Second).AppendFormat(nil, lineTimeLayout) // ….000Z07:00
		cut := len("2006-01-02T15:04:05.")
		if i := len(whole) - len(t.Format("Z07:00")); i > cut { // years past 9999 are longer
			cut = i - len("000")
		}
		s = &lineSecond{unix: t.Unix(), loc: t.Location(), date: whole[:cut], zone: whole[cut+len("000"):]}
		lastLineSecond.Store(s)
	}
	b = append(b, s.date...)
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// decisionOf is the value of LogDecision for rec.
func decisionOf(rec guard.Record) string {
	switch {
	case rec.Refusal != nil:
		return DecisionRefused
	case rec.WouldRefuse != nil:
		return DecisionWouldRefuse
	}
	return DecisionAllowed
}
