package claudecode

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mjkoo/boris/internal/testutil"
)

// tasksVersion is the first Claude Code release that speaks MCP Tasks (in its interactive
// sessions only).
const tasksVersion = "2.1.332"

// terminal is Claude Code's interactive session running under a pseudo-terminal: what it
// has drawn so far, with the escape sequences taken out, and its debug log.
type terminal struct {
	t     *testing.T
	tty   *os.File
	debug string // the debug log's path

	mu      sync.Mutex
	screen  strings.Builder
	changed chan struct{} // closed and replaced whenever the screen changes
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]`)

func (term *terminal) Write(p []byte) (int, error) {
	term.mu.Lock()
	defer term.mu.Unlock()
	term.screen.Write(p)
	close(term.changed)
	term.changed = make(chan struct{})
	return len(p), nil
}

// waitScreen waits until the screen shows want, and fails the test if it does not within
// d.
func (term *terminal) waitScreen(want string, d time.Duration) {
	term.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		term.mu.Lock()
		ch := term.changed
		term.mu.Unlock()
		if strings.Contains(squeezed(term.text()), squeezed(want)) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			term.t.Fatalf("the screen did not show %q within %v", want, d)
		}
	}
}

// waitLog waits until the debug log has a line containing want, and fails the test if it
// does not within d. Nothing on the screen says that an MCP server has connected, so the
// log, which the session writes as it goes, is read again every 100 ms until it does.
func (term *terminal) waitLog(want string, d time.Duration) {
	term.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, _ := os.ReadFile(term.debug); strings.Contains(string(b), want) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			term.t.Fatalf("the debug log did not show %q within %v", want, d)
		}
	}
}

// typeLine types line into the session's prompt and sends it once it shows.
func (term *terminal) typeLine(line string) {
	term.t.Helper()
	if _, err := term.tty.WriteString(line); err != nil {
		term.t.Fatal(err)
	}
	term.waitScreen(line, time.Minute)
	if _, err := term.tty.WriteString("\r"); err != nil {
		term.t.Fatal(err)
	}
}

// text is what the session drew, escapes removed.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return escapes.ReplaceAllString(term.screen.String(), "")
}

// squeezed is s without its spaces: the session draws spaces by moving the cursor, so
// screen text is compared without them.
func squeezed(s string) string { return strings.Join(strings.Fields(s), "") }

// runInteractive starts Claude Code's interactive session under a pseudo-terminal against
// the fake model m at baseURL, with Boris as the MCP server "boris", and types prompt as
// its first message once Boris is connected, again until m's script can start (the
// session takes a prompt before it has listed the server's tools). The first-run dialogs
// (onboarding, trusting the folder, using the API key) are answered in advance in its
// ~/.claude.json. The session is killed when the test ends.
func runInteractive(t *testing.T, m *fakeModel, baseURL string, mcpServer map[string]any, prompt string) *terminal {
	t.Helper()
	bin := claudeCLI.Path(t)
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.Contains(string(out), tasksVersion) {
		t.Skipf("Claude Code %s speaks MCP Tasks; this is %s", tasksVersion, strings.TrimSpace(string(out)))
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"boris": mcpServer}})
	if err != nil {
		t.Fatal(err)
	}
	home, work := t.TempDir(), t.TempDir()
	const apiKey = "sk-ant-boris-e2e-0123456789abcdefghij"
	state, _ := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
		"projects": map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
		// Claude Code asks once whether to use a key from the environment; it
		// remembers the answer by the key's last 20 characters.
		"customApiKeyResponses": map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
	})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), state, 0o600); err != nil {
		t.Fatal(err)
	}
	debugFile := filepath.Join(home, "debug.log")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--mcp-config", string(cfg), "--strict-mcp-config",
		"--allowedTools", "mcp__boris", "--permission-mode", "default",
		"--debug-file", debugFile,
	)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY="+apiKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"ENABLE_TOOL_SEARCH=false",
		"TERM=xterm-256color",
	)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	term := &terminal{t: t, tty: tty, debug: debugFile, changed: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(term, tty)
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = tty.Close()
		<-copied
		if t.Failed() {
			debug, _ := os.ReadFile(debugFile)
			t.Logf("claude debug log:\n%s", debug)
			t.Logf("claude screen:\n%s", term.text())
		}
	})
	term.waitScreen("❯", time.Minute)
	term.waitLog(`Server "boris" connected`, time.Minute)
	m.allowEarly()
	for try := 0; ; try++ {
		term.typeLine(prompt)
		started := m.await(time.Minute, func() bool { return m.earlyAnswers() > try || m.requested(0) })
		if !started {
			t.Fatal("the model was not asked anything within a minute of the prompt")
		}
		if m.requested(0) {
			return term
		}
		if try == 5 {
			t.Fatalf("Claude Code still does not offer Boris's tools after %d prompts", try+1)
		}
		term.waitScreen("The tools are not there yet.", time.Minute)
	}
}

// interactiveTaskRun drives a Claude Code interactive session whose model calls bash once
// with input: Boris answers with an MCP task, Claude Code tells the model that the call
// went to the background, and, once the command has ended, tells it the result in a task
// notification, which must carry marker.
func interactiveTaskRun(t *testing.T, mcpServer func(dir string) map[string]any, input map[string]any, marker string) {
	dir := workspace(t)
	m, url := newFakeModel(t, toolCall{Name: "mcp__boris__bash", Input: input})
	runInteractive(t, m, url, mcpServer(dir), "Follow the script.")
	if !m.await(2*time.Minute, func() bool { _, ok := m.result(0); return ok }) {
		t.Fatal("the model never received the bash call's tool_result")
	}
	r, _ := m.result(0)
	if strings.Contains(r.Text, marker) || !strings.Contains(r.Text, "moved to the background") {
		t.Errorf("the model was not told that the call moved to the background: %s", r.Text)
	}
	t.Logf("tool_result of the task: %s", r.Text)
	var note string
	if !m.await(2*time.Minute, func() bool { var ok bool; note, ok = m.userText(marker); return ok }) {
		t.Fatalf("the model was never told the task's result (%q)", marker)
	}
	t.Logf("task notification: %s", note)
}

func TestInteractiveTaskSTDIO(t *testing.T) {
	t.Parallel()
	interactiveTaskRun(t, func(dir string) map[string]any { return stdioServer(t, dir) },
		map[string]any{"command": "sleep 2; echo stdio-task-done", "run_in_background": true}, "stdio-task-done")
}

func TestInteractiveTaskHTTP(t *testing.T) {
	t.Parallel()
	interactiveTaskRun(t, func(dir string) map[string]any { return httpServer(t, dir, "Bearer ") },
		map[string]any{"command": "sleep 2; echo http-task-done", "run_in_background": true}, "http-task-done")
}

// TestInteractiveForegroundTask: a foreground command still running after --task-after
// becomes a task too.
func TestInteractiveForegroundTask(t *testing.T) {
	t.Parallel()
	interactiveTaskRun(t, func(dir string) map[string]any { return stdioServer(t, dir, "--task-after", "1") },
		map[string]any{"command": "sleep 3; echo foreground-task-done"}, "foreground-task-done")
}

// stopHint is how Claude Code tells the model to stop a call that went to the background.
var stopHint = regexp.MustCompile(`TaskStop with task_id "([^"]+)"`)

