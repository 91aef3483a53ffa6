package main

import (
	"runtime"
	"sync"
)

// reservedThreads is how many OS threads the server starts at once and keeps. Under a
// fork bomb that took every task its limit allows, the Go runtime can still run on
// these, where creating a thread would fail and end the process (fatal error: newosproc).
// The server's threads while 30 clients call it: see docs/commands.md.
const reservedThreads = 32

// reserveThreads makes the Go runtime start n OS threads now, which it then keeps idle and
// reuses before it creates any other: it never ends a thread that a goroutine left
// unlocked.
func reserveThreads(n int) {
	var locked, release sync.WaitGroup
	locked.Add(n)
	release.Add(1)
	for range n {
		go func() {
			// A goroutine that blocks while locked to its thread holds it: the next one
			// needs another.
			runtime.LockOSThread()
			locked.Done()
			release.Wait()
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	release.Done()
}
