package tools_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/testutil"
)

func needLandlock(t testing.TB, abi int) {
	t.Helper()
	if confine.KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	if confine.KernelABI() < abi {
		t.Skipf("needs Landlock ABI %d; this kernel has %d", abi, confine.KernelABI())
	}
}

// TestBashConfinedToAllowedDirs: with --allow-dir, commands read and write there and in
// their TMPDIR, read and run the system's programs, and nothing else, whatever way they
// try to leave.
func TestBashConfinedToAllowedDirs(t *testing.T) {
	t.Parallel()
	needLandlock(t, 1)
	cfg := testConfig(t)
	a := cfg.Workdir
	outside := t.TempDir()
	secret := writeIn(t, outside, "secret.txt", "top secret\n", 0o644)
	if err := os.Symlink(secret, filepath.Join(a, "link")); err != nil {
		t.Fatal(err)
	}
	// A hard link made beforehand is the same file, inside A: Landlock allows it.
	if err := os.Link(secret, filepath.Join(a, "hard")); err != nil {
		t.Fatal(err)
	}
	cfg.AllowDirs = []string{a}
	cs, srv := connect(t, cfg, nil)
	if !srv.Confinement().Paths() {
		t.Fatalf("commands are not confined: %s", srv.Confinement().Why())
	}
	q := shellQuote
	tests := []struct {
		name    string
		command string
		ok      bool   // exit status 0
		stdout  string // contained in stdout
	}{
		{"read outside", "cat " + q(secret), false, ""},
		{"write outside", "echo x > " + q(filepath.Join(outside, "f")), false, ""},
		{"list the root", "ls /", true, "usr"},
		{"git", "git --version", true, "git version"},
		{"write and read inside", "echo hi > f && cat f", true, "hi"},
		{"tmpdir", `echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`, true, "t"},
		{"dev null", "echo gone > /dev/null && head -c 4 /dev/zero | wc -c", true, "4"},
		{"system file", "cat /etc/passwd", true, "root"},
		{"symlink out", "cat link", false, ""},
		{"new symlink out", "ln -s " + q(secret) + " link2 && cat link2", false, ""},
		{"new hard link out", "ln " + q(secret) + " hard2", false, ""},
		{"proc root", "cat /proc/self/root" + q(secret), false, ""},
		{"setsid child", "setsid --wait cat " + q(secret), false, ""},
		{"nohup child", "nohup cat " + q(secret) + " 2>&1; cat nohup.out", false, ""},
		{"hard link made beforehand", "cat hard", true, "top secret"},
		// Last: the cd holds for the calls after it.
		{"cd to the root", "cd / && cat " + q(strings.TrimPrefix(secret, "/")), false, ""},
	}
	if _, err := exec.LookPath("go"); err == nil {
		tests = append([]struct {
			name, command string
			ok            bool
			stdout        string
		}{{"go", "go version", true, "go version"}}, tests...)
	}
	for _, tt := range tests {
		res, out := bash(t, cs, map[string]any{"command": tt.command})
		if res.IsError {
			t.Fatalf("%s: bash(%q) failed: %s", tt.name, tt.command, textOf(res))
		}
		text := textOf(res)
		switch {
		case tt.ok && (*out.ExitCode != 0 || !strings.Contains(out.Stdout, tt.stdout)):
			t.Errorf("%s: bash(%q) = %s, want success printing %q", tt.name, tt.command, text, tt.stdout)
		case !tt.ok && (*out.ExitCode == 0 || strings.Contains(text, "top secret")):
			t.Errorf("%s: bash(%q) = %s, want a failure that shows nothing of the secret", tt.name, tt.command, text)
		case !tt.ok && strings.Contains(text, "Permission denied") && !strings.Contains(text, "note: the command ran confined"):
			t.Errorf("%s: bash(%q) = %s, want a note saying the command is confined", tt.name, tt.command, text)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Errorf("a confined command created a file outside the allowed directory")
	}
	_, out := bash(t, cs, map[string]any{"command": `echo "$TMPDIR"`})
	if tmp := strings.TrimSpace(out.Stdout); tmp == "" || strings.HasPrefix(tmp, a) || tmp == os.TempDir() {
		t.Errorf("TMPDIR = %q, want a private directory of the session", tmp)
	}
	// The server itself is not confined.
	if got := mustRead(t, secret); got != "top secret\n" {
		t.Errorf("server reads %q", got)
	}
}

// needSignalScope skips the test unless commands are kept from signalling outside their
// session under cfg.
func needSignalScope(t *testing.T, srv *server.Server) {
	t.Helper()
	if !srv.Confinement().Signals() {
		t.Skip("this kernel cannot keep commands from signalling (Landlock ABI 6, with its signal erratum fixed)")
	}
}

// TestBashConfinedCannotReachTheServer: commands cannot signal Boris, nor any of its
// threads, nor trace any of them. Boris is their parent.
func TestBashConfinedCannotReachTheServer(t *testing.T) {
	t.Parallel()
	needLandlock(t, 6)
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cs, srv := connect(t, cfg, nil)
	needSignalScope(t, srv)
	pid := strconv.Itoa(os.Getpid())
	// Every thread, as kill(2) takes a thread's id too and a fatal signal to one thread
	// ends the whole process.
	threads := `n=0; for t in /proc/$PPID/task/*; do n=$((n+1)); kill -0 "${t##*/}" 2>/dev/null && echo "reached ${t##*/}"; done; echo "parent $PPID threads $n"`
	res, out := bash(t, cs, map[string]any{"command": threads})
	if res.IsError || strings.Contains(out.Stdout, "reached") || !strings.Contains(out.Stdout, "parent "+pid+" threads") || strings.Contains(out.Stdout, "threads 0") {
		t.Errorf("bash(%q) = %s; want the command's parent to be %s, and none of its threads reached", threads, textOf(res), pid)
	}
	for _, command := range []string{
		"kill -0 " + pid,
		"kill -0 $PPID",
		`/usr/bin/python3 -c 'import ctypes, os, sys; l = ctypes.CDLL(None, use_errno=True); sys.exit(0 if any(l.ptrace(16, int(t), 0, 0) == 0 for t in os.listdir("/proc/` + pid + `/task")) else 1)'`,
	} {
		if strings.Contains(command, "python3") {
			if _, err := os.Stat("/usr/bin/python3"); err != nil {
				continue
			}
		}
		res, out := bash(t, cs, map[string]any{"command": command})
		if res.IsError || *out.ExitCode == 0 {
			t.Errorf("bash(%q) = %s, want a failure", command, textOf(res))
		}
	}
}

// TestBashConfinedSignalsOnlyItsSession: a command can signal its own session's
// background task, and a command of another session cannot.
func TestBashConfinedSignalsOnlyItsSession(t *testing.T) {
	t.Parallel()
	needLandlock(t, 6)
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	a, srv := connect(t, cfg, nil)
	needSignalScope(t, srv)
	b := connectAgain(t, srv)
	id := startTask(t, b, "echo $$; exec sleep 1000")
	var pid string
	for pid == "" {
		_, o := taskOutput(t, b, id, 5000)
		if !o.Running {
			t.Fatalf("the task ended: %+v", o)
		}
		pid = strings.TrimSpace(o.Stdout)
	}
	if res, out := bash(t, a, map[string]any{"command": "kill -0 " + pid}); res.IsError || *out.ExitCode == 0 {
		t.Errorf("another session's command signalled the task: %s", textOf(res))
	}
	if res, out := bash(t, b, map[string]any{"command": "kill " + pid}); res.IsError || *out.ExitCode != 0 {
		t.Errorf("the task's own session could not signal it: %s", textOf(res))
	}
	if _, o := taskOutput(t, b, id, 5000); o.Running || o.Signal != "SIGTERM" {
		t.Errorf("after kill, the task is %+v; want it ended by SIGTERM", o)
	}
}

// connectAgain connects another client to srv; it is closed when the test ends.
func connectAgain(t *testing.T, srv *server.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// launchers returns the launchers among this process's children, as /proc shows them.
func launchers(t *testing.T) map[int]bool {
	t.Helper()
	found := map[int]bool{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		dir := filepath.Dir(f)
		b, err := os.ReadFile(f)
		argv, err2 := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || err2 != nil || !strings.HasPrefix(string(argv), "boris-launcher\x00") {
			continue
		}
		s := string(b)
		if fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			found[pid] = true
		}
	}
	return found
}

// TestBashConfinedLauncherKilled: a command that kills or stops its session's launcher
// does not keep the next command from running, and a closed session leaves no launcher behind,
// running or unreaped. Not parallel: it counts this process's launchers.
func TestBashConfinedLauncherKilled(t *testing.T) {
	needLandlock(t, 6)
	before := launchers(t)
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cs, srv := connect(t, cfg, nil)
	needSignalScope(t, srv)
	// Only the session's own launcher can be signalled: its forking thread shares the
	// commands' domain.
	signal := `for t in /proc/[0-9]*/task/*; do read -r c < "$t/comm" 2>/dev/null && [ "$c" = boris-launcher ] && kill -%s "${t##*/}" 2>/dev/null && echo signalled; done; true`
	for _, sig := range []string{"KILL", "STOP", "KILL"} {
		command := fmt.Sprintf(signal, sig)
		// The launcher reports the start once the command runs, so a command can kill it
		// before the report: then the call says so instead of showing the output. A stop
		// is undone while Boris waits for the report.
		res, out := bash(t, cs, map[string]any{"command": command})
		lost := sig == "KILL" && res.IsError && strings.Contains(textOf(res), confine.ErrLauncherLost.Error())
		if !lost && (res.IsError || out.Stdout != "signalled\n") {
			t.Fatalf("bash(%q) = %s, want its launcher signalled", command, textOf(res))
		}
		if res, out := bash(t, cs, map[string]any{"command": "echo ok"}); res.IsError || out.Stdout != "ok\n" {
			t.Errorf("after SIG%s to the launcher, bash = %s", sig, textOf(res))
		}
	}
	ours := launchers(t)
	for pid := range before {
		delete(ours, pid)
	}
	if len(ours) != 1 {
		t.Errorf("launchers of this session: %v, want one", ours)
	}
	srv.Close()
	for pid := range ours {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("launcher %d after the session closed: kill -0 = %v, want ESRCH (ended and reaped)", pid, err)
		}
	}
}

