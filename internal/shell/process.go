package shell

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults for [Command] fields left zero.
const (
	DefaultGrace = 5 * time.Second        // SIGTERM to SIGKILL
	DefaultDrain = 250 * time.Millisecond // pipes held open after the shell exits
)

// Command says what to run and how.
type Command struct {
	Shell  string // path of the shell: /bin/bash, or a POSIX sh
	Script string // run as one unit, exactly as `shell -c script` would
	Dir    string // working directory
	Env    []string
	// StateDir is a private directory for the state report and spilled output.
	StateDir string
	// Name names this command's spill files in StateDir: Name.stdout and Name.stderr.
	Name string
	// Grace is how long the group has to exit after SIGTERM before SIGKILL.
	Grace time.Duration
	// Drain is how long to keep reading after the shell exits while processes it left
	// behind hold its output open.
	Drain time.Duration
	// Mark, if set, is put in the command's environment as BORIS_RUN=Mark, so that
	// processes that leave its process group (setsid) can still be found and stopped
	// ([Marked]). Give each command its own, with a common prefix per owner.
	Mark string
	// MaxSpillFile bounds each stream's spill file: past it, only the head and, once the
	// stream ends, the tail are kept, with a line saying what was dropped. 0 means
	// [DefaultMaxSpillFile]; negative, no limit.
	MaxSpillFile int64
	// MaxLines, when positive, is the most lines an excerpt of each stream shows.
	MaxLines int
	// OnOutput, if set, sees every chunk of stdout and stderr as it arrives, from the
	// goroutine reading that stream.
	OnOutput OutputFunc
	// Launch, if set, starts the shell instead of syscall.ForkExec, taking and returning
	// what it does: a confinement domain starts it in the domain, so that the shell and
	// everything it starts are confined. This process must be the shell's parent. Launch
	// is not asked to start the shell in a cgroup (a confinement domain's launcher
	// cannot: see confine.Domain.ForkExec); the shell moves itself into its cgroup
	// instead, before it runs anything, through a descriptor open on the cgroup's
	// cgroup.procs.
	Launch ForkExec
	// TTY, if set, runs the command in a new pseudo-terminal of this size, as the
	// terminal's session leader: stdin, stdout and stderr are the terminal, and what it
	// prints arrives, merged, as Stdout. [Process.TTY] is the terminal's master side.
	TTY *TTYSize
}

// ForkExec starts a process as syscall.ForkExec does.
type ForkExec func(path string, argv []string, attr *syscall.ProcAttr) (pid int, err error)

// Stream names an output stream.
type Stream int

// The streams of a command.
const (
	Stdout Stream = iota
	Stderr
)

// OutputFunc sees a chunk of a stream's output.
type OutputFunc func(s Stream, p []byte)

func (f OutputFunc) on(s Stream) func([]byte) {
	if f == nil {
		return nil
	}
	return func(p []byte) { f(s, p) }
}

// Process is a started command.
type Process struct {
	Stdout, Stderr *Output

	pid     int
	pgid    int
	start   time.Time
	report  *os.File // the state report, written by the shell as it exits
	grace   time.Duration
	drain   time.Duration
	env     []string   // the environment it started with
	mark    string     // its BORIS_RUN value, or ""
	fam     *family    // every process it started
	script  string     // the file holding a long script, removed once the shell is done; or ""
	tty     *os.File   // the master side of the command's pseudo-terminal, or nil
	ttyName string     // the name of its slave side
	ttyMu   sync.Mutex // held to read the terminal's output, see FlushTTY

	// The command's output and exit are watched with poll(2) from the goroutine in
	// [Process.Wait] (see pump.go): no reader goroutines, no netpoller round trips.
	pipes  [2]int // read ends of stdout and stderr; -1 once at EOF or closed
	pidfd  int    // readable once the shell has exited; -1 where pidfds are missing
	wakeFD int    // readable when the poll is to be interrupted (sys_linux.go, sys_other.go)
	wakeW  int    // written to interrupt the poll; the same as wakeFD for an eventfd

	exited   chan struct{}      // closed once the shell is reaped
	status   syscall.WaitStatus // how it ended, once exited is closed
	lost     bool               // the status could not be had
	exitedAt time.Time

	waited      chan struct{} // closed when Wait returns
	readersDone chan struct{} // closed once both pipes reached EOF or were closed
	quit        atomic.Bool   // tells the goroutine draining a lingering command's pipes to stop

	fdMu      sync.RWMutex // held to write to wakeW, and to close it
	stopOnce  sync.Once
	closeOnce sync.Once
}

