package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mjkoo/boris/internal/procfs"
)

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
	me, _ := procfs.Read(os.Getpid())
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
func baseName(st procfs.Stat) string {
	return "boris-" + strconv.Itoa(st.PID) + "-" + strconv.FormatUint(st.Start, 10)
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
	st, running := procfs.Read(pid)
	if !withStart {
		return !running && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	start, err := strconv.ParseUint(startText, 10, 64)
	return err == nil && (!running || st.Zombie || st.Start != start)
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
	return mountOf(func(fstype string, _ []string) bool { return fstype == "cgroup2" })
}

// mountOf returns the mount point of the first whole-hierarchy mount (root "/") in
// /proc/self/mountinfo whose file system type and super options match, or "".
func mountOf(match func(fstype string, super []string) bool) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		p, m := strings.Fields(post), strings.Fields(pre)
		if ok && len(p) >= 3 && len(m) >= 5 && m[3] == "/" && match(p[0], strings.Split(p[2], ",")) {
			return unescapeMount(m[4])
		}
	}
	return ""
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// cgroupsUsable reports whether commands started now get cgroups of their own.
func cgroupsUsable() bool { return cgroupBase() != "" && !cgroupsOff.Load() }

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
		st, ok := procfs.Read(pid)
		if !ok {
			continue
		}
		if st.Zombie {
			reapOrphan(st)
			continue
		}
		pids = append(pids, pid)
	}
	return pids
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
