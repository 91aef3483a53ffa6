//go:build linux

package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// A command's family is every process it started, however it got away: through setsid, a
// cleared environment, a double fork. It is found in one of two ways.
//
// Where Boris can create cgroups (cgroup v2, writable), each command starts in a cgroup
// of its own, which no process can leave without privileges: its members are listed by
// the kernel and killed at once through cgroup.kill.
//
// Elsewhere Boris is a child subreaper ([AdoptOrphans]): a process whose parent dies is
// reparented to Boris, never to init. So every process a command started is either a
// descendant of a process already known to be the command's (found by walking parent
// links in /proc), or a child of Boris in a session of its own, started while the
// command ran (found by its start time). Such an orphan, started while several commands
// ran and never seen before it was orphaned, counts as a member of each of them: ending
// any of them ends it. Boris rescans /proc while commands run, so that most orphans are
// seen, and placed exactly, while their parent still lives.

// family is one command's processes.
type family struct {
	cg   string // the command's cgroup directory; "" when cgroups are not used
	cgFD int    // open on cg until the shell starts in it; else -1
	// procsFD is open for writing on cg's cgroup.procs until the shell starts, when the
	// shell is to move itself into cg ([moveLine]); else -1.
	procsFD int
	shell   int    // the shell's pid, once started
	start   uint64 // boot time, in clock ticks, just before the shell started

	// pids is the cgroup whose pids.max bounds the family: cg, or one in a cgroup v1 pids
	// hierarchy, which the shell joins through pidsFD (limit_linux.go); "" for none.
	pids   string
	pidsFD int
	limit  int64       // its pids.max
	hit    atomic.Bool // it hit its limit, and was killed for it

	// Tracked in /proc when there is no cgroup; guarded by registry.mu.
	known map[int]uint64 // pid -> start time of the processes seen to be members
	end   uint64         // when the family was first seen empty with its shell gone; 0 while open
}

// registry holds the families whose processes may still run.
var registry struct {
	mu       sync.Mutex
	families map[*family]bool
	// spawn is held for reading from fork until the new shell's family knows its pid, and
	// for writing while /proc is scanned: a shell not yet registered must not be taken
	// for an orphan, nor its exit status reaped by anyone but its Process.
	spawn    sync.RWMutex
	scanning bool // the rescanning goroutine runs
	watching bool // the goroutine watching pids limits runs
}

var cgroupSeq atomic.Int64

// spawned says whether any command was ever started: until one is, Boris has no process,
// cgroup or orphan to stop.
var spawned atomic.Bool

