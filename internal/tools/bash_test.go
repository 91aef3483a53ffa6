package tools_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/testutil"
)

type bashOut struct {
	ExitCode        *int     `json:"exit_code"`
	Signal          string   `json:"signal"`
	TimedOut        bool     `json:"timed_out"`
	Stopped         string   `json:"stopped"`
	Cwd             string   `json:"cwd"`
	Stdout          string   `json:"stdout"`
	Stderr          string   `json:"stderr"`
	StdoutTruncated bool     `json:"stdout_truncated"`
	StdoutFile      string   `json:"stdout_file"`
	TaskID          string   `json:"task_id"`
	Notes           []string `json:"notes"`
}

func bash(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, bashOut) {
	t.Helper()
	return callFor[bashOut](t, cs, "bash", args)
}

// TestBashShapes checks how bash shows what a command did: its exit code, stdout and
// stderr, and output that looks like the result's own lines. How scripts run (heredocs,
// continuations, trailing & and comments) is package shell's to test.
func TestBashShapes(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	tests := []struct {
		name, command string
		code          int
		want          []string // lines the text must contain
		stdout        string
	}{
		{name: "false", command: "false", code: 1, want: []string{"exit_code: 1"}},
		{name: "exit 3", command: "echo out; exit 3", code: 3, stdout: "out\n"},
		{name: "heredoc last", command: "cat <<'EOF'\n$HOME stays\nEOF", code: 0, stdout: "$HOME stays\n"},
		{name: "unterminated quote", command: "echo 'open", code: 2, want: []string{"exit_code: 2", "stderr:", "unexpected EOF"}},
		{name: "marker lookalike", command: "echo 'exit_code: 0'; echo '[... 5 characters omitted ...]'; exit 9", code: 9, stdout: "exit_code: 0\n[... 5 characters omitted ...]\n"},
		{name: "stderr only", command: "echo oops >&2; exit 1", code: 1, want: []string{"stderr:\noops\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := bash(t, cs, map[string]any{"command": tt.command, "description": "ignored"})
			if res.IsError {
				t.Fatalf("isError: %s", textOf(res))
			}
			txt := textOf(res)
			if out.ExitCode == nil || *out.ExitCode != tt.code {
				t.Errorf("exit_code = %v, want %d\n%s", out.ExitCode, tt.code, txt)
			}
			if !strings.HasPrefix(txt, fmt.Sprintf("exit_code: %d\n", tt.code)) {
				t.Errorf("text does not start with exit_code: %d:\n%s", tt.code, txt)
			}
			if out.Stdout != tt.stdout && tt.stdout != "" {
				t.Errorf("stdout = %q, want %q", out.Stdout, tt.stdout)
			}
			if tt.stdout != "" && !strings.Contains(txt, "stdout:\n"+tt.stdout) {
				t.Errorf("text lacks the stdout block:\n%s", txt)
			}
			if tt.stdout == "" && strings.Contains(txt, "stdout:") {
				t.Errorf("text has an empty stdout block:\n%s", txt)
			}
			for _, w := range tt.want {
				if !strings.Contains(txt, w) {
					t.Errorf("text lacks %q:\n%s", w, txt)
				}
			}
			for _, leak := range []string{"__boris", "BASH_ENV", "eval"} {
				if strings.Contains(txt, leak) {
					t.Errorf("text shows wrapper text %q:\n%s", leak, txt)
				}
			}
		})
	}
}

func TestBashErrors(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	for _, args := range []map[string]any{
		{"command": "  \n"},
		{"command": "true", "timeout": -1},
		{"command": "echo a\x00b"},
		{"command": "echo a\x00b", "run_in_background": true},
	} {
		res := call(t, cs, "bash", args)
		if !res.IsError || !strings.HasPrefix(textOf(res), "INVALID_ARGUMENT") {
			t.Errorf("bash(%v) = %q, want an INVALID_ARGUMENT error", args, textOf(res))
		}
	}
}

