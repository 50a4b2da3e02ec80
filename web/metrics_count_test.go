package web

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/outboundhq/outbound/guard"
)

// outboundCounts is the sum of every outbound_* counter in reg: the
// number of increments made, whatever counter or label they went to.
func outboundCounts(t *testing.T, reg prometheus.Gatherer) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetType().String() != "COUNTER" || !strings.HasPrefix(f.GetName(), "outbound_") {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestMetricsCountOneIncrementPerDecision: every decision, allowed or
// refused, by a tool call or through the proxy, is one increment of one
// counter in the whole registry, labelled with what it was.
func TestMetricsCountOneIncrementPerDecision(t *testing.T) {
	cases := []struct {
		name string
		rec  guard.Record
		// labels of outbound_decisions_total: tool, outcome, kind, code, via
		labels []string
	}{
		{"an allowed call", guard.Record{Caller: guard.Caller{Tool: "fetch_url"}, Elapsed: 30 * time.Millisecond},
			[]string{"fetch_url", "allowed", "", "", "call"}},
		{"a refused call", guard.Record{Caller: guard.Caller{Tool: "fetch_url"}, Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress}},
			[]string{"fetch_url", "refused", "policy", "forbidden", "call"}},
		{"a network failure", guard.Record{Caller: guard.Caller{Tool: "call_integration"}, Refusal: &guard.Refusal{Code: guard.CodeUnreachable, Kind: guard.KindNetwork}},
			[]string{"call_integration", "refused", "network", "unreachable", "call"}},
		{"a screenshot's refused page load", guard.Record{Caller: guard.Caller{Tool: "take_screenshot"}, Proxied: true, Refusal: &guard.Refusal{Code: guard.CodeForbidden}},
			[]string{"take_screenshot", "refused", "policy", "forbidden", "proxy"}},
		{"an allowed proxied request", guard.Record{Caller: guard.Caller{Tool: "proxy"}, Proxied: true, Elapsed: time.Millisecond},
			[]string{"proxy", "allowed", "", "", "proxy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMetrics()
			counter := m.decisions.WithLabelValues(c.labels...)
			before, own := outboundCounts(t, m.reg), testutil.ToFloat64(counter)
			m.Record(c.rec)
			if d := outboundCounts(t, m.reg) - before; d != 1 {
				t.Fatalf("%v increments across the registry's outbound counters, want 1", d)
			}
			if d := testutil.ToFloat64(counter) - own; d != 1 {
				t.Fatalf("outbound_decisions_total%v moved by %v, want 1", c.labels, d)
			}
		})
	}
}
