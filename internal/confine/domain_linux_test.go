package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// restrictedThreads counts this process's threads with no_new_privs set, which a thread
// in a Landlock domain has.
func restrictedThreads(t *testing.T) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), "NoNewPrivs:\t1") {
			n++
		}
	}
	return n
}

// children returns this process's child processes, and which of them are zombies.
func childProcs(t *testing.T) (all, zombies []int) {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		all = append(all, pid)
		if fields[0] == "Z" {
			zombies = append(zombies, pid)
		}
	}
	return all, zombies
}

func newDomain(t testing.TB) (*Domain, string) {
	t.Helper()
	if KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Mode: On, Dirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Domain(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, secret
}

// run starts argv through d, waits for it as its parent, and returns its exit status.
func run(t *testing.T, d *Domain, argv ...string) int {
	t.Helper()
	pidfd := -1
	pid, err := d.ForkExec(argv[0], argv, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd}})
	if err != nil {
		t.Fatalf("ForkExec(%q): %v", argv, err)
	}
	if pidfd >= 0 {
		syscall.Close(pidfd)
	} else {
		t.Errorf("ForkExec(%q) gave no pidfd", argv)
	}
	var status syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil {
		t.Fatalf("waiting for %q, pid %d: %v", argv, pid, err)
	}
	return status.ExitStatus()
}

// TestDomainConfinesOnlyItsCommands: the commands a Domain starts are confined, and this
// process's children; the process itself keeps reading what they may not, and none of its
// threads is ever in the domain.
func TestDomainConfinesOnlyItsCommands(t *testing.T) {
	d, secret := newDomain(t)
	if restrictedThreads(t) != 0 {
		t.Skip("this process already has no_new_privs")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				if run(t, d, "/bin/cat", secret) == 0 {
					t.Errorf("a confined cat read %s", secret)
				}
				if run(t, d, "/bin/true") != 0 {
					t.Errorf("a confined true failed")
				}
				if _, err := os.ReadFile(secret); err != nil {
					t.Errorf("the process itself cannot read %s: %v", secret, err)
				}
			}
		})
	}
	wg.Wait()
	if n := restrictedThreads(t); n != 0 {
		t.Errorf("%d threads of this process are restricted, want none", n)
	}
	launcher := d.l.proc.Pid
	d.Close()
	d.Close()
	if err := syscall.Kill(launcher, 0); err != syscall.ESRCH {
		t.Errorf("the launcher, pid %d, after Close: kill -0 = %v, want ESRCH (gone and reaped)", launcher, err)
	}
	if _, err := d.ForkExec("/bin/true", []string{"true"}, nil); err != ErrClosed {
		t.Errorf("ForkExec after Close = %v, want ErrClosed", err)
	}
}

// TestForkExecFailureLeavesNoZombie: a program that cannot start is reported as
// syscall.ForkExec reports it, and its forked child, this process's, is reaped.
func TestForkExecFailureLeavesNoZombie(t *testing.T) {
	d, _ := newDomain(t)
	defer d.Close()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, attr := range []*syscall.ProcAttr{
		{Sys: &syscall.SysProcAttr{Setsid: true}},
		{Dir: missing, Sys: &syscall.SysProcAttr{Setsid: true}},
		{Dir: missing},
	} {
		path := "/bin/true"
		if attr.Dir == "" {
			path = missing
		}
		pid, err := d.ForkExec(path, []string{"x"}, attr)
		if err != syscall.ENOENT {
			t.Errorf("ForkExec(%s) in %q = %d, %v; want ENOENT", path, attr.Dir, pid, err)
		}
	}
	if _, zombies := childProcs(t); len(zombies) > 0 {
		t.Errorf("zombie children left: %v", zombies)
	}
}