// newFamily prepares the family of a command about to start. Its cgroup, if it gets one,
// is set in sys so that the shell starts in it; or, when the shell is to move itself
// there ([Command.Launch]), opened for that.
func newFamily(sys *syscall.SysProcAttr, launched bool) *family {
	spawned.Store(true)
	f := &family{cgFD: -1, procsFD: -1, pidsFD: -1, start: procfs.BootTicks()}
	if !cgroupsUsable() {
		return f
	}
	name := "cmd-" + strconv.FormatInt(cgroupSeq.Add(1), 10)
	dir := filepath.Join(cgroupBase(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return f
	}
	var err error
	if launched {
		f.procsFD, err = unix.Open(filepath.Join(dir, "cgroup.procs"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	} else {
		f.cgFD, err = unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		sys.UseCgroupFD, sys.CgroupFD = true, f.cgFD
	}
	if err != nil {
		sys.UseCgroupFD, sys.CgroupFD = false, 0
		_ = os.Remove(dir)
		return f
	}
	f.cg = dir
	f.limitPids(name)
	return f
}

// movers returns the descriptors through which the shell moves itself into its cgroups
// ([moveLine]): its cgroup's cgroup.procs, then its v1 pids cgroup's; where it has none,
// or starts in it, one on which the move does nothing.
func (f *family) movers() ([]uintptr, error) {
	null, err := openDevNullW()
	if err != nil {
		return nil, err
	}
	fds := []uintptr{null.Fd(), null.Fd()}
	for i, fd := range []int{f.procsFD, f.pidsFD} {
		if fd >= 0 {
			fds[i] = uintptr(fd)
		}
	}
	return fds, nil
}

var openDevNullW = sync.OnceValues(func() (*os.File, error) { return os.OpenFile(os.DevNull, os.O_WRONLY, 0) })

// spawning is held from just before the shell is forked until [family.started] or
// [family.failed].
func (f *family) spawning() { registry.spawn.RLock() }

// withoutCgroup gives up the family's cgroup, for a retry when the shell could not be
// started in it.
func (f *family) withoutCgroup(sys *syscall.SysProcAttr) bool {
	if !sys.UseCgroupFD {
		return false
	}
	closeFD(&f.cgFD)
	_ = os.Remove(f.cg)
	f.cg = ""
	sys.UseCgroupFD, sys.CgroupFD = false, 0
	return true
}

// failed undoes newFamily and spawning when the shell could not start.
func (f *family) failed() {
	registry.spawn.RUnlock()
	f.discard()
}

// discard undoes newFamily.
func (f *family) discard() {
	closeFD(&f.cgFD)
	closeFD(&f.procsFD)
	f.removePids()
	if f.cg != "" {
		_ = os.Remove(f.cg)
	}
}

// started registers the family once its shell runs as pid.
func (f *family) started(pid int) {
	closeFD(&f.cgFD)
	closeFD(&f.procsFD)
	closeFD(&f.pidsFD)
	f.shell = pid
	registry.mu.Lock()
	if registry.families == nil {
		registry.families = make(map[*family]bool)
	}
	registry.families[f] = true
	if f.pids != "" && !registry.watching {
		registry.watching = true
		go watchLimits()
	}
	if f.cg == "" {
		f.known = map[int]uint64{pid: 0}
		if !registry.scanning {
			registry.scanning = true
			go rescan()
		}
	}
	registry.mu.Unlock()
	registry.spawn.RUnlock()
}

// rescanInterval spaces the /proc scans made while commands tracked without a cgroup run.
const rescanInterval = 100 * time.Millisecond

// rescan scans /proc now and then while families tracked through /proc are open.
func rescan() {
	for {
		time.Sleep(rescanInterval)
		registry.mu.Lock()
		open := false
		for f := range registry.families {
			if f.cg == "" && f.end == 0 {
				open = true
				break
			}
		}
		if !open {
			registry.scanning = false
			registry.mu.Unlock()
			return
		}
		registry.mu.Unlock()
		scan()
	}
}

// release forgets the family once nothing of it runs; its cgroup is removed.
func (f *family) release() {
	registry.mu.Lock()
	delete(registry.families, f)
	registry.mu.Unlock()
	if f.cg != "" {
		_ = os.Remove(f.cg) // fails if something still runs in it: StopAll has the last word
	}
	f.removePids()
}

// members returns the running processes of the family, the shell included while it
// runs (zombies are left out, and reaped where they are Boris's orphans).
func (f *family) members() []int {
	if f.cg != "" {
		return cgroupMembers(f.cg)
	}
	// /proc is not read at one instant: a process started while it is read, by one that
	// exits before its turn, can be missed. So the family counts as empty only when two
	// scans a moment apart find nothing; the second places what the first missed, by
	// ancestry or, its window being still open, by start time.
	for i := 0; ; i++ {
		scan()
		registry.mu.Lock()
		pids := make([]int, 0, len(f.known))
		for pid := range f.known {
			pids = append(pids, pid)
		}
		if len(pids) > 0 || f.end != 0 {
			registry.mu.Unlock()
			return pids
		}
		if i > 0 {
			// Nothing of it runs: nothing can start on its behalf any more.
			f.end = procfs.BootTicks()
			registry.mu.Unlock()
			return nil
		}
		registry.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
}

// alive reports whether any process of the family runs.
func (f *family) alive() bool { return len(f.members()) > 0 }

// signal sends sig to every member; it reports whether there were any.
func (f *family) signal(sig syscall.Signal) bool {
	pids := f.members()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids) > 0
}

// kill ends every member at once: cgroup.kill, or SIGKILL to each.
func (f *family) kill() {
	if f.cg != "" {
		_ = os.WriteFile(filepath.Join(f.cg, "cgroup.kill"), []byte("1"), 0)
	}
	f.signal(syscall.SIGKILL)
}

// StopAll ends every process any command started that is still running: SIGTERM, then
// SIGKILL after grace; with them, every process below Boris outside its own session,
// however it got away (see [StopStrays]). It is the last step of a shutdown.
func StopAll(grace time.Duration) {
	if !spawned.Load() {
		return // a server that never ran a command stops at once, scanning nothing
	}
	registry.mu.Lock()
	fams := make([]*family, 0, len(registry.families))
	for f := range registry.families {
		fams = append(fams, f)
	}
	registry.mu.Unlock()
	signal := func(sig syscall.Signal) bool {
		any := false
		for _, f := range fams {
			if f.signal(sig) {
				any = true
			}
		}
		// The whole tree at once: a chain of processes that ignore SIGTERM, each the
		// parent of the next, would otherwise lose one level per round.
		for _, pid := range strays(0, true) {
			_ = syscall.Kill(pid, sig)
			any = true
		}
		return any
	}
	killRounds(grace, signal, func() {
		for _, f := range fams {
			f.kill()
		}
	})
	for _, f := range fams {
		f.release()
	}
	if tree := pidsBase(); tree.v1 {
		_ = os.Remove(tree.base)
	}
	if base := cgroupBase(); base != "" {
		_ = os.Remove(base)
	}
}

// killRounds sends SIGTERM through signal until it finds nothing or grace has passed, then
// kill and SIGKILL until nothing is left, for at most two seconds.
func killRounds(grace time.Duration, signal func(syscall.Signal) bool, kill func()) {
	// A round reads all of /proc: later ones are spaced out, as most processes end at once.
	began := time.Now()
	for signal(syscall.SIGTERM) && time.Since(began) < grace {
		time.Sleep(min(20*time.Millisecond+time.Since(began)/10, 250*time.Millisecond, max(grace-time.Since(began), 0)))
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		kill()
		if !signal(syscall.SIGKILL) {
			break
		}
	}
}

// StopStrays ends the strays that started since the given time: SIGTERM, then SIGKILL
// after grace. A stray is a process below Boris, outside its session, that no command
// holds any more: it left its command's cgroup (which only root can do) and the
// command's process tree, and cleared its mark. Boris, the subreaper, still sees it in
// its own tree. A stray started while several sessions ran counts as each one's: it ends
// with the first of them to close. Call it once a session's commands are stopped.
func StopStrays(since time.Time, grace time.Duration) {
	if !spawned.Load() {
		return
	}
	ticks := uint64(time.Since(since) * procfs.ClockTicks / time.Second)
	start := procfs.BootTicks() - min(ticks, procfs.BootTicks())
	signal := func(sig syscall.Signal) bool {
		pids := strays(start, false)
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		return len(pids) > 0
	}
	killRounds(grace, signal, func() {})
}

// strays returns the running processes below Boris outside its own session: with all,
// every one; else only those no registered family holds (as a member of its cgroup, or
// known to it through /proc, or below such a member) whose oldest ancestor below Boris
// started at or after since. Zombie orphans are reaped.
func strays(since uint64, all bool) []int {
	// No shell is between fork and registration meanwhile, where it would look a stray.
	registry.spawn.Lock()
	defer registry.spawn.Unlock()
	var held map[int]bool
	if !all {
		scanLocked() // so that a family tracked through /proc knows its newest members
		held = heldPIDs()
	}
	type node struct {
		root uint64 // the start time of its ancestor that is Boris's child
		held bool
	}
	nodes := make(map[int]node)
	var pids []int
	for _, p := range procfs.All() { // oldest first: a parent comes before its children
		if p.Zombie {
			reapOrphan(p)
			continue
		}
		n, ok := nodes[p.PPID]
		switch {
		case p.PPID == self && p.SID != mySession:
			n = node{root: p.Start}
		case !ok:
			continue
		}
		if !all && !n.held {
			n.held = held[p.PID] || inBase(p.PID)
		}
		nodes[p.PID] = n
		if all || !n.held && n.root+1 >= since {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// heldPIDs returns the processes the registered families tracked through /proc know.
func heldPIDs() map[int]bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	held := make(map[int]bool)
	for f := range registry.families {
		held[f.shell] = true
		for pid := range f.known {
			held[pid] = true
		}
	}
	return held
}