func TestBashCwdAndEnvPersist(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	sub := filepath.Join(cfg.Workdir, "a dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	steps := []struct{ command, stdout string }{
		{"cd 'a dir' && export FOO=1 BAR='two words'", ""},
		{"pwd; echo $FOO $BAR", sub + "\n1 two words\n"},
		{"cd /tmp", ""},
		{"pwd", "/tmp\n"},
		{"cd " + shellQuote(sub) + "; unset FOO", ""},
		{"echo ${FOO-unset}", "unset\n"},
	}
	for _, s := range steps {
		res, out := bash(t, cs, map[string]any{"command": s.command})
		if *out.ExitCode != 0 || (s.stdout != "" && out.Stdout != s.stdout) {
			t.Fatalf("bash(%q) = %s, want stdout %q", s.command, textOf(res), s.stdout)
		}
	}
	// A working directory removed behind the session's back falls back to the workdir.
	if _, out := bash(t, cs, map[string]any{"command": "rm -rf " + shellQuote(sub)}); *out.ExitCode != 0 {
		t.Fatalf("rm failed: %+v", out)
	}
	res, out := bash(t, cs, map[string]any{"command": "pwd"})
	if out.Stdout != cfg.Workdir+"\n" || !strings.Contains(textOf(res), "no longer exists") {
		t.Errorf("after removing the cwd: %s", textOf(res))
	}
}

func TestBashTokenNeverReachesCommands(t *testing.T) {
	cfg := testConfig(t)
	cfg.Token = "s3cret-token-value"
	t.Setenv("BORIS_TOKEN", cfg.Token)
	cs, _ := connect(t, cfg, nil)
	_, out := bash(t, cs, map[string]any{"command": "env"})
	if strings.Contains(out.Stdout, cfg.Token) || strings.Contains(out.Stdout, "BORIS_TOKEN") {
		t.Errorf("the token reached the command's environment")
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	start := time.Now()
	// Long enough for a loaded machine to run the echo first.
	res, out := bash(t, cs, map[string]any{"command": "echo $$; sleep 100 & sleep 100", "timeout": 2000})
	// Held for as long as the sleeps run, it would return after 100 s.
	if d := time.Since(start); d > testutil.Within {
		t.Errorf("returned after %v", d)
	}
	txt := textOf(res)
	if !out.TimedOut || !strings.Contains(txt, "\ntimed out: the command ran past its 2000 ms timeout") || !strings.Contains(txt, "stdout:\n") {
		t.Errorf("result does not say it timed out with the output so far:\n%s", txt)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(out.Stdout))
	if err != nil {
		t.Fatalf("stdout %q: %v", out.Stdout, err)
	}
	if shell.GroupAlive(pgid) {
		t.Errorf("process group %d survived the timeout", pgid)
	}
}

func TestBashTimeoutClamped(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	res, out := bash(t, cs, map[string]any{"command": "true", "timeout": 900000})
	if len(out.Notes) == 0 || !strings.Contains(textOf(res), "600000") {
		t.Errorf("clamped timeout not reported:\n%s", textOf(res))
	}
}

func TestBashGrandchildDoesNotHoldCall(t *testing.T) {
	t.Parallel()
	cs, srv := connect(t, testConfig(t), nil)
	start := time.Now()
	res, out := bash(t, cs, map[string]any{"command": "echo $$; sleep 100 &"})
	// Held for as long as the grandchild runs, it would return after 100 s.
	if d := time.Since(start); d > testutil.Within {
		t.Errorf("returned after %v", d)
	}
	if *out.ExitCode != 0 {
		t.Fatalf("%s", textOf(res))
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(out.Stdout))
	if !shell.GroupAlive(pgid) {
		t.Fatalf("the background sleep is already gone")
	}
	srv.Close() // shutdown ends what the session left running
	if shell.GroupAlive(pgid) {
		t.Errorf("process group %d survived server shutdown", pgid)
	}
}

func TestBashCancel(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	pidFifo := filepath.Join(cfg.Workdir, "pid")
	testutil.Fifo(t, pidFifo)
	wg.Go(func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > pid; sleep 100"}})
		if err == nil {
			t.Errorf("cancelled call returned no error")
		}
	})
	pid := readPID(t, pidFifo)
	cancel()
	wg.Wait()
	waitGone(t, pid)
}

