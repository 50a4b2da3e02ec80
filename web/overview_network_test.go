package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// The network-failure count sums the hourly bars, so its link opens the
// log from the first bar's hour, not from the top lists' start a day
// earlier: the number and the rows it opens agree.
func TestOverviewNetworkLinkCoversTheHoursItCounts(t *testing.T) {
	first := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var hours []models.OverviewBucket
	for i := range 24 {
		start := first.Add(time.Duration(i) * time.Hour)
		hours = append(hours, models.OverviewBucket{Start: start, End: start.Add(time.Hour), Network: 1})
	}
	vm := overviewView(models.RefusalOverview{Hours: hours}, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	u, err := url.Parse(vm.NetworkHref)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Query().Get("from"); got != "2026-12-01T10:00" || !strings.Contains(vm.NetworkHref, "kind=network") {
		t.Errorf("network link %q: from %q, want 2026-12-01T10:00 (the first hourly bar) and kind=network", vm.NetworkHref, got)
	}
	if vm.Network != 24 {
		t.Errorf("network count %d, want the 24 bars' sum", vm.Network)
	}
}
