// Package claudecode drives the built Boris binary through the real Claude
// Code CLI, over STDIO and over HTTP, with a fake Anthropic Messages API in
// place of the model. The CLI is pinned in package.json here; install it with
// `npm ci --prefix e2e/claudecode`. Without it the tests skip, unless
// BORIS_E2E_CLAUDE=1 is set, which makes a missing CLI a failure.
package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// claudeCLI is the Claude Code CLI, pinned in package.json here.
var claudeCLI = &clitest.CLI{
	Name: "Claude Code", Command: "claude", Dir: "e2e/claudecode", Require: "BORIS_E2E_CLAUDE",
	Version: "2.1.332", Needs: "Node.js 22 or later",
}

func TestMain(m *testing.M) { clitest.Main(m, claudeCLI) }

// claudeRun is what one headless Claude Code turn left behind.
type claudeRun struct {
	Output string // its --output-format json result
	Debug  string // its debug log
}

// runClaude runs one headless Claude Code turn against the fake model at
// baseURL, with Boris configured as the MCP server "boris" by mcpServer (one
// entry of an mcpServers object).
func runClaude(t *testing.T, baseURL string, mcpServer map[string]any, timeout time.Duration) claudeRun {
	t.Helper()
	bin := claudeCLI.Path(t)
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"boris": mcpServer}})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	debugFile := filepath.Join(home, "debug.log")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-p", "Follow the script.",
		"--mcp-config", string(cfg),
		"--strict-mcp-config",
		"--allowedTools", "mcp__boris",
		"--output-format", "json",
		"--debug-file", debugFile,
	)
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", // no telemetry, no connectivity probe
		"DISABLE_AUTOUPDATER=1",
		// List MCP tools in the request, as a model sees them once loaded,
		// instead of behind ToolSearch; the fake model checks the name.
		"ENABLE_TOOL_SEARCH=false",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	t.Cleanup(func() {
		if t.Failed() {
			debug, _ := os.ReadFile(debugFile)
			t.Logf("claude debug log:\n%s", debug)
		}
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	debug, err := os.ReadFile(debugFile)
	if err != nil {
		t.Fatal(err)
	}
	return claudeRun{Output: stdout.String(), Debug: string(debug)}
}

// wantClean checks that the turn ended with the fake model's final text and
// that Claude Code logged no broken connection to Boris (it logs one, and
// carries on, on a timeout, a malformed message or a notification it cannot
// place).
func (r claudeRun) wantClean(t *testing.T) {
	t.Helper()
	var out struct {
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.Output), &out); err != nil || out.IsError || out.Result != finalText {
		t.Errorf("claude did not finish the turn with %q: %s", finalText, r.Output)
	}
	for _, line := range r.brokenConnection() {
		t.Errorf("Claude Code logged a broken connection to Boris: %s", line)
	}
}

// brokenConnection returns the debug log's lines about a failed or broken
// connection to Boris.
func (r claudeRun) brokenConnection() []string {
	var lines []string
	for _, line := range strings.Split(r.Debug, "\n") {
		if strings.Contains(line, `MCP server "boris"`) &&
			(strings.Contains(line, "Connection error") || strings.Contains(line, "connection dropped")) {
			lines = append(lines, line)
		}
	}
	return lines
}

// stdioServer is the MCP config entry that starts Boris over STDIO in dir.
func stdioServer(t *testing.T, dir string, flags ...string) map[string]any {
	args := append([]string{"--transport", "stdio", "--workdir", dir}, flags...)
	return map[string]any{"command": clitest.Boris(t), "args": args}
}

// httpServer starts Boris over HTTP on a free loopback port with a bearer
// token read from a file, and returns the MCP config entry that reaches it,
// sending the token after authPrefix in its Authorization header.
func httpServer(t *testing.T, dir, authPrefix string) map[string]any {
	t.Helper()
	url, token := clitest.ServeHTTP(t, dir)
	return map[string]any{
		"type":    "http",
		"url":     url,
		"headers": map[string]string{"Authorization": authPrefix + token},
	}
}

// workspace makes a directory with one small file in it.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first line\nsecond line from notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantResult checks that script step i got a successful tool_result
// containing want, as text and not as a JSON object.
func wantResult(t *testing.T, m *fakeModel, i int, want string) {
	t.Helper()
	r, ok := m.result(i)
	if !ok {
		t.Errorf("step %d (%s): the model never received its tool_result", i, m.script[i].Name)
		return
	}
	if r.IsError {
		t.Errorf("step %d (%s): tool_result is an error: %s", i, m.script[i].Name, r.Text)
	}
	if !strings.Contains(r.Text, want) {
		t.Errorf("step %d (%s): tool_result does not contain %q:\n%s", i, m.script[i].Name, want, r.Text)
	}
	if trimmed := strings.TrimSpace(r.Text); strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		t.Errorf("step %d (%s): the model was given JSON, not text:\n%s", i, m.script[i].Name, r.Text)
	}
}

func bashCall(command string) toolCall {
	return toolCall{Name: "mcp__boris__bash", Input: map[string]any{"command": command}}
}

func TestSTDIO(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t,
		bashCall("echo hello-from-boris"),
		toolCall{Name: "mcp__boris__view", Input: map[string]any{"path": "notes.txt"}},
	)
	runClaude(t, url, stdioServer(t, dir), 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "hello-from-boris")
	wantResult(t, m, 1, "second line from notes")
}