// TestBackgroundTaskConfined: a background task is confined the same way.
func TestBackgroundTaskConfined(t *testing.T) {
	t.Parallel()
	needLandlock(t, 1)
	cfg := testConfig(t)
	secret := writeIn(t, t.TempDir(), "secret.txt", "top secret\n", 0o644)
	cfg.AllowDirs = []string{cfg.Workdir}
	cs, _ := connect(t, cfg, nil)
	id := startTask(t, cs, "cat "+shellQuote(secret)+"; echo inside > f && cat f")
	var stdout, stderr string
	for {
		_, o := taskOutput(t, cs, id, 5000)
		stdout, stderr = stdout+o.Stdout, stderr+o.Stderr
		if !o.Running {
			break
		}
	}
	if strings.Contains(stdout, "top secret") || !strings.Contains(stderr, "Permission denied") || !strings.Contains(stdout, "inside") {
		t.Errorf("task output = %q, %q; want the secret denied and the file inside written", stdout, stderr)
	}
}

// TestConfineNetwork: with --confine-network, commands cannot connect to a listening port
// that unconfined commands reach.
func TestConfineNetwork(t *testing.T) {
	t.Parallel()
	needLandlock(t, 4)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	command := "echo > /dev/tcp/127.0.0.1/" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, confined := range []bool{false, true} {
		cfg := testConfig(t)
		cfg.AllowDirs = []string{cfg.Workdir}
		cfg.ConfineNetwork = confined
		cs, _ := connect(t, cfg, nil)
		res, out := bash(t, cs, map[string]any{"command": command})
		if res.IsError || (*out.ExitCode == 0) == confined {
			t.Errorf("with ConfineNetwork %v, bash(%q) = %s", confined, command, textOf(res))
		}
		if confined && !strings.Contains(textOf(res), "TCP") {
			t.Errorf("bash(%q) = %s, want a note that TCP is not allowed", command, textOf(res))
		}
		if got := cs.InitializeResult().Instructions; strings.Contains(got, "cannot open TCP connections") != confined {
			t.Errorf("with ConfineNetwork %v, instructions = %q", confined, got)
		}
	}
}

