package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

var shells = []string{"/bin/bash", "/bin/sh"}

func command(t *testing.T, sh, script string) Command {
	t.Helper()
	return Command{
		Shell:    sh,
		Script:   script,
		Dir:      t.TempDir(),
		Env:      []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "KEEP=1"},
		StateDir: t.TempDir(),
		Grace:    200 * time.Millisecond,
		Drain:    100 * time.Millisecond,
	}
}

func run(t *testing.T, c Command) (*Process, Result) {
	t.Helper()
	p, res, err := Run(t.Context(), c)
	if err != nil {
		t.Fatalf("Run(%q): %v", c.Script, err)
	}
	t.Cleanup(p.Close)
	return p, res
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		bashOnly     bool
		code         int
		stdout       string
		stderrHas    string
		shStderrHas  string // dash words it differently
	}{
		{name: "true", script: "true", code: 0},
		{name: "false", script: "false", code: 1},
		{name: "exit 3", script: "exit 3", code: 3},
		{name: "last statement wins", script: "false\ntrue\nfalse", code: 1},
		{name: "last statement true", script: "false\necho ok", code: 0, stdout: "ok\n"},
		{name: "subshell exit", script: "(exit 4)", code: 4},
		{name: "exit inside if", script: "if true; then exit 5; fi\necho no", code: 5},
		{name: "set -e", script: "set -e\nfalse\necho no", code: 1},
		{name: "heredoc last", script: "cat <<EOF\nhello $((1+1))\nEOF", code: 0, stdout: "hello 2\n"},
		{name: "heredoc no final newline", script: "cat <<'EOF'\nraw $x\nEOF\n", code: 0, stdout: "raw $x\n"},
		{name: "heredoc then false", script: "cat <<EOF\nx\nEOF\nfalse", code: 1, stdout: "x\n"},
		{name: "heredoc writes file", script: "cat > f.txt <<'EOF'\nline1\nline2\nEOF\ncat f.txt", code: 0, stdout: "line1\nline2\n"},
		{name: "trailing comment", script: "echo hi # comment", code: 0, stdout: "hi\n"},
		{name: "trailing comment after false", script: "false # why", code: 1},
		{name: "line continuation", script: "echo a \\\n  b", code: 0, stdout: "a b\n"},
		{name: "trailing ampersand", script: "true &", code: 0},
		{name: "a and b", script: "sleep 0.01 & echo b; wait", code: 0, stdout: "b\n"},
		{name: "unterminated quote", script: "echo a\necho \"oops", code: 2, stdout: "a\n", stderrHas: "unexpected EOF", shStderrHas: "Unterminated quoted string"},
		{name: "syntax error", script: "if then fi", code: 2, stderrHas: "syntax error", shStderrHas: "Syntax error"},
		{name: "marker lookalike", script: "printf '__BORIS_CWD__\\n/etc\\n\\0declare -x X=1\\n'", code: 0, stdout: "__BORIS_CWD__\n/etc\n\x00declare -x X=1\n"},
		{name: "positional params empty", script: "echo \"$#:$1\"", code: 0, stdout: "0:\n"},
		{name: "stdin at EOF", script: "cat; echo done", code: 0, stdout: "done\n"},
		{name: "user exit trap", script: "trap 'echo bye' EXIT; exit 6", code: 6, stdout: "bye\n"},
		{name: "set -u", script: "set -u; echo $nope", bashOnly: true, code: 127, stderrHas: "nope: unbound variable"},
		{name: "dollar zero", script: "echo $0", bashOnly: true, code: 0, stdout: "bash\n"},
		{name: "xtrace shows only the script", script: "set -x; cd .; export T=1", code: 0, stderrHas: "+ cd ."},
		{name: "leading dash is a command, not an option", script: "--version", code: 127, stderrHas: "--version"},
		{name: "leading dash with state", script: "-x; cd .", bashOnly: true, code: 0, stderrHas: "-x"},
	}
	for _, sh := range shells {
		for _, tt := range tests {
			if tt.bashOnly && sh != "/bin/bash" {
				continue
			}
			t.Run(filepath.Base(sh)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				p, res := run(t, command(t, sh, tt.script))
				out, errOut := p.Stdout.Text(DefaultBudget, nil).Text, p.Stderr.Text(DefaultBudget, nil).Text
				if res.ExitCode != tt.code {
					t.Errorf("exit code = %d, want %d (stderr %q)", res.ExitCode, tt.code, errOut)
				}
				if tt.stdout != "" && out != tt.stdout || tt.stdout == "" && out != "" {
					t.Errorf("stdout = %q, want %q", out, tt.stdout)
				}
				wantErr := tt.stderrHas
				leaks := []string{"__boris", "eval", "BASH_ENV", "state."}
				if sh == "/bin/sh" && tt.shStderrHas != "" {
					// Without bash the script runs under eval, whose name shows in
					// dash's syntax errors.
					wantErr, leaks = tt.shStderrHas, leaks[:1]
				}
				if wantErr == "" && errOut != "" || !strings.Contains(errOut, wantErr) {
					t.Errorf("stderr = %q, want it to contain %q", errOut, wantErr)
				}
				for _, leak := range leaks {
					if strings.Contains(out+errOut, leak) && !strings.Contains(tt.script, leak) {
						t.Errorf("output %q shows wrapper text %q", out+errOut, leak)
					}
				}
			})
		}
	}
}

