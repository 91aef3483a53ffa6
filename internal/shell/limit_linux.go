//go:build linux

package shell

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// A fork bomb in one command must not take the server, or other sessions, down with it.
// Each command's cgroup gets a pids.max: the most tasks (processes and threads) it may
// have at once. All commands together get less than the limit Boris itself runs under
// (a container's or a systemd unit's pids limit, RLIMIT_NPROC, the kernel's), so that the
// rest stays Boris's: for its own threads, its launchers, and the processes it forks.
// The pids controller is used in the cgroup v2 tree where it is enabled there, else in a
// cgroup v1 pids hierarchy beside it (hybrid systems), which the shell joins by itself
// ([moveLine]). Where there is neither, the shell sets RLIMIT_NPROC for what it starts
// ([Command] docs; it counts every process of the user, and root is exempt).

// processLimit is the pids limit of one command: 0 for the default, negative for none.
var processLimit atomic.Int64

// LimitProcesses sets the most tasks (processes and threads) one command may have at
// once, from its next command on: 0 restores the default ([DefaultProcessLimit]);
// negative means no limit.
func LimitProcesses(n int) { processLimit.Store(int64(n)) }

// DefaultProcessLimit is the pids limit of one command when none is set: half of what all
// commands together may have, at most 4096.
func DefaultProcessLimit() int { return int(min(4096, max(commandsLimit()/2, 1))) }

// perCommand returns the pids limit of one command, or 0 for none.
func perCommand() int64 {
	switch n := processLimit.Load(); {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	return int64(DefaultProcessLimit())
}

// commandsLimit is the most tasks all commands together may have: the limit Boris runs
// under, less a reserve for Boris itself.
var commandsLimit = sync.OnceValue(func() int64 {
	outer := outerLimit()
	reserve := max(64, outer/8)
	if outer < 2*reserve {
		return max(outer/2, 1)
	}
	return outer - reserve
})

// outerLimit returns the fewest tasks any limit on Boris's own process allows.
func outerLimit() int64 {
	limit := int64(math.MaxInt64)
	take := func(n int64) {
		if n > 0 {
			limit = min(limit, n)
		}
	}
	for _, dir := range pidsAncestors() {
		take(readLimit(filepath.Join(dir, "pids.max")))
	}
	var rl unix.Rlimit
	if os.Geteuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		take(int64(min(rl.Cur, math.MaxInt64)))
	}
	take(readLimit("/proc/sys/kernel/threads-max"))
	take(readLimit("/proc/sys/kernel/pid_max"))
	return limit
}

// readLimit reads a number from file, or 0 if it holds none ("max", say).
func readLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// pidsAncestors returns the cgroup directories, in v2 and in a v1 pids hierarchy, of
// Boris's own cgroup and its ancestors up to the root of what this process sees.
func pidsAncestors() []string {
	var dirs []string
	add := func(mount, own string) {
		if mount == "" || own == "" {
			return
		}
		for dir := filepath.Join(mount, own); strings.HasPrefix(dir, mount); dir = filepath.Dir(dir) {
			dirs = append(dirs, dir)
			if dir == mount {
				break
			}
		}
	}
	add(cgroup2Mount(), ownCgroup("0", ""))
	add(pidsV1Mount(), ownCgroup("", "pids"))
	return dirs
}

// ownCgroup returns Boris's own cgroup, as /proc/self/cgroup names it: on the line with
// hierarchy id, or the one whose controllers include controller.
func ownCgroup(id, controller string) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && (f[0] == id || controller != "" && slices.Contains(strings.Split(f[1], ","), controller)) {
			if strings.Contains(f[2], "(deleted)") {
				return ""
			}
			return f[2]
		}
	}
	return ""
}

// pidsV1Mount returns where a cgroup v1 hierarchy with the pids controller is mounted, or "".
func pidsV1Mount() string {
	return mountOf(func(fstype string, super []string) bool {
		return fstype == "cgroup" && slices.Contains(super, "pids")
	})
}

// pidsTree is where commands' pids limits are set.
type pidsTree struct {
	base string // holds the commands' pids cgroups, its pids.max all commands' share; "" for none
	v1   bool   // base is in a cgroup v1 hierarchy, which each shell joins by itself
}

// pidsBase returns where commands' pids limits are set. It is decided once, after
// [cgroupBase], and only where that is usable.
var pidsBase = sync.OnceValue(func() pidsTree {
	base := cgroupBase()
	if base == "" {
		return pidsTree{}
	}
	if enablePids(filepath.Dir(base)) && enablePids(base) {
		setLimit(base, commandsLimit())
		return pidsTree{base: base}
	}
	mount, own := pidsV1Mount(), ownCgroup("", "pids")
	if mount == "" || own == "" {
		return pidsTree{}
	}
	parent := filepath.Join(mount, own)
	removeStaleV1(parent)
	me, _ := procfs.Read(os.Getpid())
	dir := filepath.Join(parent, baseName(me))
	if err := os.Mkdir(dir, 0o755); err != nil || !setLimit(dir, commandsLimit()) {
		_ = os.Remove(dir)
		return pidsTree{}
	}
	return pidsTree{base: dir, v1: true}
})

