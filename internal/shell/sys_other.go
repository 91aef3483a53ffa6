//go:build !linux

package shell

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipe returns a pipe's read and write ends, both closed on exec. Without pipe2, the
// flag is set after the pipe is made, holding off forks meanwhile as the os package
// does, so that no command inherits either end.
func pipe() (r, w int, err error) {
	var fds [2]int
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(fds[:]); err != nil {
		return -1, -1, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds[0], fds[1], nil
}

// newWaker returns the descriptor the poll in pump watches to be interrupted, and the
// one written to interrupt it: without eventfds, the ends of a pipe that never blocks.
func newWaker() (r, w int, err error) {
	if r, w, err = pipe(); err != nil {
		return -1, -1, err
	}
	if err = unix.SetNonblock(r, true); err == nil {
		err = unix.SetNonblock(w, true)
	}
	if err != nil {
		_ = unix.Close(r)
		_ = unix.Close(w)
		return -1, -1, err
	}
	return r, w, nil
}

// setPidFD does nothing: there are no pidfds here, and a goroutine waits for the shell
// instead (see [Start]).
func setPidFD(*syscall.SysProcAttr, *int) {}

// memFile returns nil: there are no in-memory files here.
func memFile(string) *os.File { return nil }