// TestLauncherReplaced: when the launcher ends (a command may kill it), the next command
// starts in a new one; when it is stopped, it goes on (else this test hangs).
func TestLauncherReplaced(t *testing.T) {
	d, _ := newDomain(t)
	defer d.Close()
	d.takeTimeout, d.forkTimeout = time.Hour, time.Hour
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		old := d.l.proc.Pid
		if err := syscall.Kill(old, sig); err != nil {
			t.Fatal(err)
		}
		if run(t, d, "/bin/true") != 0 {
			t.Errorf("after %v to the launcher, a command failed", sig)
		}
		if sig != syscall.SIGKILL {
			continue
		}
		if d.l.proc.Pid == old {
			t.Errorf("after %v, the launcher is still pid %d", sig, old)
		}
		if err := syscall.Kill(old, 0); err != syscall.ESRCH {
			t.Errorf("the old launcher, pid %d: kill -0 = %v, want ESRCH (gone and reaped)", old, err)
		}
	}
}

// BenchmarkForkExec is what confinement adds to starting a command: each iteration runs
// /bin/true with syscall.ForkExec and then through a Domain (see testutil.Paired).
func BenchmarkForkExec(b *testing.B) {
	d, _ := newDomain(b)
	defer d.Close()
	run := func(forkExec func(string, []string, *syscall.ProcAttr) (int, error)) func() {
		return func() {
			pid, err := forkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setsid: true}})
			if err != nil {
				b.Fatal(err)
			}
			var status syscall.WaitStatus
			syscall.Wait4(pid, &status, 0, nil)
		}
	}
	testutil.Paired(b, "direct", run(syscall.ForkExec), "domain", run(d.ForkExec))
}

// BenchmarkDomain is the cost of a session's first confined command: starting its
// launcher, which enters the domain.
func BenchmarkDomain(b *testing.B) {
	if KernelABI() < 1 {
		b.Skip("no Landlock")
	}
	p, err := New(Options{Mode: On, Dirs: []string{b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d, err := p.Domain(nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// ownCgroup returns a new cgroup v2 directory beneath this process's own, or skips.
func ownCgroup(t *testing.T) string {
	t.Helper()
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	var mount string
	for line := range strings.SplitSeq(string(mounts), "\n") {
		if pre, post, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(post, "cgroup2 ") {
			if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
				mount = f[4]
			}
		}
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	var own string
	for line := range strings.SplitSeq(string(self), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			own = rest
		}
	}
	dir := filepath.Join(mount, own, "confine-test-"+strconv.Itoa(os.Getpid()))
	if mount == "" || own == "" || os.Mkdir(dir, 0o755) != nil {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "no cgroup v2 directory this process may create cgroups in")
	}
	t.Cleanup(func() { os.Remove(dir) })
	return dir
}

// TestMoveIntoCgroup: the launcher does not start processes in cgroups (see
// Domain.ForkExec), but a confined process moves itself into
// one through a descriptor opened for it on the cgroup's cgroup.procs, as a command's
// shell does (shell.Command.Launch).
func TestMoveIntoCgroup(t *testing.T) {
	if KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	dir := t.TempDir()
	p, err := New(Options{Mode: On, Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Domain(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cg := filepath.Join(ownCgroup(t), "cmd")
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(cg)
	dirFD, err := syscall.Open(cg, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dirFD)
	if _, err := d.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: dirFD}}); err == nil {
		t.Error("the launcher took UseCgroupFD, which the kernel refuses with CLONE_PARENT")
	}

	procs, err := os.OpenFile(filepath.Join(cg, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer procs.Close()
	fifo := filepath.Join(dir, "fifo")
	testutil.Fifo(t, fifo)
	// It moves, says so, and runs until it is killed, so that it is there to be seen.
	script := `echo 0 >&3 && exec 3>&- && echo moved >"$1" && exec sleep 1000`
	files := []uintptr{0, 1, 2, procs.Fd()}
	pid, err := d.ForkExec("/bin/sh", []string{"sh", "-c", script, "sh", fifo}, &syscall.ProcAttr{Files: files, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(pid, syscall.SIGKILL)
		var status syscall.WaitStatus
		syscall.Wait4(pid, &status, 0, nil)
	}()
	if got := testutil.ReadFifo(t, fifo); got != "moved\n" {
		t.Fatalf("the process said %q", got)
	}
	held, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(held)); !slices.Equal(got, []string{strconv.Itoa(pid)}) {
		t.Errorf("the cgroup held %q, want only the process, %d", got, pid)
	}
}