// readPID reads the pid a command writes to the fifo at path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	s := testutil.ReadFifo(t, path)
	pid, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("pid written to %s: %q", path, s)
	}
	return pid
}

// waitGone waits for process group pgid to end; signals are asynchronous, so a group
// may take a moment to go after the call that stopped it returns.
func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Within)
	// Look again after each exit: the first look can miss a member on its way in or out.
	for shell.GroupAlive(pgid) {
		members := groupMembers(pgid)
		if len(members) > 0 && !testutil.Exited(members[0], deadline) || time.Now().After(deadline) {
			t.Fatalf("process group %d is still alive: %v", pgid, members)
		}
	}
}

func TestBashTruncationAndRetrieval(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	res, out := bash(t, cs, map[string]any{"command": "seq 1 100000; echo ERROR at the end >&2"})
	txt := textOf(res)
	if !out.StdoutTruncated || out.StdoutFile == "" {
		t.Fatalf("not truncated: %+v", out)
	}
	if !strings.HasPrefix(out.Stdout, "1\n2\n3\n") || !strings.HasSuffix(out.Stdout, "99999\n100000\n") {
		t.Errorf("stdout lacks its head or tail")
	}
	if n := utf8.RuneCountInString(out.Stdout); n > shell.DefaultBudget {
		t.Errorf("stdout has %d characters, over the budget", n)
	}
	if !strings.Contains(txt, "ERROR at the end") {
		t.Errorf("stderr lost")
	}
	m := regexp.MustCompile(`lines (\d+)-(\d+) of (\S+)\. Read them with view .* or bash: sed -n '(\d+),(\d+)p' (\S+) \.\.\.\]`).FindStringSubmatch(out.Stdout)
	if m == nil {
		t.Fatalf("no retrieval marker in stdout:\n%s", out.Stdout[len(out.Stdout)/2-300:len(out.Stdout)/2+300])
	}
	first, _ := strconv.Atoi(m[1])
	last, _ := strconv.Atoi(m[2])
	// The follow-up the marker names fetches exactly the omitted lines.
	_, got := bash(t, cs, map[string]any{"command": fmt.Sprintf("sed -n '%d,%dp' %s | head -1; sed -n '%d,%dp' %s | tail -1", first, last, m[6], first, last, m[6])})
	if got.Stdout != fmt.Sprintf("%d\n%d\n", first, last) {
		t.Errorf("follow-up printed %q, want lines %d and %d", got.Stdout, first, last)
	}
	head := out.Stdout[:strings.Index(out.Stdout, "\n[...")]
	if !strings.HasSuffix(head, fmt.Sprintf("\n%d\n", first-1)) {
		t.Errorf("head does not end at line %d: %q", first-1, head[len(head)-20:])
	}
}

func TestBashUTF8AndLongLines(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	tests := []struct{ name, command string }{
		{"multibyte flood", "for i in $(seq 1 20000); do printf 'é漢🙂'; done"},
		{"1 MB line", "head -c 1048576 /dev/zero | tr '\\0' x; echo"},
		{"64 KiB line then more", "head -c 70000 /dev/zero | tr '\\0' y; echo; echo tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := bash(t, cs, map[string]any{"command": tt.command})
			if *out.ExitCode != 0 {
				t.Fatalf("%s", textOf(res))
			}
			if !utf8.ValidString(out.Stdout) || strings.ContainsRune(out.Stdout, utf8.RuneError) {
				t.Errorf("stdout is not clean UTF-8")
			}
			if n := utf8.RuneCountInString(out.Stdout); n > shell.DefaultBudget {
				t.Errorf("stdout has %d characters, over the budget", n)
			}
			if !out.StdoutTruncated {
				t.Errorf("not truncated")
			}
		})
	}
}

