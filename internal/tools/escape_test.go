package tools_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/testutil"
)

// escapes are commands that start processes that try to outlive their session: out of
// the process group (setsid), without the marker variable (env -i, env -u), orphaned by a
// double fork, ignoring SIGTERM, each starting the next. Each writes the pids that must
// not survive to files named pid.*.
var escapes = map[string]string{
	"env -i setsid":      `(setsid env -i /bin/sh -c 'echo $$ > pid.a; exec /bin/sleep 300' >/dev/null 2>&1 &)`,
	"env -u double fork": `setsid env -u BORIS_RUN /bin/sh -c '/bin/sleep 301 >/dev/null 2>&1 & echo $! > pid.b' >/dev/null 2>&1 &`,
	"sigterm-ignoring chain": `cat > chain.sh <<'EOS'
trap '' TERM
echo $$ > pid.c$1
if [ "$1" -lt 4 ]; then (setsid env -i /bin/sh "$PWD/chain.sh" $(($1 + 1)) >/dev/null 2>&1 &); fi
exec /bin/sleep 302
EOS
(setsid env -i /bin/sh "$PWD/chain.sh" 0 >/dev/null 2>&1 &)`,
	"respawning on SIGTERM": `cat > respawn.sh <<'EOS'
trap '(setsid env -i /bin/sh "$0" >/dev/null 2>&1 &); exit 0' TERM
echo $$ > pid.r
while :; do /bin/sleep 0.05; done
EOS
(setsid env -i /bin/sh "$PWD/respawn.sh" >/dev/null 2>&1 &)`,
}

// runningWith returns the processes whose command line mentions s.
func runningWith(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) && processRunning(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// startEscapes runs every escape in the session and returns the pids they wrote. With a
// timeout, the command waits for the pids and then sleeps until the timeout ends it; on a
// machine too loaded to start them all before that timeout, it tries again with twice
// the timeout, so the test always times out a command whose escapes have all started.
func startEscapes(t *testing.T, cs *mcp.ClientSession, dir string, timeoutMS int) []int {
	t.Helper()
	var script []string
	for _, e := range escapes {
		script = append(script, e)
	}
	files := []string{"pid.a", "pid.b", "pid.c0", "pid.c1", "pid.c2", "pid.c3", "pid.c4", "pid.r"}
	wait := "for f in " + strings.Join(files, " ") + "; do while [ ! -s $f ]; do sleep 0.01; done; done"
	command := "rm -f pid.*\n" + strings.Join(script, "\n") + "\n" + wait
	for {
		args := map[string]any{"command": command}
		if timeoutMS > 0 {
			args["command"] = command + "\necho escapes started\nsleep 100"
			args["timeout"] = timeoutMS
		}
		res, out := bash(t, cs, args)
		if res.IsError || timeoutMS > 0 && !out.TimedOut || timeoutMS == 0 && *out.ExitCode != 0 {
			t.Fatalf("starting the escapes: %s", textOf(res))
		}
		if timeoutMS == 0 || strings.Contains(out.Stdout, "escapes started") {
			break
		}
		if timeoutMS *= 2; timeoutMS > 60_000 {
			t.Fatalf("the escapes did not all start within a minute: %s", textOf(res))
		}
		t.Logf("the escapes did not all start before the timeout; trying again with %d ms", timeoutMS)
	}
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		pid, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || err2 != nil {
			t.Fatalf("%s: %v %v", f, err, err2)
		}
		pids = append(pids, pid)
	}
	return pids
}

// assertEnded waits, bounded, for every pid to end, and fails for the survivors.
func assertEnded(t *testing.T, pids []int, after string) {
	t.Helper()
	deadline := time.Now().Add(testutil.Within)
	for _, pid := range pids {
		if !testutil.Exited(pid, deadline) {
			t.Errorf("process %d survived %s", pid, after)
		}
	}
}

// TestNoEscapes: nothing a session started outlives its session, a timeout or the
// server, whether commands are tracked through cgroups or through /proc.
func TestNoEscapes(t *testing.T) {
	// Not parallel: it switches how commands are tracked for the whole process.
	modes := []string{"proc"}
	if shell.CgroupsAvailable() {
		modes = append(modes, "cgroup")
		// A confined shell moves itself into its cgroup (shell.Command.Launch).
		if confine.KernelABI() >= 1 {
			modes = append(modes, "confined")
		}
	} else {
		t.Log("cgroups are not available here: only tracking through /proc is tested")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			shell.UseCgroups(mode != "proc")
			defer shell.UseCgroups(true)
			routes := []struct {
				name    string
				timeout int
				end     func(cs *mcp.ClientSession, srv *server.Server)
			}{
				{"session end", 0, func(cs *mcp.ClientSession, _ *server.Server) { _ = cs.Close() }},
				{"timeout", 1500, func(*mcp.ClientSession, *server.Server) {}},
				{"server shutdown", 0, func(_ *mcp.ClientSession, srv *server.Server) { srv.Close() }},
			}
			for _, r := range routes {
				t.Run(r.name, func(t *testing.T) {
					cfg := testConfig(t)
					cfg.KillGrace = 200 * time.Millisecond
					if mode == "confined" {
						cfg.AllowDirs = []string{cfg.Workdir}
					}
					cs, srv := connect(t, cfg, nil)
					if confined := srv.Confinement().Paths(); confined != (mode == "confined") {
						t.Fatalf("commands confined: %v (%s)", confined, srv.Confinement().Why())
					}
					pids := startEscapes(t, cs, cfg.Workdir, r.timeout)
					r.end(cs, srv)
					assertEnded(t, pids, r.name)
					respawn := filepath.Join(cfg.Workdir, "respawn.sh")
					// Each may start another as it goes: wait for them one after another.
					for deadline := time.Now().Add(testutil.Within); ; {
						left := runningWith(respawn)
						if len(left) == 0 || !testutil.Exited(left[0], deadline) {
							break
						}
					}
					if left := runningWith(respawn); len(left) > 0 {
						t.Errorf("processes %v, each started by the last on SIGTERM, survived %s", left, r.name)
					}
				})
			}
		})
	}
}

// TestNoEscapeOutOfCgroup: a chain of 400 processes that ignore SIGTERM, each the parent
// of the next, that left their command's cgroup, process group and session and cleared
// their mark (as a root command can) ends with its session and with the server.
func TestNoEscapeOutOfCgroup(t *testing.T) {
	// Not parallel: a stray counts as every session's that was open when it started, and
	// so would end with any other test's session.
	root := testutil.Cgroup2Root()
	if os.Geteuid() != 0 || !shell.CgroupsAvailable() || root == "" {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "needs root and cgroup v2: only root can leave a cgroup")
	}
	for _, end := range []string{"session end", "server shutdown"} {
		t.Run(end, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.KillGrace = 200 * time.Millisecond
			cs, srv := connect(t, cfg, nil)
			tag := rand.Text()
			if res, out := bash(t, cs, map[string]any{"command": testutil.ChainScript(filepath.Join(root, "cgroup.procs"), tag, 400)}); res.IsError || *out.ExitCode != 0 {
				t.Fatalf("starting the chain: %s", textOf(res))
			}
			pids := testutil.WithEnv(t, "CHAIN="+tag)
			if len(pids) != 401 {
				t.Fatalf("%d processes of the chain run, want 401", len(pids))
			}
			if end == "session end" {
				_ = cs.Close()
			} else {
				srv.Close()
			}
			assertEnded(t, pids, end)
		})
	}
}
