package web

import (
	"slices"

	"github.com/outboundhq/outbound/models"
)

// A spike is a bucket whose attack-like refusals stand out from the
// window: at least a floor (so that 0, 0, 1 is no spike) and more than
// spikeFactor times the window's median (so that a steady background of
// probes is no spike either, however high). The median, not the mean:
// one burst must not raise the bar it is measured against.
const (
	spikeFactor  = 3
	spikeMinHour = 5
	spikeMinDay  = 20
)

// spikes marks the buckets whose attack-like count is a spike.
func spikes(buckets []models.OverviewBucket, floor int64) []bool {
	out := make([]bool, len(buckets))
	if len(buckets) == 0 {
		return out
	}
	counts := make([]int64, len(buckets))
	for i, b := range buckets {
		counts[i] = b.Attack
	}
	median := medianOf(counts)
	for i, n := range counts {
		// n > factor × median, kept in integers: 2n > 2·factor·median
		// holds the median's half when the count of buckets is even.
		out[i] = n >= floor && 2*n > spikeFactor*median
	}
	return out
}

// medianOf is twice the median of counts (an integer even when the
// median falls between two counts).
func medianOf(counts []int64) int64 {
	s := slices.Clone(counts)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return 2 * s[n/2]
	}
	return s[n/2-1] + s[n/2]
}