// TestBashProgress: a command that runs a while gets progress notifications, each
// carrying only the newest few KB of output.
func TestBashProgress(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ProgressDelay, cfg.ProgressInterval = time.Millisecond, 5*time.Millisecond
	release := filepath.Join(cfg.Workdir, "release")
	var mu sync.Mutex
	var msgs []string
	var once sync.Once
	cs, _ := connect(t, cfg, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, req.Params.Message)
			mu.Unlock()
			// The command waits for this file, so it surely runs while notifications flow,
			// until one has carried its last line.
			if strings.Contains(req.Params.Message, "50000\n") {
				once.Do(func() { _ = os.WriteFile(release, nil, 0o644) })
			}
		},
	})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "seq 1 50000; while [ ! -f release ]; do sleep 0.01; done; echo late"}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(textOf(res), "late\n") {
		t.Errorf("final result incomplete: %q", textOf(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) == 0 {
		t.Fatal("no progress notifications")
	}
	all := strings.Join(msgs, "")
	if !strings.Contains(all, "lines skipped") {
		t.Errorf("notifications do not carry the newest lines with a count of those skipped: %q", all[:min(len(all), 300)])
	}
	for _, m := range msgs {
		if len(m) > 5000 {
			t.Errorf("a notification carried %d bytes, want at most a few KB", len(m))
		}
	}
}

// TestBashProgressWhileQuiet: a command that prints nothing still gets notifications
// saying it runs, so that a client whose wait restarts with each keeps waiting.
func TestBashProgressWhileQuiet(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ProgressDelay, cfg.ProgressInterval, cfg.ProgressQuiet = time.Millisecond, 5*time.Millisecond, 20*time.Millisecond
	// The command waits on the fifo, silent, until a notification has come.
	cs, notes := connectReleasing(t, cfg, filepath.Join(cfg.Workdir, "release"))
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "read -r word < release; echo got $word"}}
	params.SetProgressToken("tok")
	ctx, cancel := context.WithTimeout(t.Context(), testutil.Within)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("a silent command got no progress notification to end it: %v", err)
	}
	if !strings.Contains(textOf(res), "got go") {
		t.Errorf("result = %q", textOf(res))
	}
	if msgs := notes(); len(msgs) == 0 || !strings.Contains(msgs[0], "still running after") || !strings.Contains(msgs[0], "no new output") {
		t.Errorf("notifications = %q, want one saying the command still runs", msgs)
	}
}

// connectReleasing connects a client that writes a line to the fifo release (made here)
// on the first progress notification it gets, and returns it with what returns the
// messages of the notifications so far.
func connectReleasing(t *testing.T, cfg config.Config, release string) (*mcp.ClientSession, func() []string) {
	t.Helper()
	testutil.Fifo(t, release)
	var once sync.Once
	var mu sync.Mutex
	var msgs []string
	cs, _ := connect(t, cfg, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, req.Params.Message)
			mu.Unlock()
			once.Do(func() {
				go func() {
					if f, err := os.OpenFile(release, os.O_WRONLY, 0); err == nil {
						_, _ = f.WriteString("go\n")
						f.Close()
					}
				}()
			})
		},
	})
	return cs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(msgs)
	}
}

// TestBashNoProgressForQuickCommands: a command that ends before the progress delay sends
// no notification at all, however much it prints.
func TestBashNoProgressForQuickCommands(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ProgressDelay = time.Hour
	var mu sync.Mutex
	n := 0
	cs, _ := connect(t, cfg, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			n++
			mu.Unlock()
		},
	})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "seq 1 20000"}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	// Give any notification sent before the result time to be handled: a second call.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 0 {
		t.Errorf("%d progress notifications for a command that ended before the delay", n)
	}
}