// Result is how a command ended.
type Result struct {
	ExitCode int    // as $? would show it: 128+n when killed by signal n
	Signal   string // the signal that killed the shell, such as "SIGKILL"; "" if it exited
	// Stopped is why the command was stopped (the cause of the context passed to
	// [Process.Wait]), or nil if it ended by itself.
	Stopped  error
	Duration time.Duration
	Cwd      string // where the shell ended; "" if it did not say
	// Env is the environment for the next command: the variables exported at exit, as
	// KEY=value, plus what the shell could not have changed; nil if it did not say.
	Env []string
	// TooLarge names the variables whose change was left out of Env, so that they keep
	// their old value, because no command could be started with the new one
	// ([maxEnvEntry], [maxEnvTotal]).
	TooLarge []string
	// Lingering reports that processes the command started are still running (for
	// example `server &`); [Process.Close] ends them.
	Lingering bool
	// ProcessLimit is the limit on tasks (processes and threads) that the command hit, for
	// which it was killed with everything it started; 0 if it hit none.
	ProcessLimit int
}

// Run starts c and waits for it; see [Process.Wait].
func Run(ctx context.Context, c Command) (*Process, Result, error) {
	p, err := Start(c)
	if err != nil {
		return nil, Result{}, err
	}
	return p, p.Wait(ctx), nil
}

// Start starts c in its own session and process group, with no controlling terminal.
func Start(c Command) (*Process, error) {
	c = c.withDefaults()
	p := newProcess(c)
	// The shell joins its cgroups by itself when it cannot be started in them.
	moves := c.Launch != nil && cgroupsUsable() || joinsPidsV1()
	inv, err := wrap(c, moves, limitLine())
	if err != nil {
		return nil, err
	}
	p.script = inv.script
	devNull, err := openDevNull()
	if err != nil {
		return nil, err
	}
	// The report goes to a file, not a pipe: it is complete once the shell has exited,
	// so reading it needs no wakeup per write and no wait for an EOF that a leftover
	// process could hold back.
	if inv.reported {
		if p.report, err = newReportFile(c.StateDir); err != nil {
			removeScript(p.script)
			return nil, err
		}
	}
	writeEnds := [2]int{-1, -1}
	var slave *os.File
	if c.TTY != nil {
		slave, err = p.openTTY(*c.TTY)
	} else {
		err = p.openFDs(&writeEnds)
	}
	if err == nil {
		// Stdin is /dev/null, never Boris's own stdin; fd 3 carries the state report.
		files := []uintptr{devNull.Fd(), uintptr(writeEnds[0]), uintptr(writeEnds[1])}
		if slave != nil {
			files = []uintptr{slave.Fd(), slave.Fd(), slave.Fd()}
		}
		if p.report != nil {
			files = append(files, p.report.Fd())
		}
		err = p.spawn(c, inv, files)
	}
	closeFD(&writeEnds[0])
	closeFD(&writeEnds[1])
	if slave != nil {
		_ = slave.Close()
	}
	if err != nil {
		p.closeFDs()
		if p.report != nil {
			_ = p.report.Close()
		}
		removeScript(p.script)
		return nil, err
	}
	if p.pidfd < 0 {
		// No pidfd: a goroutine waits instead, and wakes the poll once the shell is reaped.
		go func() {
			var ws syscall.WaitStatus
			err := wait4(p.pid, &ws)
			p.setExited(ws, err != nil)
			p.wake()
		}()
	}
	return p, nil
}

// withDefaults fills in the fields of c left zero.
func (c Command) withDefaults() Command {
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Drain <= 0 {
		c.Drain = DefaultDrain
	}
	if c.Name == "" {
		c.Name = "cmd-" + randomHex(4)
	}
	if c.MaxSpillFile == 0 {
		c.MaxSpillFile = DefaultMaxSpillFile
	}
	return c
}

