package files

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxHolderScan bounds how many of Boris's descendants [heldForWriting] looks at.
const maxHolderScan = 4096

// heldForWriting says which processes this one started, directly or not (the commands
// and whatever they started, orphans included, since Boris reaps them), have the file of
// old open for writing, as "pid 123 (python3)", at most three named; "" when none. An
// atomic write replaces the file with a new one: such a process keeps writing to the old
// one, which no name leads to any more, and what it writes is lost.
func heldForWriting(path string, old fs.FileInfo) string {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok || !hasChildren() {
		return ""
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	var held []string
	self, _ := os.Readlink("/proc/self/exe")
	queue := children(os.Getpid())
	for seen := 0; len(queue) > 0 && seen < maxHolderScan; seen++ {
		pid := queue[0]
		queue = append(queue[1:], children(pid)...)
		// A process still running Boris's program is a launcher, or a child forked an
		// instant ago that holds copies of Boris's own descriptors (a file being written,
		// say) until it runs its program: neither writes to the user's files.
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); exe == self {
			continue
		}
		if writesTo(pid, path, st.Dev, st.Ino) {
			held = append(held, fmt.Sprintf("pid %d (%s)", pid, comm(pid)))
		}
	}
	switch {
	case len(held) == 0:
		return ""
	case len(held) > 3:
		held = append(held[:3], fmt.Sprintf("%d more", len(held)-3))
	}
	return strings.Join(held, ", ")
}

// hasChildren reports whether this process has any child, running, stopped or a zombie,
// with one system call and without waiting for or reaping any. Every process Boris's
// commands started that can still hold a file is a child, or a descendant of one: an
// orphan is adopted by Boris (the subreaper) or, in a cgroup, has left Boris's tree for
// good. So with no child at all there is nothing to look for, and an edit made while no
// command runs costs no look at /proc.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	return err != unix.ECHILD
}

// children returns the children of pid, from each of its threads.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, _ := os.ReadDir(dir)
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// writesTo reports whether pid has the file dev:ino, which was at path, open for writing.
func writesTo(pid int, path string, dev, ino uint64) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, _ := os.ReadDir(dir)
	for _, fd := range fds {
		// The link names the file as it was opened, or " (deleted)" after it once it was
		// replaced: reading it is cheap, where following it to compare the inode is not.
		link, err := os.Readlink(dir + fd.Name())
		if err != nil || !strings.HasPrefix(link, path) || link != path && link != path+" (deleted)" {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(dir+fd.Name(), &st) != nil || st.Ino != ino || st.Dev != dev {
			continue
		}
		info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if err == nil && flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
					return true
				}
			}
		}
	}
	return false
}

// comm returns the name of pid's program.
func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}
