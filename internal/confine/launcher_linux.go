package confine

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A session's launcher is Boris's own program started again, with launcherEnv set and one
// end of a socket pair as descriptor 3. It enters the session's Landlock domain on one of
// its threads and forks the session's commands from there, with CLONE_PARENT, so that
// Boris, never in any domain, is their parent: it waits for them and tracks them as it
// would commands it started itself. The launcher ends when its socket does.

// launcherEnv, set to 1 in a process's environment, makes it a launcher.
const launcherEnv = "BORIS_LAUNCHER"

// launcherComm is the name of the launcher's forking thread, and so of each process it
// forks until that process runs its program: a fork that failed to run it keeps the name.
const launcherComm = "boris-launcher"

// Kinds of replies from the launcher.
const (
	replyTaken  = 1 // the request was read; nothing is forked before this is sent
	replyResult = 2 // the outcome: a pid, or an error
)

// asked records that the program asked [IsLauncher], and so can serve as a launcher when
// started again: only then does a Domain start one.
var asked atomic.Bool

// IsLauncher reports whether this process was started as a launcher of confined commands,
// to run [RunLauncher] and exit. A launcher is this same program started again, so every
// program that confines commands asks first thing in main (a test binary in TestMain);
// one that never asked cannot start launchers.
func IsLauncher() bool {
	asked.Store(true)
	v, _ := syscall.Getenv(launcherEnv)
	return v == "1"
}

// RunLauncher serves as a launcher on descriptor 3 until Boris closes it, and returns the
// exit status.
func RunLauncher() int {
	const sock = 3
	if typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_SEQPACKET {
		fmt.Fprintf(os.Stderr, "%s=1 is set, which only Boris sets in the launchers it starts: unset it\n", launcherEnv)
		return 2
	}
	for fd := range 4 {
		unix.CloseOnExec(fd) // nothing of the launcher's own reaches the commands
	}
	// Commands share a thread's domain with the launcher; undumpable, and with
	// CAP_SYS_PTRACE gone from that thread, it cannot be traced or read by them.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "boris launcher: making it undumpable:", err)
		return 1
	}
	return offMainThread(func() int { return serveLauncher(sock) })
}

// offMainThread runs f on a thread of its own that is not the main thread, and returns
// what f returns. The calling goroutine keeps its thread locked, never unlocked: the
// runtime gives a locked thread to no other goroutine, and ends it with its goroutine.
// So when the caller has the main thread, f runs on another; else f runs here.
func offMainThread(f func() int) int {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		return f()
	}
	status := make(chan int)
	go func() { status <- offMainThread(f) }()
	return <-status
}

// serveLauncher enters the domain the policy that comes first on sock describes, then
// forks what each request after it asks for, until sock ends.
func serveLauncher(sock int) int {
	msg, fds, err := recv(sock, time.Time{})
	closeAll(fds)
	if err != nil {
		return 1
	}
	p, rules, err := decodePolicy(msg)
	if err == nil && unix.Gettid() == unix.Getpid() {
		err = errors.New("the launcher's forking thread is its main thread")
	}
	if err == nil {
		err = restrictThread(p, rules)
	}
	if err == nil {
		name := []byte(launcherComm + "\x00")
		err = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
	}
	if sendResult(sock, 0, -1, err) != nil || err != nil {
		return 1
	}
	for {
		msg, fds, err := recv(sock, time.Time{})
		if err != nil {
			return 0 // Boris closed the socket, or is gone
		}
		if err := send(sock, []byte{replyTaken}, nil, time.Time{}); err != nil {
			closeAll(fds)
			return 0
		}
		pid, pidfd, err := forkRequest(msg, fds)
		closeAll(fds) // else pipes would never reach their end
		err = sendResult(sock, pid, pidfd, err)
		if pidfd >= 0 {
			_ = unix.Close(pidfd)
		}
		if err != nil {
			return 0
		}
	}
}

// forkRequest starts what the request msg asks for, with Boris as its parent.
func forkRequest(msg []byte, fds []int) (pid, pidfd int, err error) {
	r, err := decodeRequest(msg, fds)
	if err != nil {
		return 0, -1, err
	}
	r.sys.Cloneflags |= syscall.CLONE_PARENT
	pidfd = -1
	if r.pidfd {
		r.sys.PidFD = &pidfd
	}
	pid, err = syscall.ForkExec(r.path, r.argv, &syscall.ProcAttr{Dir: r.dir, Env: r.env, Files: r.files, Sys: r.sys})
	return pid, pidfd, err
}