func TestBashSessionCloseKills(t *testing.T) {
	t.Parallel()
	cs, srv := connect(t, testConfig(t), nil)
	res := call(t, cs, "bash", map[string]any{"command": "echo $$; sleep 100", "run_in_background": true})
	var out bashOut
	structured(t, res, &out)
	if out.TaskID == "" {
		t.Fatalf("no task_id: %s", textOf(res))
	}
	to := call(t, cs, "task_output", map[string]any{"task_id": out.TaskID, "wait_ms": 5000})
	pgid, err := strconv.Atoi(regexp.MustCompile(`stdout:\n(\d+)`).FindStringSubmatch(textOf(to))[1])
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	srv.Close()
	if shell.GroupAlive(pgid) {
		t.Errorf("task group %d survived the session", pgid)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestBashShutdownStopsRunningCommand(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, srv := connect(t, cfg, nil)
	pidFifo := filepath.Join(cfg.Workdir, "pid")
	testutil.Fifo(t, pidFifo)
	var wg sync.WaitGroup
	wg.Go(func() {
		// The call may end with a result or with the connection closing: either way it
		// must end.
		_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > pid; sleep 100 & sleep 100"}})
	})
	pid := readPID(t, pidFifo)
	srv.Close()
	wg.Wait()
	waitGone(t, pid)
}

func TestBashUnderPOSIXShell(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Shell = "/bin/sh"
	cs, _ := connect(t, cfg, nil)
	steps := []struct {
		command string
		code    int
		stdout  string
	}{
		{"false", 1, ""},
		{"cd /tmp && export FOO=bar", 0, ""},
		{"pwd; echo $FOO; exit 3", 3, "/tmp\nbar\n"},
	}
	for _, s := range steps {
		res, out := bash(t, cs, map[string]any{"command": s.command})
		if *out.ExitCode != s.code || out.Stdout != s.stdout {
			t.Errorf("bash(%q) = %s, want exit %d, stdout %q", s.command, textOf(res), s.code, s.stdout)
		}
	}
}

func TestBashShutdownReachesSetsid(t *testing.T) {
	t.Parallel()
	cs, srv := connect(t, testConfig(t), nil)
	_, out := bash(t, cs, map[string]any{"command": "setsid sleep 100 >/dev/null 2>&1 & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(out.Stdout))
	if err != nil || !processRunning(pid) {
		t.Fatalf("setsid sleep not running: %q, %v", out.Stdout, err)
	}
	srv.Close()
	if processRunning(pid) {
		t.Errorf("process %d, which left its group, survived shutdown", pid)
	}
}

// processRunning reports whether pid exists and is not a zombie.
func processRunning(pid int) bool {
	_, running := procStat(pid)
	return running
}

// groupMembers returns the running processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if g, running := procStat(pid); running && g == pgid {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// procStat returns pid's process group and whether it is running (exists and is not a
// zombie), from /proc/<pid>/stat.
func procStat(pid int) (pgid int, running bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, false
	}
	// After the command name: state, ppid, pgrp.
	f := strings.Fields(s[i+2:])
	if len(f) < 3 {
		return 0, false
	}
	pgid, _ = strconv.Atoi(f[2])
	return pgid, f[0] != "Z"
}

// TestBashHugeExportDoesNotBreakTheSession: a variable too large to pass to a command is
// not kept, with a note, so that later calls still start.
func TestBashHugeExportDoesNotBreakTheSession(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	res, _ := bash(t, cs, map[string]any{"command": `export BIG=$(head -c 200000 /dev/zero | tr '\0' x) SMALL=1`})
	if !strings.Contains(textOf(res), "not kept for later calls: BIG") {
		t.Errorf("no note about BIG: %s", textOf(res))
	}
	res, out := bash(t, cs, map[string]any{"command": `echo "${#BIG} $SMALL"`})
	if res.IsError || out.Stdout != "0 1\n" {
		t.Errorf("next call: %s; want BIG dropped and SMALL kept", textOf(res))
	}
}

// TestBashRunsWithoutATerminal: git never waits for an editor or a password prompt, unless
// the server's environment says otherwise.
func TestBashRunsWithoutATerminal(t *testing.T) {
	// Not parallel: it sets the server's environment.
	for _, k := range []string{"GIT_EDITOR", "GIT_TERMINAL_PROMPT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	if _, out := bash(t, cs, map[string]any{"command": `echo "$GIT_EDITOR $GIT_TERMINAL_PROMPT"`}); out.Stdout != "true 0\n" {
		t.Errorf("GIT_EDITOR and GIT_TERMINAL_PROMPT = %q, want true 0", out.Stdout)
	}
	if _, err := exec.LookPath("git"); err == nil {
		script := "git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty 2>&1; echo status $?"
		res, out := bash(t, cs, map[string]any{"command": script, "timeout": 20000})
		if out.TimedOut || !strings.Contains(out.Stdout, "status 1") {
			t.Errorf("git commit without -m: %s; want it to fail at once", textOf(res))
		}
	}

	t.Setenv("GIT_EDITOR", "my-editor")
	cs, _ = connect(t, cfg, nil)
	if _, out := bash(t, cs, map[string]any{"command": `echo "$GIT_EDITOR"`}); out.Stdout != "my-editor\n" {
		t.Errorf("a GIT_EDITOR the server had = %q, want it kept", out.Stdout)
	}
}

// TestBashStoppedCommandKeepsCwd: a command that timed out or was cancelled did not finish,
// so its cd and export are not kept.
func TestBashStoppedCommandKeepsCwd(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	if err := os.Mkdir(filepath.Join(cfg.Workdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out := bash(t, cs, map[string]any{"command": "cd sub && export STOPPED=1 && sleep 5", "timeout": 200})
	if !out.TimedOut {
		t.Fatalf("not timed out: %+v", out)
	}
	started := filepath.Join(cfg.Workdir, "started")
	testutil.Fifo(t, started)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "cd " + shellQuote(filepath.Join(cfg.Workdir, "sub")) + " && export STOPPED=2 && echo > ../started && sleep 100"}})
	})
	testutil.ReadFifo(t, started)
	cancel()
	wg.Wait()
	res, out := bash(t, cs, map[string]any{"command": "pwd; echo \"[$STOPPED]\""})
	if want := cfg.Workdir + "\n[]\n"; out.Stdout != want {
		t.Errorf("after stopped commands: %s, want stdout %q", textOf(res), want)
	}
}

// TestBashProgressNotJustBeforeResult: a command that ends right after a progress
// notification has its result held back until the guard time has passed since it, so a
// client never gets a notification in the moments before the result.
func TestBashProgressNotJustBeforeResult(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ProgressDelay, cfg.ProgressInterval = time.Millisecond, 20*time.Millisecond
	release := filepath.Join(cfg.Workdir, "release")
	notified := make(chan time.Time, 1)
	cs, _ := connect(t, cfg, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case notified <- time.Now():
				_ = os.WriteFile(release, nil, 0o644) // the command ends as soon as it sees this
			default:
			}
		},
	})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo started; while [ ! -f release ]; do sleep 0.005; done", "timeout": 20000}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	done := time.Now()
	select {
	case at := <-notified:
		// The guard is 250 ms from the send; the handler ran a little after it.
		if gap := done.Sub(at); gap < 125*time.Millisecond {
			t.Errorf("result came %v after a progress notification, want the guard time", gap)
		}
	default:
		t.Fatal("no progress notification")
	}
}
