package search

import (
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
	t.h.push(x)
	t.total += t.weight(x)
	// Drop the last item while the others still hold enough.
	for len(t.h.items) > 1 && t.total-t.weight(t.h.items[0]) >= t.keep {
		t.total -= t.weight(t.h.items[0])
		t.h.pop()
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

// worstFirst is a heap with the item that sorts last on top. It is container/heap's
// algorithm on a typed slice: an item pushed is not boxed in an interface (a search of
// 4,000 matching files allocated 0.3 MB for that alone).
type worstFirst[T any] struct {
	items  []T
	before func(a, b T) bool
}

// above reports whether the item at i belongs above the one at j: it sorts after it.
func (h *worstFirst[T]) above(i, j int) bool { return h.before(h.items[j], h.items[i]) }

func (h *worstFirst[T]) swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }

func (h *worstFirst[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.above(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

// pop removes the item on top.
func (h *worstFirst[T]) pop() {
	n := len(h.items) - 1
	h.swap(0, n)
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.above(r, c) {
			c = r
		}
		if !h.above(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
}
