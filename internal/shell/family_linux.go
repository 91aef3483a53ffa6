//go:build linux

package shell

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// cgroupsOff disables cgroups for new commands; see [UseCgroups].
var cgroupsOff atomic.Bool

// UseCgroups says whether commands started from now on may be put in cgroups of their own
// where the system allows it (the default), or must be tracked through /proc only.
func UseCgroups(on bool) { cgroupsOff.Store(!on) }

// cgroupBase is a cgroup v2 directory Boris made for its commands' cgroups, or "".
var cgroupBase = sync.OnceValue(func() string {
	mount := cgroup2Mount()
	if mount == "" {
		return ""
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var own string
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			own = rest
		}
	}
	if own == "" || strings.Contains(own, "(deleted)") {
		return ""
	}
	endStale(filepath.Join(mount, own))
	me, _ := readStat(os.Getpid())
	dir := filepath.Join(mount, own, baseName(me))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "" // even one of this name left by an earlier Boris is not ours to use
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return "" // before Linux 5.14: no way to kill a cgroup at once
	}
	return dir
})

// baseName names the cgroup of a Boris process's commands: by pid and start time, so
// that a later Boris can tell that the one which made it is gone, whatever else has
// its pid since.
func baseName(st procStat) string {
	return "boris-" + strconv.Itoa(st.pid) + "-" + strconv.FormatUint(st.start, 10)
}

// endStale ends what Boris processes that are gone (SIGKILLed, say) left running in their
// cgroups in parent, and removes the cgroups. The cgroups of a Boris that still runs are
// never touched: its pid and start time are those its cgroup's name holds.
func endStale(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.IsDir() && stale(e.Name()) {
			endCgroup(filepath.Join(parent, e.Name()))
		}
	}
}

// stale reports whether name is the commands' cgroup of a Boris process that is gone:
// boris-PID-START, or boris-PID as earlier versions named it.
func stale(name string) bool {
	rest, ok := strings.CutPrefix(name, "boris-")
	if !ok {
		return false
	}
	pidText, startText, withStart := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	st, running := readStat(pid)
	if !withStart {
		return !running && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	start, err := strconv.ParseUint(startText, 10, 64)
	return err == nil && (!running || st.zombie || st.start != start)
}

// endCgroup kills every process in cgroup dir and its descendants, and removes them.
func endCgroup(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	// The kill is sent at once; the processes take a moment to exit.
	for end := time.Now().Add(2 * time.Second); populated(dir) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	subs, _ := os.ReadDir(dir)
	for _, sub := range subs {
		if sub.IsDir() {
			_ = os.Remove(filepath.Join(dir, sub.Name()))
		}
	}
	_ = os.Remove(dir)
}

// populated reports whether a process runs in cgroup dir or beneath it.
func populated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	return err == nil && strings.Contains(string(b), "populated 1")
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted, or "".
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
			return unescapeMount(f[4])
		}
	}
	return ""
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
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
	f := &family{cgFD: -1, procsFD: -1, pidsFD: -1, start: bootTicks()}
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

// cgroupsUsable reports whether commands started now get cgroups of their own.
func cgroupsUsable() bool { return cgroupBase() != "" && !cgroupsOff.Load() }

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
			f.end = bootTicks()
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

