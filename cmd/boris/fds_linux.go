package main

import (
	"math"

	"golang.org/x/sys/unix"
)

// keepDescriptors marks every descriptor Boris inherited beyond stdin, stdout and stderr
// close-on-exec: commands get what Boris gives them, never, say, the write end of a pipe
// its parent waits on, which a background task would then hold open.
func keepDescriptors() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	keepListed("/proc/self/fd") // before Linux 5.11
}
