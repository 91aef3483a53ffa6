package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// threads returns how many threads this process has.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestReserveThreads: the reserved threads exist at once, and goroutines that each need a
// thread of their own later run on them, without a thread more. Not parallel: it counts
// this process's threads.
func TestReserveThreads(t *testing.T) {
	const n = 24
	reserveThreads(n)
	reserved := threads(t)
	if reserved < n {
		t.Fatalf("%d threads after reserving %d", reserved, n)
	}
	// Half as many goroutines as were reserved, each holding a thread: the rest of the
	// process runs on threads of its own meanwhile.
	var held, release sync.WaitGroup
	held.Add(n / 2)
	release.Add(1)
	for range n / 2 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			held.Done()
			release.Wait()
		}()
	}
	held.Wait()
	during := threads(t)
	release.Done()
	// A few threads may still be made, for the runtime's own use, when every idle one is
	// busy looking for work at that moment, or for a goroutine an earlier test left
	// blocked in a system call; without the reserve, there are n/2 more.
	if during >= reserved+n/4 {
		t.Errorf("%d threads while the reserve was in use, %d after reserving: new ones were made", during, reserved)
	}
}
