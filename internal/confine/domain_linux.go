package confine

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// Domain is one session's Landlock domain: the commands it starts, and their children, may
// reach only what its [Policy] and the session's own paths allow. It is served by a
// launcher process (launcher_linux.go), started on first use and again if it ends. Close
// it when the session ends.
type Domain struct {
	policy []byte // what each launcher is told to enter

	// Bounds on the launcher's answers: starting and entering the domain; taking a
	// request, which it does at once unless it is stopped or gone; and forking, which
	// waits for the program to start running.
	startTimeout, takeTimeout, forkTimeout time.Duration

	mu     sync.Mutex // serialises requests; held across the round trip
	l      *launcher  // nil until started, and after it ended
	closed bool
}

// launcher is one launcher process, Boris's child.
type launcher struct {
	sock   int // Boris's end of the socket pair
	proc   *os.Process
	exited chan struct{} // closed once it is reaped
}

// errNotTaken is a request the launcher never took: it is safe to send it again.
var errNotTaken = errors.New("the launcher did not take the request")

// Domain makes a new Domain: what p allows, plus write (read, write and run beneath)
// and read (read only) for this domain's commands alone. Paths that do not exist are
// left out. Its launcher is started at once, so that a policy the kernel refuses is
// reported here.
func (p *Policy) Domain(write, read []string) (*Domain, error) {
	if !p.Confined() {
		return nil, errors.New("commands are not confined")
	}
	rules := slices.Clone(p.rules)
	for _, w := range write {
		rules = append(rules, rule{w, readWrite})
	}
	for _, r := range read {
		rules = append(rules, rule{r, readOnly})
	}
	d := &Domain{policy: encodePolicy(p, rules), startTimeout: 30 * time.Second, takeTimeout: 5 * time.Second, forkTimeout: 2 * time.Minute}
	l, err := d.start()
	if err != nil {
		return nil, err
	}
	d.l = l
	return d, nil
}

// ForkExec starts a process as syscall.ForkExec does, in the Domain: path, argv and attr
// are as it takes them, and so are the results. Setsid, Setpgid, Setctty (with Ctty, for
// a command in a pseudo-terminal) and PidFD are the only attributes it takes in attr.Sys: not UseCgroupFD, as the kernel refuses
// CLONE_INTO_CGROUP together with CLONE_PARENT (the latter wants no exit signal, and Go
// always asks for SIGCHLD). Boris is the process's parent.
func (d *Domain) ForkExec(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	if attr == nil {
		attr = &syscall.ProcAttr{}
	}
	msg, fds, err := encodeRequest(path, argv, attr)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for try := 0; ; try++ {
		if d.closed {
			return 0, ErrClosed
		}
		if d.l == nil {
			if d.l, err = d.start(); err != nil {
				return 0, err
			}
		}
		pid, pidfd, err := d.l.fork(msg, fds, d.takeTimeout, d.forkTimeout)
		if errors.Is(err, errNotTaken) || errors.Is(err, ErrLauncherLost) {
			d.l.stop()
			d.l = nil
			if errors.Is(err, errNotTaken) && try == 0 {
				continue // it ended between requests (a command killed it): a new one takes over
			}
			return 0, err
		}
		if attr.Sys != nil && attr.Sys.PidFD != nil {
			*attr.Sys.PidFD = pidfd
		} else if pidfd >= 0 {
			_ = unix.Close(pidfd)
		}
		return pid, err
	}
}

// Close ends the Domain's launcher and waits for it. Processes it started keep running,
// confined. It is safe to call more than once.
func (d *Domain) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.l != nil {
		d.l.close(time.Second)
		d.l = nil
	}
}