// enablePids enables the pids controller for the children of cgroup v2 directory dir, and
// reports whether it is.
func enablePids(dir string) bool {
	control := filepath.Join(dir, "cgroup.subtree_control")
	if hasWord(control, "pids") {
		return true
	}
	if !hasWord(filepath.Join(dir, "cgroup.controllers"), "pids") {
		return false
	}
	return os.WriteFile(control, []byte("+pids"), 0) == nil
}

func hasWord(file, word string) bool {
	b, err := os.ReadFile(file)
	return err == nil && slices.Contains(strings.Fields(string(b)), word)
}

// setLimit sets the pids.max of cgroup dir, and reports whether it could.
func setLimit(dir string, n int64) bool {
	return os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(n, 10)), 0) == nil
}

// removeStaleV1 removes the v1 pids cgroups that Boris processes now gone left in parent;
// what ran in them was ended through their cgroup v2 twins ([endStale]).
func removeStaleV1(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if !e.IsDir() || !stale(e.Name()) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		subs, _ := os.ReadDir(dir)
		for _, sub := range subs {
			if sub.IsDir() {
				_ = os.Remove(filepath.Join(dir, sub.Name()))
			}
		}
		_ = os.Remove(dir)
	}
}

// limitPids gives the family, whose cgroup v2 directory is made, its pids limit: in that
// directory, or in a v1 pids cgroup of its own, which the shell joins through pidsFD.
func (f *family) limitPids(name string) {
	n := perCommand()
	tree := pidsBase()
	if n <= 0 || tree.base == "" {
		return
	}
	if !tree.v1 {
		if setLimit(f.cg, n) {
			f.pids, f.limit = f.cg, n
		}
		return
	}
	dir := filepath.Join(tree.base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return
	}
	fd, err := unix.Open(filepath.Join(dir, "cgroup.procs"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil || !setLimit(dir, n) {
		if err == nil {
			_ = unix.Close(fd)
		}
		_ = os.Remove(dir)
		return
	}
	f.pids, f.pidsFD, f.limit = dir, fd, n
}

// joinsPidsV1 reports whether shells join a v1 pids cgroup by themselves.
func joinsPidsV1() bool { return cgroupsUsable() && perCommand() > 0 && pidsBase().v1 }

// overLimit reports whether the family tried to have more tasks than its limit allows.
func (f *family) overLimit() bool {
	if f.pids == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(f.pids, "pids.events"))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "max "); ok {
			return n != "0"
		}
	}
	return false
}

// checkLimit kills the whole family once it has hit its limit: a command that forks
// without end is a fork bomb, or broken. It reports whether it did.
func (f *family) checkLimit() bool {
	if f.hit.Load() {
		return true
	}
	if !f.overLimit() {
		return false
	}
	f.hit.Store(true)
	f.kill()
	return true
}

// watchInterval spaces the checks of the families' pids limits.
const watchInterval = 50 * time.Millisecond

// watchLimits checks the families with a pids limit now and then, as long as any is
// registered, and ends those that hit it.
func watchLimits() {
	for {
		time.Sleep(watchInterval)
		registry.mu.Lock()
		var limited []*family
		for f := range registry.families {
			if f.pids != "" && !f.hit.Load() {
				limited = append(limited, f)
			}
		}
		if len(limited) == 0 {
			registry.watching = false
			registry.mu.Unlock()
			return
		}
		registry.mu.Unlock()
		for _, f := range limited {
			f.checkLimit()
		}
	}
}

// removePids removes the family's v1 pids cgroup, if it has one.
func (f *family) removePids() {
	closeFD(&f.pidsFD)
	if f.pids != "" && f.pids != f.cg {
		_ = os.Remove(f.pids)
	}
}

// limitLine, for a shell with no pids cgroup, sets RLIMIT_NPROC for what it starts: the
// limit Boris runs under, less its reserve. It is "" where that does not bind (root, or
// no limit to leave a reserve in).
func limitLine() string {
	if os.Geteuid() == 0 || perCommand() <= 0 || cgroupsUsable() && pidsBase().base != "" {
		return ""
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
		return ""
	}
	return "ulimit -u " + strconv.FormatInt(commandsLimit(), 10) + " 2>/dev/null"
}

// processLimit returns the family's pids limit, or 0 if it has none.
func (f *family) processLimit() int64 { return f.limit }