// newProcess returns the Process of c, not yet started.
func newProcess(c Command) *Process {
	spill := func(stream string) string {
		if c.StateDir == "" {
			return ""
		}
		return filepath.Join(c.StateDir, c.Name+"."+stream)
	}
	p := &Process{
		Stdout:      NewOutput(spill("stdout"), c.OnOutput.on(Stdout)),
		Stderr:      NewOutput(spill("stderr"), c.OnOutput.on(Stderr)),
		grace:       c.Grace,
		drain:       c.Drain,
		env:         c.Env,
		mark:        c.Mark,
		pipes:       [2]int{-1, -1},
		pidfd:       -1,
		wakeFD:      -1,
		wakeW:       -1,
		exited:      make(chan struct{}),
		waited:      make(chan struct{}),
		readersDone: make(chan struct{}),
	}
	p.Stdout.SetMaxFile(c.MaxSpillFile)
	p.Stderr.SetMaxFile(c.MaxSpillFile)
	p.Stdout.SetMaxLines(c.MaxLines)
	p.Stderr.SetMaxLines(c.MaxLines)
	return p
}

// openFDs opens the output pipes, whose write ends it puts in writeEnds, and the wakeup
// descriptors.
func (p *Process) openFDs(writeEnds *[2]int) error {
	var err error
	for i := range p.pipes {
		if p.pipes[i], writeEnds[i], err = pipe(); err != nil {
			return fmt.Errorf("creating a pipe: %w", err)
		}
	}
	if p.wakeFD, p.wakeW, err = newWaker(); err != nil {
		return fmt.Errorf("creating a wakeup descriptor: %w", err)
	}
	return nil
}

// spawn starts the shell of c as inv says, with files as its descriptors.
func (p *Process) spawn(c Command, inv invocation, files []uintptr) error {
	// Its own session, so its own process group, and no controlling terminal: when Boris
	// runs in a terminal, sudo, ssh and the like fail at once instead of prompting there.
	sys := &syscall.SysProcAttr{Setsid: true}
	if c.TTY != nil {
		sys.Setctty, sys.Ctty = true, 0 // the terminal, as fd 0, becomes its controlling one
	}
	setPidFD(sys, &p.pidfd)
	// Everything the command starts is tracked from the start, in a cgroup of its own
	// where there is one (family_linux.go).
	fam := newFamily(sys, c.Launch != nil)
	if inv.moves {
		movers, err := fam.movers()
		if err != nil {
			fam.discard()
			return err
		}
		for len(files) < 4 {
			files = append(files, ^uintptr(0)) // closed: no report
		}
		files = append(files, movers...)
	}
	fam.spawning()
	// syscall.ForkExec rather than os.StartProcess or exec.Cmd: the shell's exit is
	// watched through the pidfd (or by a goroutine in wait4 where there is none), and
	// exec's per-call work (copying the environment into a map to deduplicate it, opening
	// /dev/null) is not needed here.
	attr := &syscall.ProcAttr{Dir: c.Dir, Env: inv.env, Files: files, Sys: sys}
	argv := append([]string{filepath.Base(c.Shell)}, inv.args...)
	forkExec := c.Launch
	if forkExec == nil {
		forkExec = syscall.ForkExec
	}
	pid, err := forkExec(c.Shell, argv, attr)
	var errno syscall.Errno
	if err != nil && errors.As(err, &errno) && fam.withoutCgroup(sys) {
		pid, err = forkExec(c.Shell, argv, attr) // a kernel without clone3 into a cgroup
	}
	if err != nil {
		fam.failed()
		return fmt.Errorf("starting %s in %s: %w", c.Shell, c.Dir, err)
	}
	fam.started(pid)
	p.pid, p.pgid, p.start, p.fam = pid, pid, time.Now(), fam
	return nil
}

// PGID returns the command's process group id.
func (p *Process) PGID() int { return p.pgid }

