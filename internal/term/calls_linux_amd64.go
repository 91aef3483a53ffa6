//go:build linux

package term

import "golang.org/x/sys/unix"

func kind(nr int) call {
	switch nr {
	case unix.SYS_READ, unix.SYS_READV, unix.SYS_PREAD64:
		return callRead
	case unix.SYS_SELECT, unix.SYS_PSELECT6:
		return callSelect
	case unix.SYS_POLL, unix.SYS_PPOLL, unix.SYS_EPOLL_WAIT, unix.SYS_EPOLL_PWAIT, unix.SYS_EPOLL_PWAIT2:
		return callPoll
	}
	return callOther
}
