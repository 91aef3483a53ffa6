package testutil

import (
	"slices"
	"testing"
	"time"
)

// Paired measures what variant adds to base, two versions of one operation: each
// iteration of b's loop times both, one after the other, first one and then the other
// in turn, so that the host's load, and whatever running second costs, weigh on both
// alike. It reports the mean time of each (name-µs/op) and what the variant adds:
// added-µs/op, the mean of the differences, and added-median-µs/op, their median. On a
// shared machine a stall of the host now and then moves the mean by far more than the
// variant costs; the median is what a typical call pays.
func Paired(b *testing.B, baseName string, base func(), variantName string, variant func()) {
	var took [2][]time.Duration
	time1 := func(i int, f func()) {
		start := time.Now()
		f()
		took[i] = append(took[i], time.Since(start))
	}
	for n := 0; b.Loop(); n++ {
		if n%2 == 0 {
			time1(0, base)
			time1(1, variant)
		} else {
			time1(1, variant)
			time1(0, base)
		}
	}
	n := len(took[0])
	if n == 0 {
		return
	}
	var sums [2]time.Duration
	diffs := make([]time.Duration, n)
	for i := range n {
		sums[0] += took[0][i]
		sums[1] += took[1][i]
		diffs[i] = took[1][i] - took[0][i]
	}
	µs := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(µs(sums[0])/float64(n), baseName+"-µs/op")
	b.ReportMetric(µs(sums[1])/float64(n), variantName+"-µs/op")
	b.ReportMetric(µs(sums[1]-sums[0])/float64(n), "added-µs/op")
	slices.Sort(diffs)
	b.ReportMetric(µs(diffs[n/2]), "added-median-µs/op")
}
