package shell

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/procfs"
)

// Marked returns the processes, outside process group except, whose environment holds
// BORIS_RUN=mark, or, if mark ends with "/", a BORIS_RUN value starting with mark.
// Processes that cleared their environment, or belong to another user, are not found.
func Marked(mark string, except int) []int {
	if mark == "" {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("\x00" + markVar + "=" + mark)
	prefix := strings.HasSuffix(mark, "/")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		i := bytes.Index(append([]byte{0}, b...), want)
		if i < 0 {
			continue
		}
		if rest := b[i-1+len(want):]; !prefix && len(rest) > 0 && rest[0] != 0 {
			continue // a longer mark that merely starts with this one
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == except {
			continue
		}
		if running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid is gone or a zombie.
func zombie(pid int) bool {
	st, ok := procfs.Read(pid)
	return !ok || st.Zombie
}

// groupRunning reports whether a member of group pgid is not a zombie.
func groupRunning(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procfs.Read(pid); ok && st.PGID == pgid && !st.Zombie {
			return true
		}
	}
	return false
}

// AdoptOrphans makes this process the reaper of its orphaned descendants, so that
// processes a command leaves behind are reparented here and reaped by [Process.Wait] and
// [Process.Close] instead of lingering as zombies under an init that does not reap them.
// It is a process-wide setting; calling it more than once is harmless.
func AdoptOrphans() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
