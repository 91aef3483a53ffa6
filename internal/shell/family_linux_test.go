package shell

import (
	"errors"
	"strings"
	"syscall"
	"testing"

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
