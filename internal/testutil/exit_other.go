//go:build !linux

package testutil

import (
	"time"

	"golang.org/x/sys/unix"
)

// Exited waits until process pid has exited, at most until deadline, and reports whether
// it did. Without pidfds it looks every few milliseconds; a zombie still counts as
// running here.
func Exited(pid int, deadline time.Time) bool {
	for unix.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