// TestConfineOff: --confine-bash=off runs commands as before, and says so.
func TestConfineOff(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	secret := writeIn(t, t.TempDir(), "secret.txt", "top secret\n", 0o644)
	cfg.AllowDirs = []string{cfg.Workdir}
	cfg.ConfineBash = confine.Off
	cs, _ := connect(t, cfg, nil)
	if _, out := bash(t, cs, map[string]any{"command": "cat " + shellQuote(secret)}); out.Stdout != "top secret\n" {
		t.Errorf("cat outside with confinement off = %+v", out)
	}
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "do not confine bash") {
		t.Errorf("instructions = %q, want them to say bash is not confined", got)
	}
}

// TestConfinementInInstructions: the model is told what commands may reach.
func TestConfinementInInstructions(t *testing.T) {
	t.Parallel()
	needLandlock(t, 1)
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cfg.DenyDirs = []string{".env"}
	cs, _ := connect(t, cfg, nil)
	got := cs.InitializeResult().Instructions
	for _, want := range []string{"bash commands are confined by the kernel (Landlock)", cfg.Workdir + " and $TMPDIR", "/usr", "hidden from file tools only"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions = %q, want %q in them", got, want)
		}
	}
	if strings.Contains(got, "do not confine bash") {
		t.Errorf("instructions = %q still say bash is not confined", got)
	}
}