// TestInteractiveTaskStop: the model stops a task with Claude Code's TaskStop, which
// sends tasks/cancel: the command stops.
func TestInteractiveTaskStop(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	pidFile := filepath.Join(dir, "pid")
	testutil.Fifo(t, pidFile)
	m, url := newFakeModel(t,
		toolCall{Name: "mcp__boris__bash", Input: map[string]any{"command": "echo $$ > pid; exec sleep 600", "run_in_background": true}},
		toolCall{Name: "TaskStop", After: func(previous string) map[string]any {
			id := ""
			if m := stopHint.FindStringSubmatch(previous); m != nil {
				id = m[1]
			}
			return map[string]any{"task_id": id}
		}},
	)
	runInteractive(t, m, url, stdioServer(t, dir), "Follow the script.")
	pid, err := strconv.Atoi(strings.TrimSpace(testutil.ReadFifo(t, pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	if !m.await(2*time.Minute, func() bool { _, ok := m.result(1); return ok }) {
		t.Fatal("the model never received TaskStop's tool_result")
	}
	r, _ := m.result(1)
	t.Logf("TaskStop: %s", r.Text)
	if !testutil.Exited(pid, time.Now().Add(testutil.Within)) {
		t.Errorf("the command (pid %d) still runs after TaskStop", pid)
	}
}