func TestSignalExit(t *testing.T) {
	t.Parallel()
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			_, res := run(t, command(t, sh, "kill -KILL $$"))
			if res.Signal != "SIGKILL" || res.ExitCode != 137 {
				t.Errorf("Signal, ExitCode = %q, %d; want SIGKILL, 137", res.Signal, res.ExitCode)
			}
		})
	}
}

func TestStatePersists(t *testing.T) {
	t.Parallel()
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			c := command(t, sh, "mkdir -p sub && cd sub && export FOO='a \"q\" $x' NL='l1\nl2' && unset KEEP")
			_, res := run(t, c)
			want := filepath.Join(c.Dir, "sub")
			if real, _ := filepath.EvalSymlinks(want); res.Cwd != want && res.Cwd != real {
				t.Errorf("Cwd = %q, want %q", res.Cwd, want)
			}
			env := res.Env
			for _, kv := range []string{"FOO=a \"q\" $x", "NL=l1\nl2"} {
				if !slices.Contains(env, kv) {
					t.Errorf("env %q lacks %q", env, kv)
				}
			}
			for _, kv := range env {
				if strings.HasPrefix(kv, "KEEP=") || strings.HasPrefix(kv, "PWD=") || strings.HasPrefix(kv, "BASH_ENV=") {
					t.Errorf("env keeps %q", kv)
				}
			}
		})
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			c := command(t, sh, "sleep 100 & trap '' TERM; echo $$; sleep 100")
			// Stopped as a timeout would stop it, once the shell ignores SIGTERM.
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			c.OnOutput = func(Stream, []byte) { cancel(errors.New("timed out")) }
			p, res, err := Run(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if res.Stopped == nil || res.Stopped.Error() != "timed out" {
				t.Errorf("Stopped = %v, want timed out", res.Stopped)
			}
			out := p.Stdout.Text(DefaultBudget, nil).Text
			pgid, _ := strconv.Atoi(strings.TrimSpace(out))
			if pgid != p.PGID() {
				t.Fatalf("printed pid %q, want %d", out, p.PGID())
			}
			if GroupAlive(pgid) {
				t.Errorf("process group %d still has live members", pgid)
			}
		})
	}
}

func TestGrandchildHoldingPipe(t *testing.T) {
	t.Parallel()
	c := command(t, "/bin/bash", "echo start; sleep 100 &")
	start := time.Now()
	p, res := run(t, c)
	// Held for as long as the grandchild runs, it would return after 100 s.
	if d := time.Since(start); d > testutil.Within {
		t.Errorf("returned after %v", d)
	}
	if res.ExitCode != 0 || !res.Lingering {
		t.Errorf("ExitCode, Lingering = %d, %v; want 0, true", res.ExitCode, res.Lingering)
	}
	if got := p.Stdout.Text(DefaultBudget, nil).Text; got != "start\n" {
		t.Errorf("stdout = %q", got)
	}
	p.Close()
	if GroupAlive(p.PGID()) {
		t.Errorf("group %d alive after Close", p.PGID())
	}
}

func TestTimeoutReachesSetsid(t *testing.T) {
	t.Parallel()
	needEscapeTracking(t)
	c := command(t, "/bin/bash", "setsid sleep 100 >/dev/null 2>&1 & echo $!; sleep 100")
	c.Mark = "test-" + randomHex(4) + "/1"
	// Stopped as a timeout would stop it, once it has said which process left.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c.OnOutput = func(Stream, []byte) { cancel() }
	p, _, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(p.Stdout.Text(DefaultBudget, nil).Text))
	if err != nil {
		t.Fatal(err)
	}
	if running(pid) {
		t.Errorf("setsid process %d survived the timeout", pid)
	}
}