// TestConfineOnRefusedWithoutLandlock: --confine-bash=on on a kernel without Landlock
// (here, one capped at ABI 0) refuses to start; auto runs unconfined.
func TestConfineOnRefusedWithoutLandlock(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cfg.LandlockABI = -1
	cfg.ConfineBash = confine.On
	if _, err := server.New(&cfg, log, os.Environ()); err == nil || !strings.Contains(err.Error(), "--confine-bash=on") {
		t.Errorf("server.New with --confine-bash=on and no Landlock: %v, want a refusal", err)
	}
	cfg.ConfineBash = confine.Auto
	srv, err := server.New(&cfg, log, os.Environ())
	if err != nil {
		t.Fatalf("server.New with auto and no Landlock: %v", err)
	}
	defer srv.Close()
	if srv.Confinement().Confined() {
		t.Errorf("commands confined without Landlock")
	}
}

// TestConfinedCommandInItsCgroup: a confined command's shell, which the launcher cannot
// start in a cgroup, moves itself into its own before it runs anything, whether the
// script is one the shell runs as it is or one it reports the state of.
func TestConfinedCommandInItsCgroup(t *testing.T) {
	t.Parallel()
	needLandlock(t, 1)
	if !shell.CgroupsAvailable() {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "no cgroups of its own for each command here")
	}
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cs, _ := connect(t, cfg, nil)
	for _, command := range []string{"cat /proc/self/cgroup", "cd . && cat /proc/self/cgroup", "ls -l /proc/self/fd", "cd . && ls -l /proc/self/fd"} {
		res, out := bash(t, cs, map[string]any{"command": command})
		if res.IsError || *out.ExitCode != 0 {
			t.Fatalf("%s: %s", command, textOf(res))
		}
		if strings.Contains(command, "ls") {
			if strings.Contains(out.Stdout, "cgroup") {
				t.Errorf("%s: the descriptor the shell moved through is still open:\n%s", command, out.Stdout)
			}
		} else if !strings.Contains(out.Stdout, "/cmd-") {
			t.Errorf("%s ran in %q, not in a cgroup of its own", command, out.Stdout)
		}
	}
}
