package memlimit

import (
	"math"
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
	stop := Follow(room, 0, func(limit int64) bool {
		select { // the latest limit wins
		case <-limits:
		default:
		}
		limits <- limit
		return true
	})
	t.Cleanup(stop)
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
	Follow(64<<20, ceiling, func(limit int64) bool {
		got = limit
		return false
	})
	if got != ceiling {
		t.Fatalf("limit %d MiB, want the ceiling, %d MiB", got>>20, ceiling>>20)
	}
}

// TestStopTakesTheLimitOff: once stop returns, there is no limit, and no collection sets
// one again (a benchmark measures under the limit, then lets the rest of the process run
// without it).
func TestStopTakesTheLimitOff(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	var sets atomic.Int32
	stop := Follow(64<<20, 0, func(int64) bool {
		sets.Add(1)
		return true
	})
	if l := debug.SetMemoryLimit(-1); l == math.MaxInt64 {
		t.Fatal("Follow set no limit")
	}
	stop()
	stop()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("limit %d after stop, want none", l)
	}
	// A finalizer armed before stop runs after a collection: it must set nothing.
	n := sets.Load()
	for range 3 {
		collect()
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("limit %d after collections that followed stop, want none", l)
	}
	if got := sets.Load(); got != n {
		t.Fatalf("the limit was set %d times after stop", got-n)
	}
}

// collect runs a collection and waits until the finalizers it queued have run, or those
// of an earlier one: the finalizer goroutine runs the queue a collection left, whole, before
// the next; so after three calls those of the first have all run.
func collect() {
	ran := make(chan struct{})
	runtime.SetFinalizer(&gcMark{}, func(*gcMark) { close(ran) })
	runtime.GC()
	<-ran
}
