package shell

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// TestLaunchedShellMovesIntoItsCgroup: a shell started by a Launch, which is never asked
// to start it in a cgroup, moves itself into its own before running the script, under
// every way of running a script, and leaves nothing of the move open.
func TestLaunchedShellMovesIntoItsCgroup(t *testing.T) {
	t.Parallel()
	if !CgroupsAvailable() {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "no cgroups of its own for each command here")
	}
	launch := func(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
		if attr.Sys.UseCgroupFD {
			return 0, errors.New("asked to start the shell in a cgroup")
		}
		return syscall.ForkExec(path, argv, attr)
	}
	show := "cat /proc/self/cgroup; ls -l /proc/self/fd"
	scripts := map[string]string{
		"stateless": show,
		"stateful":  "cd . && " + show,
		"long":      "cd . && " + show + "\n#" + strings.Repeat("x", maxScriptArg),
	}
	for _, sh := range shells {
		for name, script := range scripts {
			c := command(t, sh, script)
			c.Launch = launch
			p, res := run(t, c)
			out := p.Stdout.Text(DefaultBudget, nil).Text
			if res.ExitCode != 0 || !strings.Contains(out, "/cmd-") || strings.Contains(out, "cgroup.procs") {
				t.Errorf("%s, %s: exit %d, stderr %q, stdout:\n%s", sh, name, res.ExitCode, p.Stderr.Text(DefaultBudget, nil).Text, out)
			}
		}
	}
}

// TestProcessLimit: a command that tries to have more processes than its limit is killed
// with everything it started, whether it waits for them or has returned and left them
// running, and its result says so. Not parallel: the limit is the process's.
func TestProcessLimit(t *testing.T) {
	if !cgroupsUsable() || pidsBase().base == "" {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "no pids cgroup for each command here")
	}
	LimitProcesses(20)
	defer LimitProcesses(0)
	for name, script := range map[string]string{
		"waiting":  "for i in $(seq 40); do sleep 300 & done; wait",
		"returned": "(for i in $(seq 40); do sleep 300 & done; wait) >/dev/null 2>&1 &",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), testutil.Within)
			defer cancel()
			p, res, err := Run(ctx, command(t, "/bin/bash", script))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if name == "waiting" && res.ProcessLimit != 20 {
				t.Errorf("ProcessLimit = %d, want 20 (exit %d, stderr %q)", res.ProcessLimit, res.ExitCode, p.Stderr.Text(DefaultBudget, nil).Text)
			}
			// What it left running hits the limit later, and is killed then.
			deadline := time.Now().Add(testutil.Within)
			for !p.Done() && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !p.Done() {
				t.Errorf("processes of the command still run %v after it hit its limit", testutil.Within)
			}
		})
	}
}