func sendResult(sock, pid, pidfd int, err error) error {
	var e enc
	e.b = append(e.b, replyResult)
	e.int(pid)
	e.int(int(errnoOf(err)))
	if err != nil {
		e.str(err.Error())
	} else {
		e.str("")
	}
	var fds []int
	if pidfd >= 0 {
		fds = []int{pidfd}
	}
	return send(sock, e.b, fds, time.Time{})
}

// encodePolicy writes what a launcher needs to enter the domain of p and rules.
func encodePolicy(p *Policy, rules []rule) []byte {
	var e enc
	e.int(p.abi)
	e.bool(p.paths)
	e.bool(p.network)
	e.bool(p.scopeUnix)
	e.bool(p.scopeSignal)
	e.int(len(rules))
	for _, r := range rules {
		e.str(r.path)
		e.int(int(r.access))
	}
	return e.b
}

func decodePolicy(msg []byte) (*Policy, []rule, error) {
	d := dec{b: msg}
	p := &Policy{abi: d.int(), paths: d.bool(), network: d.bool(), scopeUnix: d.bool(), scopeSignal: d.bool()}
	n := d.int()
	if n < 0 || n > len(msg) {
		return nil, nil, errShort
	}
	rules := make([]rule, n)
	for i := range rules {
		rules[i] = rule{path: d.str(), access: access(d.int())}
	}
	return p, rules, d.err
}

// request is what syscall.ForkExec takes, as a launcher receives it.
type request struct {
	path, dir string
	argv, env []string
	files     []uintptr
	sys       *syscall.SysProcAttr
	pidfd     bool
}

// encodeRequest writes the request to fork path: the message, and the descriptors to
// send with it. Only the attributes Boris uses can be asked for.
func encodeRequest(path string, argv []string, attr *syscall.ProcAttr) ([]byte, []int, error) {
	sys := attr.Sys
	if sys == nil {
		sys = &syscall.SysProcAttr{}
	}
	if sys.Chroot != "" || sys.Credential != nil || sys.Ptrace || sys.Noctty || sys.Foreground ||
		sys.Pdeathsig != 0 || sys.Cloneflags != 0 || sys.Unshareflags != 0 || sys.UidMappings != nil || sys.GidMappings != nil ||
		len(sys.AmbientCaps) > 0 || sys.UseCgroupFD {
		return nil, nil, errors.New("the launcher cannot start a process with these attributes")
	}
	dir := attr.Dir
	if dir == "" {
		// Where syscall.ForkExec would start it: the launcher's own is /.
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, nil, err
		}
	}
	var e enc
	e.str(path)
	e.str(dir)
	e.strs(argv)
	e.strs(attr.Env)
	e.bool(sys.Setsid)
	e.bool(sys.Setpgid)
	e.int(sys.Pgid)
	e.bool(sys.PidFD != nil)
	e.bool(sys.Setctty)
	e.int(sys.Ctty)
	var fds []int
	e.int(len(attr.Files))
	for _, f := range attr.Files {
		if int(f) < 0 {
			e.int(-1)
			continue
		}
		e.int(len(fds))
		fds = append(fds, int(f))
	}
	if len(fds) > maxFDs {
		return nil, nil, fmt.Errorf("the launcher takes at most %d descriptors", maxFDs)
	}
	return e.b, fds, nil
}

func decodeRequest(msg []byte, fds []int) (*request, error) {
	d := dec{b: msg}
	r := &request{path: d.str(), dir: d.str(), argv: d.strs(), env: d.strs(), sys: &syscall.SysProcAttr{}}
	r.sys.Setsid, r.sys.Setpgid, r.sys.Pgid, r.pidfd = d.bool(), d.bool(), d.int(), d.bool()
	r.sys.Setctty, r.sys.Ctty = d.bool(), d.int()
	n := d.int()
	if n < 0 || n > len(msg) {
		return nil, errShort
	}
	r.files = make([]uintptr, n)
	for i := range r.files {
		f := d.int()
		switch {
		case f >= len(fds) || f < -1:
			d.err = errShort
		case f >= 0:
			f = fds[f]
		}
		r.files[i] = uintptr(f) // -1 closes that descriptor in the child
	}
	return r, d.err
}