// cgroupMembers lists the running processes in cgroup dir, reaping zombies that are
// Boris's orphans.
func cgroupMembers(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for field := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		if st.zombie {
			reapOrphan(st)
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// procStat is what Boris reads of a process in /proc/PID/stat.
type procStat struct {
	pid, ppid, pgid, sid int
	start                uint64 // boot time in clock ticks
	zombie               bool
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(pid, b)
}

// parseStat reads "pid (comm) state ppid pgrp session ... starttime ...".
func parseStat(pid int, b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	st := procStat{pid: pid, zombie: f[0] == "Z" || f[0] == "X"}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgid, _ = strconv.Atoi(f[2])
	st.sid, _ = strconv.Atoi(f[3])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, true
}

// reapOrphan collects st's exit status if it is an orphan reparented to Boris: a child
// in a session other than Boris's own, which no shell's Process waits for. The caller
// holds no lock that a Process's own reaping could need.
func reapOrphan(st procStat) {
	if st.ppid != self || st.sid == mySession || isShell(st.pid) {
		return
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(st.pid, &ws, syscall.WNOHANG, nil)
}

var self = os.Getpid()

// isShell reports whether pid is the shell of a registered family, reaped by its Process.
func isShell(pid int) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for f := range registry.families {
		if f.shell == pid {
			return true
		}
	}
	return false
}

// scan reads /proc and adds to each family tracked without a cgroup the processes that
// belong to it; zombie orphans are reaped.
func scan() {
	registry.spawn.Lock() // no shell is between fork and registration meanwhile
	defer registry.spawn.Unlock()
	scanLocked()
}

// scanLocked is [scan], with registry.spawn held.
func scanLocked() {
	procs := readAll()
	c := census{byPID: make(map[int]procStat, len(procs)), owners: make(map[int][]*family), shells: make(map[int]bool)}
	for _, p := range procs {
		c.byPID[p.pid] = p
	}
	registry.mu.Lock()
	c.recount()
	for _, p := range procs { // oldest first: a parent comes before its children
		if c.owners[p.pid] != nil {
			continue
		}
		fams := c.claimants(p)
		if len(fams) == 0 {
			continue
		}
		c.owners[p.pid] = fams
		for _, f := range fams {
			f.known[p.pid] = p.start
		}
	}
	orphans := c.zombies()
	registry.mu.Unlock()
	for _, p := range orphans {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
	}
}

// census is what one [scan] knows: every process, which families each belongs to, the
// families' shells, and the families tracked without a cgroup. It is used with
// registry.mu held.
type census struct {
	byPID  map[int]procStat
	owners map[int][]*family
	shells map[int]bool
	open   []*family
}

// recount keeps, of each family's known processes, those still running (with the same
// start time, so not a reused pid), and records whose they are.
func (c *census) recount() {
	for f := range registry.families {
		c.shells[f.shell] = true
		if f.cg != "" {
			continue
		}
		for pid, start := range f.known {
			p, ok := c.byPID[pid]
			if !ok || start != 0 && p.start != start {
				delete(f.known, pid) // gone, or its pid reused
				continue
			}
			f.known[pid] = p.start
			c.owners[pid] = append(c.owners[pid], f)
		}
		c.open = append(c.open, f)
	}
}

// claimants returns the families that process p, not yet known to any, belongs to: its
// parent's, when the parent is older; for an orphan reparented to Boris, the family whose
// session or group it is in, or else the families running when it started.
func (c *census) claimants(p procStat) []*family {
	switch parent, ok := c.byPID[p.ppid]; {
	case ok && c.owners[p.ppid] != nil && parent.start <= p.start:
		return c.owners[p.ppid]
	case !c.orphan(p):
		return nil
	}
	// A pid stays reserved while it names a live session or group, so a member's
	// session or group id says whose the orphan is.
	if fams := c.owners[p.sid]; fams != nil {
		return fams
	}
	if fams := c.owners[p.pgid]; fams != nil {
		return fams
	}
	var fams []*family
	for _, f := range c.open {
		if f.start <= p.start+1 && (f.end == 0 || p.start <= f.end+1) {
			fams = append(fams, f)
		}
	}
	return fams
}

// orphan reports whether p was reparented to Boris: a child in a session other than
// Boris's own that is not a family's shell.
func (c *census) orphan(p procStat) bool {
	return p.ppid == self && p.sid != mySession && !c.shells[p.pid]
}

// zombies forgets the families' members that have exited and returns those that are
// orphans, for the caller to reap once it no longer holds registry.mu.
func (c *census) zombies() []procStat {
	var orphans []procStat
	for _, f := range c.open {
		for pid := range f.known {
			if p := c.byPID[pid]; p.zombie {
				delete(f.known, pid)
				if c.orphan(p) {
					orphans = append(orphans, p)
				}
			}
		}
	}
	return orphans
}

// readAll reads every process's stat, oldest first.
func readAll() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	procs := make([]procStat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			procs = append(procs, st)
		}
	}
	slices.SortFunc(procs, func(a, b procStat) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return a.pid - b.pid
	})
	return procs
}

// bootTicks is the time since boot in the clock ticks /proc/PID/stat counts start times in.
func bootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Sec)*clockTicks + uint64(ts.Nsec)*clockTicks/1e9
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

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
	ticks := uint64(time.Since(since) * clockTicks / time.Second)
	start := bootTicks() - min(ticks, bootTicks())
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
	for _, p := range readAll() { // oldest first: a parent comes before its children
		if p.zombie {
			reapOrphan(p)
			continue
		}
		n, ok := nodes[p.ppid]
		switch {
		case p.ppid == self && p.sid != mySession:
			n = node{root: p.start}
		case !ok:
			continue
		}
		if !all && !n.held {
			n.held = held[p.pid] || inBase(p.pid)
		}
		nodes[p.pid] = n
		if all || !n.held && n.root+1 >= since {
			pids = append(pids, p.pid)
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

// inBase reports whether pid is in a cgroup beneath Boris's own for commands.
func inBase(pid int) bool {
	rel := baseRel()
	if rel == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if cg, ok := strings.CutPrefix(line, "0::"); ok {
			return cg == rel || strings.HasPrefix(cg, rel+"/")
		}
	}
	return false
}

// baseRel is [cgroupBase] as /proc/PID/cgroup names it, or "".
var baseRel = sync.OnceValue(func() string {
	base, mount := cgroupBase(), cgroup2Mount()
	if base == "" || mount == "" {
		return ""
	}
	rel, err := filepath.Rel(mount, base)
	if err != nil {
		return ""
	}
	return "/" + rel
})

// EndLeftovers ends what earlier Boris processes that are gone (SIGKILLed, say) left
// running in their commands' cgroups beside this one's, and makes this one's. Without
// it, that happens before the first command.
func EndLeftovers() { cgroupBase() }

// CgroupsAvailable reports whether commands can be put in cgroups of their own here.
func CgroupsAvailable() bool { return cgroupBase() != "" }