func TestStopMarked(t *testing.T) {
	t.Parallel()
	needEscapeTracking(t)
	prefix := "test-" + randomHex(4) + "/"
	// Wait until the child runs sleep in a session of its own, so that the shell does not
	// exit while it still belongs to the group or is between setsid and exec; and until
	// its environment shows, which exec sets up a moment after the name.
	c := command(t, "/bin/bash", `setsid sleep 100 >/dev/null 2>&1 & pid=$!
until read -r _ comm _ _ _ sid _ </proc/$pid/stat && [ "$comm $sid" = "(sleep) $pid" ] && IFS= read -r -d '' _ </proc/$pid/environ; do :; done
echo $pid`)
	c.Mark = prefix + "7"
	p, res := run(t, c)
	pid, _ := strconv.Atoi(strings.TrimSpace(p.Stdout.Text(DefaultBudget, nil).Text))
	if !running(pid) {
		t.Fatalf("the escaped process is not running (lingering %v)", res.Lingering)
	}
	if got := Marked(prefix, 0); !slices.Contains(got, pid) {
		t.Errorf("Marked(%q) = %v, want it to hold %d", prefix, got, pid)
	}
	if got := Marked(prefix+"70", 0); len(got) != 0 {
		t.Errorf("Marked of a longer mark = %v, want none", got)
	}
	StopMarked(prefix, time.Second)
	if running(pid) {
		t.Errorf("process %d survived StopMarked", pid)
	}
}

// TestStartFailureLeaksNothing: a shell that cannot start costs no descriptors, with or
// without a state report.
func TestStartFailureLeaksNothing(t *testing.T) {
	// Not parallel: it counts this process's open descriptors.
	if _, err := openDevNull(); err != nil { // opened once and kept
		t.Fatal(err)
	}
	for _, script := range []string{"true", "cd ."} {
		c := command(t, "/bin/bash", script)
		c.Dir = filepath.Join(c.Dir, "missing")
		before := testutil.OpenFDs(t)
		for range 20 {
			if _, err := Start(c); err == nil || !strings.Contains(err.Error(), "missing") {
				t.Fatalf("Start in a missing directory: err = %v, want one naming the directory", err)
			}
		}
		if after := testutil.OpenFDs(t); after != before {
			t.Errorf("%q: %d descriptors open after 20 failed starts, %d before", script, after, before)
		}
	}
}

// TestLongScript: a script longer than an argument may be (a large here-document) runs
// from a file, with its exit status, output and state intact, and the file is removed.
func TestLongScript(t *testing.T) {
	t.Parallel()
	body := strings.Repeat(strings.Repeat("x", 99)+"\n", 2000) // 200 kB
	for _, sh := range shells {
		for _, tail := range []string{"wc -c < big.txt", "wc -c < big.txt; export LONG=1; cd sub; exit 4"} {
			t.Run(filepath.Base(sh), func(t *testing.T) {
				t.Parallel()
				c := command(t, sh, "mkdir -p sub\ncat > big.txt <<'EOF'\n"+body+"EOF\n"+tail)
				p, res, err := Run(t.Context(), c)
				if err != nil {
					t.Fatal(err) // not run(): its message would hold the whole script
				}
				defer p.Close()
				wantCode := 0
				if strings.Contains(tail, "exit 4") {
					wantCode = 4
					if res.Cwd != filepath.Join(c.Dir, "sub") || !slices.Contains(res.Env, "LONG=1") {
						t.Errorf("cwd %q, env %q: the state change was lost", res.Cwd, res.Env)
					}
				}
				if got := strings.TrimSpace(p.Stdout.Text(DefaultBudget, nil).Text); res.ExitCode != wantCode || got != "200000" {
					t.Errorf("exit %d, stdout %q (stderr %q); want %d, 200000", res.ExitCode, got, p.Stderr.Text(DefaultBudget, nil).Text, wantCode)
				}
				if left, _ := filepath.Glob(filepath.Join(c.StateDir, "*.sh")); len(left) > 0 {
					t.Errorf("script files left behind: %v", left)
				}
			})
		}
	}
}

// TestOwnSessionNoTerminal: a command leads a session of its own, with no controlling
// terminal, so nothing it runs can prompt on the terminal Boris was started from.
func TestOwnSessionNoTerminal(t *testing.T) {
	t.Parallel()
	c := command(t, "/bin/bash", `read -r pid comm state ppid pgrp sid tty rest < /proc/$$/stat; echo "$$ $pgrp $sid $tty"`)
	p, _ := run(t, c)
	f := strings.Fields(p.Stdout.Text(DefaultBudget, nil).Text)
	if len(f) != 4 || f[0] != f[1] || f[0] != f[2] || f[3] != "0" {
		t.Errorf("pid pgrp sid tty = %q, want the shell leading its group and session, with tty 0", f)
	}
}

// needEscapeTracking skips a test of finding processes that left their command's process
// group: only Linux lets Boris find them (see procs_darwin.go).
func needEscapeTracking(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("processes that leave their group are tracked only on Linux")
	}
}