// Wait waits for the shell to exit, or, when ctx is done first, stops the whole group
// ([Process.Stop]) and records context.Cause(ctx) as the reason. It returns once the
// shell has exited and its output is read, waiting at most the drain time for pipes
// that processes left behind keep open. Output written after Wait returns is discarded.
// Wait must be called exactly once: it is what reads the output and reaps the shell.
func (p *Process) Wait(ctx context.Context) Result {
	defer close(p.waited)
	stopped := p.waitExit(ctx)
	removeScript(p.script) // the shell has read all it will
	held := !p.pump(p.readAll, time.Now().Add(p.drain))
	p.Stdout.Close()
	p.Stderr.Close()
	if held {
		// Something the command left running keeps the pipes open: drain them, without
		// keeping what they carry, so that it never blocks on a full pipe.
		go p.discard()
	} else {
		close(p.readersDone)
	}
	res := p.exitResult()
	res.Stopped = stopped
	if p.fam.checkLimit() {
		// Killed, or being killed, for it: see that nothing of it is left.
		res.ProcessLimit = int(p.fam.processLimit())
		p.Stop()
	}
	reap(p.pgid)
	res.Lingering = held || groupAlive(p.pgid) || p.fam.alive()
	return res
}

// waitExit reads the output until the shell has exited. When ctx is done first, it stops
// the whole group and returns context.Cause(ctx) once that is done; else nil.
func (p *Process) waitExit(ctx context.Context) error {
	if ctx.Err() != nil {
		// Stopped before it was waited for: it does not count as run to its end, however
		// quickly it might have finished.
		p.Stop()
		p.pump(func() bool { return isClosed(p.exited) }, time.Time{})
		return context.Cause(ctx)
	}
	var stopCause error
	stopped := make(chan struct{})
	watching := context.AfterFunc(ctx, func() {
		defer p.wake()
		defer close(stopped)
		select {
		case <-p.exited: // it finished at the same moment: not stopped
		default:
			stopCause = context.Cause(ctx)
			p.Stop()
		}
	})
	p.pump(func() bool { return isClosed(p.exited) }, time.Time{})
	if watching() {
		return nil
	}
	// The group is being stopped: keep reading until that is done.
	p.pump(func() bool { return isClosed(stopped) }, time.Time{})
	return stopCause
}

// exitResult is how the shell ended, and the state it reported, once it has exited.
func (p *Process) exitResult() Result {
	res := Result{Duration: p.exitedAt.Sub(p.start)}
	switch {
	case p.lost:
		res.ExitCode = -1 // the status was lost: nothing to report but that
	case p.status.Signaled():
		res.ExitCode = 128 + int(p.status.Signal())
		res.Signal = signalName(p.status.Signal())
	default:
		res.ExitCode = p.status.ExitStatus()
	}
	// The shell wrote the report before it exited: it is complete, or it never comes.
	// A stateless script has none: nothing changed.
	if p.report != nil {
		if cwd, env, err := parseState(readReport(p.report)); err == nil {
			res.Cwd = cwd
			res.Env, res.TooLarge = fitEnv(p.env, sessionEnv(p.env, env))
		}
	}
	return res
}

// Stop ends the whole process group and every other process the command started:
// SIGTERM, then SIGKILL if anything is left after the grace period. SIGTERM is sent again
// during the grace period to what still runs, so that one that landed while a shell was
// forking, and was lost, is not waited out. Stop returns once everything is gone or,
// failing that, a moment after the SIGKILL. It is safe to call more than once and from
// several goroutines.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		var escaped []int
		// A process may leave the group (setsid) at any moment, so the ones that did are
		// looked for after the group is signalled: one leaving in between is still found.
		signal := func(sig syscall.Signal) bool {
			group := p.alive()
			if group {
				_ = syscall.Kill(-p.pgid, sig)
			}
			family := p.fam.signal(sig)
			for _, pid := range Marked(p.mark, p.pgid) {
				if !slices.Contains(escaped, pid) {
					escaped = append(escaped, pid)
				}
			}
			escaped = slices.DeleteFunc(escaped, func(pid int) bool { return !running(pid) })
			for _, pid := range escaped {
				_ = syscall.Kill(pid, sig)
			}
			return group || family || len(escaped) > 0
		}
		p.hangUp()
		if !signal(syscall.SIGTERM) {
			return
		}
		// A few times only: a process that starts another on each SIGTERM must not be fed.
		resend, resends := min(max(p.grace/10, 10*time.Millisecond), 250*time.Millisecond), 3
		began := time.Now()
		for deadline, next := began.Add(p.grace), began.Add(resend); ; {
			// Most commands end at once; checking costs a look at /proc, so later checks
			// are spaced out.
			time.Sleep(min(5*time.Millisecond+time.Since(began)/10, 50*time.Millisecond))
			if p.gone(&escaped) {
				return
			}
			if time.Now().After(deadline) {
				break
			}
			if resends > 0 && time.Now().After(next) {
				if !signal(syscall.SIGTERM) {
					return
				}
				resends--
				next = time.Now().Add(resend)
			}
		}
		// What ignores SIGTERM may go on starting processes: kill until nothing is left.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			p.fam.kill()
			if !signal(syscall.SIGKILL) {
				return
			}
			time.Sleep(5 * time.Millisecond)
			if p.gone(&escaped) {
				return
			}
		}
	})
}

