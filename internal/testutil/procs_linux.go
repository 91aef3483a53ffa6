package testutil

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ChainScript is a bash command that starts, in the background, a chain of n+1 processes
// that ignore SIGTERM, each the parent of the next, which left the command's process
// group, session and cgroup (moving itself to the cgroup whose cgroup.procs is given, as
// root can) and cleared the BORIS_RUN mark. Each has CHAIN=tag in its environment. The
// command returns once the last one runs.
func ChainScript(cgroupProcs, tag string, n int) string {
	return `cat > chain.sh <<'EOS'
trap '' TERM
if [ "$1" -gt 0 ]; then /bin/sh chain.sh $(($1 - 1)) & wait; else echo $$ > pid.deep; exec sleep 300; fi
EOS
rm -f pid.deep
env -u BORIS_RUN CHAIN=` + tag + ` setsid bash -c 'echo $$ > ` + cgroupProcs + `; exec /bin/sh chain.sh ` + strconv.Itoa(n) + `' >/dev/null 2>&1 &
while [ ! -s pid.deep ]; do sleep 0.01; done`
}

// WithEnv returns the running processes whose environment holds kv; when the test ends,
// those still running are killed.
func WithEnv(t testing.TB, kv string) []int {
	t.Helper()
	t.Cleanup(func() {
		for _, pid := range withEnv(kv) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return withEnv(kv)
}

func withEnv(kv string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && strings.Contains("\x00"+string(b), "\x00"+kv+"\x00") && running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// Cgroup2Root returns where the cgroup v2 hierarchy is mounted, or "".
func Cgroup2Root() string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.SplitSeq(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if f := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(f) >= 5 && f[3] == "/" {
			return f[4]
		}
	}
	return ""
}

// PidsCgroup makes a cgroup with the pids controller whose pids.max is max, and returns
// its cgroup.procs, for a process to move itself into; or "" where none can be made. When
// the test ends, what runs in it is killed and it is removed.
func PidsCgroup(t testing.TB, max int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	var parent string
	if root := Cgroup2Root(); root != "" && hasWord(filepath.Join(root, "cgroup.subtree_control"), "pids") {
		parent = root
	} else if v1 := pidsV1Root(); v1 != "" {
		parent = v1
	}
	if parent == "" {
		return ""
	}
	dir, err := os.MkdirTemp(parent, "boris-test-")
	if err != nil {
		return ""
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = os.Remove(dir)
		return ""
	}
	t.Cleanup(func() { killCgroup(dir) })
	return filepath.Join(dir, "cgroup.procs")
}

// killCgroup kills every process in dir and beneath it, and removes them all.
func killCgroup(dir string) {
	deadline := time.Now().Add(Within)
	for time.Now().Before(deadline) {
		subs, _ := filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
		any := false
		for _, procs := range append(subs, filepath.Join(dir, "cgroup.procs")) {
			b, _ := os.ReadFile(procs)
			for f := range strings.FieldsSeq(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					any = true
				}
			}
		}
		if !any {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "*", "cgroup.procs"))
	for _, s := range subs {
		_ = os.Remove(filepath.Dir(s))
	}
	subs, _ = filepath.Glob(filepath.Join(dir, "*", "cgroup.procs"))
	for _, s := range subs {
		_ = os.Remove(filepath.Dir(s))
	}
	_ = os.Remove(dir)
}

func hasWord(file, word string) bool {
	b, _ := os.ReadFile(file)
	return slices.Contains(strings.Fields(string(b)), word)
}

// pidsV1Root returns where a cgroup v1 hierarchy with the pids controller is mounted,
// or "".
func pidsV1Root() string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.SplitSeq(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, p := strings.Fields(pre), strings.Fields(post)
		if ok && len(p) >= 3 && p[0] == "cgroup" && slices.Contains(strings.Split(p[2], ","), "pids") && len(f) >= 5 && f[3] == "/" {
			return f[4]
		}
	}
	return ""
}
