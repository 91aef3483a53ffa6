package shell

import (
	"fmt"
	"os"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TTYSize is the window size of a command's pseudo-terminal.
type TTYSize struct{ Rows, Cols uint16 }

// openTTY opens the pseudo-terminal of a command run in one ([Command.TTY]) and the
// wakeup descriptors. The master is kept for input (p.tty) and read, through a descriptor
// of its own, as the command's stdout; the returned slave is the command's stdin, stdout
// and stderr, to be closed once the command has started, so that the master reaches its
// end once the last process holding the terminal is gone.
func (p *Process) openTTY(size TTYSize) (*os.File, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		if master != nil {
			_ = master.Close()
		}
		_ = slave.Close()
		return nil, err
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: size.Rows, Cols: size.Cols}); err != nil {
		return fail(fmt.Errorf("setting the terminal's size: %w", err))
	}
	// The master is made non-blocking and put in Go's poller, for writes with deadlines;
	// pump polls a duplicate (non-blocking too: the flag belongs to the open file they
	// share), which FlushTTY reads without blocking.
	rc, err := master.SyscallConn()
	if err != nil {
		return fail(err)
	}
	mfd := -1
	if cerr := rc.Control(func(fd uintptr) { mfd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 3) }); cerr != nil || err != nil {
		return fail(fmt.Errorf("duplicating the terminal's descriptor: %w", cmpErr(cerr, err)))
	}
	_ = master.Close()
	master = nil
	if err := unix.SetNonblock(mfd, true); err != nil {
		_ = unix.Close(mfd)
		return fail(err)
	}
	if p.pipes[0], err = unix.FcntlInt(uintptr(mfd), unix.F_DUPFD_CLOEXEC, 3); err != nil {
		p.pipes[0] = -1
		_ = unix.Close(mfd)
		return fail(fmt.Errorf("duplicating the terminal's descriptor: %w", err))
	}
	p.tty = os.NewFile(uintptr(mfd), "/dev/ptmx")
	if p.wakeFD, p.wakeW, err = newWaker(); err != nil {
		closeFD(&p.pipes[0])
		_ = p.tty.Close()
		p.tty = nil
		return fail(fmt.Errorf("creating a wakeup descriptor: %w", err))
	}
	p.ttyName = slave.Name()
	p.Stdout.keepText()
	return slave, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TTY returns the master side of the command's pseudo-terminal, or nil when it runs
// without one. Writing to it is typing at the terminal; it is closed with the Process.
func (p *Process) TTY() *os.File { return p.tty }

// TTYName returns the name of the command's terminal (/dev/pts/N), or "".
func (p *Process) TTYName() string { return p.ttyName }

// PID returns the process id of the command's shell.
func (p *Process) PID() int { return p.pid }

// Members returns the processes of the command that still run, the shell included
// while it runs, as far as they can be tracked (its cgroup, or its process group).
func (p *Process) Members() []int { return p.fam.members() }

// FlushTTY takes in what the command wrote to its terminal until now: output still on
// its way through the kernel (a terminal's output is handed from the writer to the
// reader by a kernel worker, a moment later) is waited for and read, as a read(2) of the
// master does when nothing has arrived yet. It reports whether there was any.
func (p *Process) FlushTTY() bool {
	if p.tty == nil {
		return false
	}
	p.ttyMu.Lock()
	defer p.ttyMu.Unlock()
	fd := p.pipes[0]
	if fd < 0 || isClosed(p.waited) {
		return false
	}
	bufp := buffers.Get().(*[]byte)
	defer buffers.Put(bufp)
	got := false
	for {
		n, err := unix.Read(fd, *bufp)
		if n <= 0 || err != nil {
			return got
		}
		got = true
		_, _ = p.Stdout.Write((*bufp)[:n])
	}
}

// hangUp sends SIGHUP where a terminal's hang-up would: a shell reading a terminal
// ignores SIGTERM, and ends on SIGHUP.
func (p *Process) hangUp() {
	if p.tty == nil {
		return
	}
	if p.alive() {
		_ = syscall.Kill(-p.pgid, syscall.SIGHUP)
	}
	p.fam.signal(syscall.SIGHUP)
}
