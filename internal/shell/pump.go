package shell

import (
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command's output and exit are watched with one poll(2) over its two pipes, the
// shell's pidfd and an eventfd (where there are none, a pipe, woken by a goroutine
// blocked in wait(2) once the shell exits), from the goroutine that waits for it. Compared with a
// goroutine per pipe, a goroutine blocked in wait(2) and the runtime's netpoller between
// them, that is one wakeup per event instead of several handoffs, and no epoll
// registration per pipe: about a tenth of a millisecond per command.

// pump reads the command's output and reaps the shell as events come, until done
// reports true; it reports false if the deadline (if not zero) passes first.
func (p *Process) pump(done func() bool, deadline time.Time) bool {
	var set [4]unix.PollFd
	for !done() {
		fds := set[:0]
		for _, fd := range p.pipes {
			if fd >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
		}
		if p.pidfd >= 0 && !isClosed(p.exited) {
			fds = append(fds, unix.PollFd{Fd: int32(p.pidfd), Events: unix.POLLIN})
		}
		fds = append(fds, unix.PollFd{Fd: int32(p.wakeFD), Events: unix.POLLIN})
		timeout := -1
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false
			}
			timeout = int((left + time.Millisecond - 1) / time.Millisecond)
		}
		if _, err := unix.Poll(fds, timeout); err != nil {
			if err != unix.EINTR {
				time.Sleep(time.Millisecond) // out of memory, say: try again, gently
			}
			continue
		}
		for _, f := range fds {
			if f.Revents == 0 {
				continue
			}
			switch fd := int(f.Fd); {
			case fd == p.wakeFD:
				var b [8]byte
				_, _ = unix.Read(fd, b[:])
			case fd == p.pidfd:
				p.reapShell()
			default:
				p.readPipe(fd)
			}
		}
	}
	return true
}

// readPipe reads what is waiting in one of the pipes into its Output, and closes the
// pipe at its end. The buffer is held only for the read: commands waiting for output
// hold none.
func (p *Process) readPipe(fd int) {
	i := 0
	if fd == p.pipes[1] {
		i = 1
	}
	if p.tty != nil {
		// FlushTTY reads the terminal too: one reader at a time keeps the output in order.
		p.ttyMu.Lock()
		defer p.ttyMu.Unlock()
	}
	bufp := buffers.Get().(*[]byte)
	defer buffers.Put(bufp)
	buf := *bufp
	n, err := unix.Read(fd, buf)
	switch {
	case n > 0:
		_, _ = [2]*Output{p.Stdout, p.Stderr}[i].Write(buf[:n])
	case err == unix.EINTR || err == unix.EAGAIN:
	default: // the end, or a broken pipe
		closeFD(&p.pipes[i])
	}
}

// readAll reports whether both pipes are at their end.
func (p *Process) readAll() bool { return p.pipes[0] < 0 && p.pipes[1] < 0 }

// discard reads the pipes of a command that left processes behind holding them, and
// throws the output away, until they close or [Process.Release].
func (p *Process) discard() {
	defer close(p.readersDone)
	p.pump(func() bool { return p.quit.Load() || p.readAll() }, time.Time{})
}

// reapShell collects the shell's exit status once its pidfd says it has exited.
func (p *Process) reapShell() {
	var ws syscall.WaitStatus
	for {
		pid, err := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err == nil && pid == 0:
			return // not yet, after all
		}
		p.setExited(ws, err != nil)
		return
	}
}

func (p *Process) setExited(ws syscall.WaitStatus, lost bool) {
	p.status, p.lost, p.exitedAt = ws, lost, time.Now()
	close(p.exited)
}

// wake interrupts the poll in pump, if the wakeup descriptor is still open.
func (p *Process) wake() {
	p.fdMu.RLock()
	defer p.fdMu.RUnlock()
	if p.wakeW >= 0 {
		one := [8]byte{1} // a little-endian uint64, as an eventfd wants
		_, _ = unix.Write(p.wakeW, one[:])
	}
}

// closeFDs closes the pipes, the pidfd and the wakeup descriptors.
func (p *Process) closeFDs() {
	closeFD(&p.pipes[0])
	closeFD(&p.pipes[1])
	closeFD(&p.pidfd)
	if p.tty != nil {
		_ = p.tty.Close()
	}
	p.fdMu.Lock()
	if p.wakeW == p.wakeFD {
		p.wakeW = -1
	}
	closeFD(&p.wakeW)
	closeFD(&p.wakeFD)
	p.fdMu.Unlock()
}

func closeFD(fd *int) {
	if *fd >= 0 {
		_ = unix.Close(*fd)
		*fd = -1
	}
}

// wait4 waits for the child pid to exit.
func wait4(pid int, ws *syscall.WaitStatus) error {
	for {
		_, err := syscall.Wait4(pid, ws, 0, nil)
		if err != syscall.EINTR {
			return err
		}
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// buffers recycles read buffers, one pipe's worth: a call that prints nothing should
// not cost 64 kB.
var buffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
