package shell

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipe returns a pipe's read and write ends, both closed on exec.
func pipe() (r, w int, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, err
	}
	return fds[0], fds[1], nil
}

// newWaker returns the descriptor the poll in pump watches to be interrupted, and the
// one written to interrupt it: here one eventfd for both.
func newWaker() (r, w int, err error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, -1, err
	}
	return fd, fd, nil
}

// setPidFD asks for a pidfd for the shell in *fd, where the kernel hands them out.
func setPidFD(sys *syscall.SysProcAttr, fd *int) {
	if pidfdsWork() {
		sys.PidFD = fd
	}
}

// pidfdsWork reports whether the kernel hands out pidfds (Linux 5.3 and later) and
// lets this process have them.
var pidfdsWork = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	_ = unix.Close(fd)
	return true
})

// memFile returns an unnamed file in memory, or nil where the kernel offers none.
func memFile(name string) *os.File {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), name)
}