// TestSTDIOInteractiveProgram drives a Python REPL in a terminal through Claude Code:
// started in the background, typed at, answered, ended with Ctrl-D.
func TestSTDIOInteractiveProgram(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t,
		toolCall{Name: "mcp__boris__bash", Input: map[string]any{"command": "python3 -q", "tty": true, "run_in_background": true}},
		toolCall{Name: "mcp__boris__task_input", Input: map[string]any{"task_id": "task-1", "input": "x = 6*7\n"}},
		toolCall{Name: "mcp__boris__task_input", Input: map[string]any{"task_id": "task-1", "input": "print(x)\n"}},
		toolCall{Name: "mcp__boris__task_input", Input: map[string]any{"task_id": "task-1", "keys": []string{"ctrl-d"}}},
	)
	runClaude(t, url, stdioServer(t, dir), 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "waiting for input")
	wantResult(t, m, 2, "42")
	wantResult(t, m, 3, "exited 0")
}

func TestHTTPToken(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t,
		bashCall("echo hello-over-http"),
		bashCall("mkdir -p sub && cd sub && export BORIS_E2E_MARK=kept"),
		bashCall(`pwd; echo "mark=$BORIS_E2E_MARK"`),
	)
	runClaude(t, url, httpServer(t, dir, "Bearer "), 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "hello-over-http")
	// Each call is its own stateless request; the workspace keeps the
	// working directory and environment between them.
	wantResult(t, m, 2, filepath.Join(dir, "sub")+"\n")
	wantResult(t, m, 2, "mark=kept")
}

// TestHTTPWrongToken checks that the token is required through Claude Code
// too: with a wrong one, Boris's tools never reach the model.
func TestHTTPWrongToken(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t, bashCall("echo must-not-run"))
	m.expectMissing = true
	run := runClaude(t, url, httpServer(t, dir, "Bearer wrong-"), 3*time.Minute)
	if r, ok := m.result(0); ok {
		t.Errorf("a call with a wrong token reached Boris: %s", r.Text)
	}
	if !slices.Contains(m.missingTools(), "mcp__boris__bash") {
		t.Errorf("Claude Code offered mcp__boris__bash with a wrong token")
	}
	if !strings.Contains(run.Debug, "rejected the configured Authorization header (HTTP 401)") {
		t.Errorf("Claude Code did not log the rejected token")
	}
}

// TestHTTPLongCall runs a silent command for longer than the 60 s Claude
// Code waits for an HTTP response to start.
func TestHTTPLongCall(t *testing.T) {
	if testing.Short() || os.Getenv("BORIS_E2E_SKIP_LONG") == "1" {
		t.Skip("a 75 s call; skipped with -short or BORIS_E2E_SKIP_LONG=1")
	}
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t, toolCall{Name: "mcp__boris__bash", Input: map[string]any{
		"command": "sleep 75; echo long-call-done", "timeout": 120000,
	}})
	runClaude(t, url, httpServer(t, dir, "Bearer "), 4*time.Minute).wantClean(t)
	wantResult(t, m, 0, "long-call-done")
}

// TestSTDIOSilentCall runs a silent command long enough for Boris to send
// the progress notifications that say it still runs: Claude Code must take
// them without logging a broken connection.
func TestSTDIOSilentCall(t *testing.T) {
	if testing.Short() || os.Getenv("BORIS_E2E_SKIP_LONG") == "1" {
		t.Skip("a 25 s call; skipped with -short or BORIS_E2E_SKIP_LONG=1")
	}
	t.Parallel()
	dir := workspace(t)
	m, url := newFakeModel(t, bashCall("sleep 25; echo silent-call-done"))
	runClaude(t, url, stdioServer(t, dir), 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "silent-call-done")
}

// TestClaudeCodeFace drives the --tools claude-code face, which offers
// Claude Code's own tool names and parameters.
func TestClaudeCodeFace(t *testing.T) {
	t.Parallel()
	help, err := exec.Command(clitest.Boris(t), "--help").CombinedOutput()
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatal(err)
	}
	if !strings.Contains(string(help), "--tools") {
		t.Skip("boris has no --tools flag yet: the --tools claude-code face is not built in")
	}
	dir := workspace(t)
	m, url := newFakeModel(t,
		toolCall{Name: "mcp__boris__Bash", Input: map[string]any{"command": "echo hello-from-the-face", "description": "Say hello"}},
		toolCall{Name: "mcp__boris__Read", Input: map[string]any{"file_path": filepath.Join(dir, "notes.txt")}},
	)
	runClaude(t, url, stdioServer(t, dir, "--tools", "claude-code"), 3*time.Minute).wantClean(t)
	wantResult(t, m, 0, "hello-from-the-face")
	wantResult(t, m, 1, "second line from notes")
}

// TestRewindBashChange rewinds, through Claude Code, what a Bash command changed: the
// command's result names its checkpoint, a dry run lists what would change, and the
// rewind puts the workspace back byte for byte.
func TestRewindBashChange(t *testing.T) {
	t.Parallel()
	dir := workspace(t)
	before, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m, url := newFakeModel(t,
		bashCall("sed -i 's/first/FIRST/' notes.txt && echo made > made.txt"),
		toolCall{Name: "mcp__boris__rewind", Input: map[string]any{"to": "cp-1"}},
		toolCall{Name: "mcp__boris__rewind", Input: map[string]any{"to": "cp-1", "dry_run": false}},
	)
	run := runClaude(t, url, stdioServer(t, dir, "--state-dir", t.TempDir()), 3*time.Minute)
	run.wantClean(t)
	wantResult(t, m, 0, "checkpoint: cp-1 (2 files changed)")
	wantResult(t, m, 1, "Would put back 2 paths as before cp-1")
	wantResult(t, m, 2, "Put back 2 paths as before cp-1")
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); !bytes.Equal(got, before) {
		t.Errorf("notes.txt after the rewind = %q, want %q", got, before)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("made.txt after the rewind: %v, want it gone", err)
	}
}