// gone reports whether nothing of the command runs any more. escaped is narrowed to the
// marked processes still running.
func (p *Process) gone(escaped *[]int) bool {
	*escaped = slices.DeleteFunc(*escaped, func(pid int) bool { return !running(pid) })
	return !p.alive() && len(*escaped) == 0 && !p.fam.alive()
}

// Close stops the group and whatever left it ([Process.Stop]), stops reading its output
// and waits for the readers. After Close, nothing of the command that can be found runs
// any more.
func (p *Process) Close() {
	p.Stop()
	p.Release()
}

// Release stops reading the command's output once [Process.Wait] has returned, and
// frees the pipes, without stopping anything the command left running.
func (p *Process) Release() {
	p.closeOnce.Do(func() {
		<-p.waited
		p.quit.Store(true)
		p.wake()
		<-p.readersDone
		p.closeFDs()
		if p.report != nil {
			_ = p.report.Close()
		}
		reap(p.pgid)
		if !p.fam.alive() {
			p.fam.release()
		}
	})
}

// Done reports whether nothing of the command is left running.
func (p *Process) Done() bool {
	select {
	case <-p.exited:
	default:
		return false
	}
	reap(p.pgid)
	select {
	case <-p.readersDone:
	default:
		return false
	}
	// A cheap check first: this runs often, and a group of zombies only delays the
	// Process being let go.
	return syscall.Kill(-p.pgid, 0) == syscall.ESRCH && !p.fam.alive()
}

// alive reports whether the shell or anything else in its group still runs. Once the
// shell is reaped the group id could in principle be reused, so only a live member makes
// it safe to signal.
func (p *Process) alive() bool {
	select {
	case <-p.exited:
		reap(p.pgid)
		return groupAlive(p.pgid)
	default:
		return true
	}
}

// reap collects exited members of the group that were reparented to this process (see
// [AdoptOrphans]). It must only run once the shell itself is reaped, so that it never
// takes the shell's status from [Process.Wait].
func reap(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

// randomHex returns n random bytes in hex: short, for file names an agent reads.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}

// readReport reads the state report from f: everything up to its second NUL. It returns
// nil if there is none, or if the report is absurdly long.
func readReport(f *os.File) []byte {
	var b []byte
	buf := make([]byte, 4096)
	for off := int64(0); off < maxReport; {
		n, err := f.ReadAt(buf, off)
		b = append(b, buf[:n]...)
		off += int64(n)
		if i := bytes.IndexByte(b, 0); i >= 0 && bytes.IndexByte(b[i+1:], 0) >= 0 {
			return b
		}
		if err != nil {
			return nil
		}
	}
	return nil
}

// newReportFile returns an unnamed file for the state report: in memory where the
// kernel offers that, else in dir (or the temporary directory), removed at once.
func newReportFile(dir string) (*os.File, error) {
	if f := memFile("boris-state"); f != nil {
		return f, nil
	}
	f, err := os.CreateTemp(dir, "state-*")
	if err != nil {
		return nil, fmt.Errorf("creating the state report file: %w", err)
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// devNull is the commands' stdin, opened once and shared: the child gets its own copy
// of the descriptor, and nothing ever reads from or closes this one.
var openDevNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// maxReport bounds the state report: an environment larger than this is not learned.
const maxReport = 8 << 20
