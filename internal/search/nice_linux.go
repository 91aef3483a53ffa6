package search

import "golang.org/x/sys/unix"

// idleThread gives the calling thread the lowest CPU priority (nice 19), so that an index
// built in the background takes only what no one else wants.
func idleThread() { _ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19) }
