// Package memlimit keeps the Go runtime's soft memory limit a fixed room above the live
// heap, so that the collector works harder as the heap grows without ever running
// without end on a heap the process must keep.
package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Follow sets the soft memory limit to room above the live heap (and an eighth of it,
// for what the runtime keeps beside the objects), and sets it again after each
// collection until stop is called. A fixed limit below what a process must hold live
// (Boris's search index of a 400,000-file tree and its list of files take about 270 MB)
// would have the collector run without end, up to half the CPU, and slow every search
// 2–3×. The limit never exceeds ceiling, if set (three quarters of the container's
// memory, say: the commands the process runs share it): a heap that nears it is one the
// collector should work hard to keep down. adjusted, if set, is told of each limit set
// (tests use it), and stops the updates by returning false.
//
// stop ends the updates and takes the limit off (sets it to no limit); it is safe to call
// more than once, and no update sets a limit after it returns.
func Follow(room, ceiling int64, adjusted func(limit int64) bool) (stop func()) {
	var mu sync.Mutex
	stopped := false
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var set func()
	set = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		metrics.Read(sample)
		live := int64(0)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		limit := live + live/8 + room
		if ceiling > 0 {
			limit = min(limit, ceiling)
		}
		debug.SetMemoryLimit(limit)
		if adjusted != nil && !adjusted(limit) {
			return
		}
		// A finalizer runs once the collection that found its object unreachable is done:
		// each one sets the limit again and arms the next. The object holds a pointer so
		// that it is not one of the tiny allocations the runtime packs together.
		runtime.SetFinalizer(&gcMark{}, func(*gcMark) { set() })
	}
	set()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopped = true
			debug.SetMemoryLimit(math.MaxInt64)
		}
	}
}

// gcMark is the object whose finalizer tells Follow a collection happened.
type gcMark struct {
	_ *byte
	_ [16]byte
}
