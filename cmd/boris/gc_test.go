package main

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestMemoryLimitFollowsLiveHeap: the soft memory limit stays room above the live heap as
// it grows past the room (the search index of a big tree) and comes back down when it
// shrinks, so the collector never runs without end on a heap Boris must keep.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	const room = 64 << 20
	const big = 128 << 20
	limits := make(chan int64, 1)
	var done atomic.Bool
	followLiveHeap(room, 0, func(limit int64) bool {
		if done.Load() {
			return false
		}
		select { // the latest limit wins
		case <-limits:
		default:
		}
		limits <- limit
		return true
	})
	t.Cleanup(func() { done.Store(true) })
	if l := <-limits; l < room || l >= big {
		t.Fatalf("first limit %d MiB, want at least the room (%d MiB) and below %d MiB", l>>20, room>>20, big>>20)
	}
	waitFor := func(what string, ok func(int64) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			runtime.GC() // each collection runs the finalizer that sets the limit again
			select {
			case l := <-limits:
				if ok(l) {
					return
				}
			case <-deadline:
				t.Fatalf("the limit never became %s", what)
			}
		}
	}
	keep := make([][]byte, big>>20)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
	}
	waitFor("room above a 128 MiB live heap", func(l int64) bool { return l >= big+room })
	runtime.KeepAlive(keep)
	waitFor("room above the heap again once it shrank", func(l int64) bool { return l < big })
}

// TestMemoryLimitCeiling: in a container, the limit stays under its ceiling however big
// the live heap, so the collector works hard before the container's memory runs out.
func TestMemoryLimitCeiling(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	const ceiling = 32 << 20
	var got int64
	followLiveHeap(64<<20, ceiling, func(limit int64) bool {
		got = limit
		return false
	})
	if got != ceiling {
		t.Fatalf("limit %d MiB, want the ceiling, %d MiB", got>>20, ceiling>>20)
	}
}
