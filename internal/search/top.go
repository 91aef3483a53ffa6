package search

import (
	"container/heap"
	"slices"
	"sync"
)

// topN keeps the first items in sort order whose weights add up to at least keep, dropping
// the rest as they arrive, so memory stays bounded however many results a tree holds.
// It is safe for concurrent use.
type topN[T any] struct {
	mu     sync.Mutex
	h      worstFirst[T]
	weight func(T) int
	keep   int
	total  int // weight held
}

func newTopN[T any](keep int, before func(a, b T) bool, weight func(T) int) *topN[T] {
	return &topN[T]{h: worstFirst[T]{before: before}, weight: weight, keep: keep}
}

func (t *topN[T]) add(x T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	heap.Push(&t.h, x)
	t.total += t.weight(x)
	// Drop the last item while the others still hold enough.
	for len(t.h.items) > 1 && t.total-t.weight(t.h.items[0]) >= t.keep {
		t.total -= t.weight(t.h.items[0])
		heap.Pop(&t.h)
	}
}

// sorted returns the items kept, in order.
func (t *topN[T]) sorted() []T {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.h.items)
	slices.SortFunc(out, func(a, b T) int {
		switch {
		case t.h.before(a, b):
			return -1
		case t.h.before(b, a):
			return 1
		}
		return 0
	})
	return out
}

// worstFirst is a heap with the item that sorts last on top.
type worstFirst[T any] struct {
	items  []T
	before func(a, b T) bool
}

func (h *worstFirst[T]) Len() int           { return len(h.items) }
func (h *worstFirst[T]) Less(i, j int) bool { return h.before(h.items[j], h.items[i]) }
func (h *worstFirst[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *worstFirst[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *worstFirst[T]) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	return x
}
