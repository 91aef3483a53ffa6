package testutil

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Exited waits until process pid has exited (a zombie counts as exited), at most until
// deadline, and reports whether it did. The wait is a poll(2) on a pidfd, which becomes
// readable when the process exits: no sleeping between looks.
func Exited(pid int, deadline time.Time) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true // gone, and reaped
	}
	if err != nil {
		return !alive(pid)
	}
	defer unix.Close(fd)
	for {
		ms := time.Until(deadline).Milliseconds()
		if ms <= 0 {
			return false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(min(ms, 1<<30)))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

func alive(pid int) bool { return unix.Kill(pid, 0) == nil }