// start starts a launcher and has it enter the domain.
func (d *Domain) start() (*launcher, error) {
	if !asked.Load() {
		return nil, errors.New("starting the launcher of confined commands: this program never asked confine.IsLauncher, first thing in main (or TestMain), so it cannot serve as one")
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("starting the launcher of confined commands: %w", err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "launcher socket")
	defer theirs.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		_ = unix.Close(pair[0])
		return nil, err
	}
	defer null.Close()
	// Boris's session, so that it is never taken for a command's orphan; a process group
	// of its own, so that a terminal's ^C does not reach it. Two Ps: with one, each fork
	// took 0.3–0.4 ms longer (BenchmarkForkExec), and more buy nothing.
	proc, err := os.StartProcess("/proc/self/exe", []string{launcherComm}, &os.ProcAttr{
		Dir:   "/",
		Env:   []string{launcherEnv + "=1", "GOMAXPROCS=2"},
		Files: []*os.File{null, null, os.Stderr, theirs},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		_ = unix.Close(pair[0])
		return nil, fmt.Errorf("starting the launcher of confined commands: %w", err)
	}
	l := &launcher{sock: pair[0], proc: proc, exited: make(chan struct{})}
	go func() {
		_, _ = proc.Wait()
		close(l.exited)
	}()
	deadline := time.Now().Add(d.startTimeout)
	err = send(l.sock, d.policy, nil, deadline)
	if err == nil {
		_, _, err = l.result(deadline)
	}
	if err != nil {
		l.stop()
		return nil, fmt.Errorf("confining commands: %w", err)
	}
	return l, nil
}

// fork has the launcher fork the request msg, sending fds with it. It returns errNotTaken
// when the launcher never took the request, and ErrLauncherLost when it ended after.
func (l *launcher) fork(msg []byte, fds []int, take, fork time.Duration) (pid, pidfd int, err error) {
	// A command may have stopped it (SIGSTOP): it goes on.
	l.resume()
	// Before the request is sent: the launcher may fork long before Boris reads that it
	// took the request.
	since := procfs.BootTicks()
	if err := send(l.sock, msg, fds, time.Now().Add(take)); err != nil {
		return 0, -1, fmt.Errorf("%w: %w", errNotTaken, err)
	}
	reply, got, err := l.recv(time.Now().Add(take))
	closeAll(got)
	if err != nil || len(reply) != 1 || reply[0] != replyTaken {
		return 0, -1, fmt.Errorf("%w: %v", errNotTaken, err)
	}
	pid, pidfd, err = l.result(time.Now().Add(fork))
	if errors.Is(err, errEOF) || errors.Is(err, errTimeout) || errors.Is(err, errShort) {
		return 0, -1, ErrLauncherLost
	}
	if err != nil && pid == 0 {
		reapFailedFork(since)
	}
	return pid, pidfd, err
}

// resumeEvery is how often a launcher is told to go on while Boris waits for it.
const resumeEvery = 250 * time.Millisecond

// recv reads a message from the launcher by the deadline, telling it to go on every
// resumeEvery meanwhile: a command of its session can stop it at any moment.
func (l *launcher) recv(deadline time.Time) ([]byte, []int, error) {
	for {
		step := time.Now().Add(resumeEvery)
		if deadline.Before(step) {
			step = deadline
		}
		msg, fds, err := recv(l.sock, step)
		if err != errTimeout || !time.Now().Before(deadline) {
			return msg, fds, err
		}
		l.resume()
	}
}

// resume continues the launcher if it is stopped, and discards a stop on its way.
func (l *launcher) resume() { _ = l.proc.Signal(syscall.SIGCONT) }

// result reads the launcher's answer: a pid and a pidfd (or -1), or what went wrong.
func (l *launcher) result(deadline time.Time) (pid, pidfd int, err error) {
	msg, fds, err := l.recv(deadline)
	if err != nil {
		return 0, -1, err
	}
	if len(msg) == 0 || msg[0] != replyResult || len(fds) > 1 {
		closeAll(fds)
		return 0, -1, errShort
	}
	d := dec{b: msg[1:]}
	pid, errno, text := d.int(), syscall.Errno(d.int()), d.str()
	pidfd = -1
	if len(fds) == 1 {
		pidfd = fds[0]
	}
	switch {
	case d.err != nil:
		err = d.err
	case errno != 0:
		err = errno
	case text != "":
		err = errors.New(text)
	}
	if err != nil && pidfd >= 0 {
		_ = unix.Close(pidfd)
		pidfd = -1
	}
	return pid, pidfd, err
}

// close closes the socket, which ends the launcher, and waits for it to be reaped; past
// wait, it is killed.
func (l *launcher) close(wait time.Duration) {
	_ = unix.Close(l.sock)
	select {
	case <-l.exited:
		return
	case <-time.After(wait):
	}
	_ = l.proc.Kill()
	<-l.exited
}

// stop kills the launcher, stopped or hung as it may be, and reaps it.
func (l *launcher) stop() {
	_ = l.proc.Kill()
	l.close(0)
}

// reapFailedFork reaps the child a launcher forked since the given boot time that failed
// to run its program. syscall.ForkExec reaps such a child itself, but Boris is its parent
// and the pid is not reported, so Boris finds it: a child of its own that still has the
// launcher's name (it never ran a program) and exited with the status Go's forked child
// exits with when exec fails.
func reapFailedFork(since uint64) {
	self := os.Getpid()
	// It exits as soon as it is scheduled, which on a loaded machine can take a while.
	for deadline, pause := time.Now().Add(5*time.Second), time.Millisecond; time.Now().Before(deadline); pause = min(2*pause, 50*time.Millisecond) {
		waiting := false
		for _, pid := range children(self, since) {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
				continue
			}
			if info.Signo == 0 {
				waiting = true // still running: another launch not yet in its program, or ours exiting
				continue
			}
			if info.Code == 1 /* CLD_EXITED */ && exitStatus(&info) == 253 {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				return
			}
		}
		if !waiting {
			return
		}
		time.Sleep(pause)
	}
}

// exitStatus returns si_status of a SIGCHLD siginfo.
func exitStatus(info *unix.Siginfo) int32 {
	// si_pid, si_uid and si_status follow three ints, aligned as a pointer.
	off := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off+8))
}

// children returns Boris's children named after the launcher that started since the
// given boot time (one clock tick early, as start times are rounded).
func children(self int, since uint64) []int {
	var pids []int
	for _, p := range procfs.All() {
		if p.Comm == launcherComm && p.PPID == self && p.Start+1 >= since {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
