package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopNKeepsTheFirst: whatever the order items arrive in, a topN holds the shortest
// run of them, in sort order, whose weights add up to keep (or all of them).
func TestTopNKeepsTheFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	weight := func(x int) int { return x%3 + 1 }
	for range 2000 {
		items := make([]int, rng.IntN(60))
		for i := range items {
			items[i] = rng.IntN(40)
		}
		keep := 1 + rng.IntN(50)
		top := newTopN(keep, func(a, b int) bool { return a < b }, weight)
		for _, x := range items {
			top.add(x)
		}
		want := slices.Sorted(slices.Values(items))
		for sum, i := 0, 0; i < len(want); i++ {
			if sum += weight(want[i]); sum >= keep {
				want = want[:i+1]
				break
			}
		}
		if got := top.sorted(); !slices.Equal(got, want) {
			t.Fatalf("items %v, keep %d: kept %v, want %v", items, keep, got, want)
		}
	}
}
