// Package codex drives the built Boris binary through the real Codex CLI
// (codex exec --json), over STDIO and over HTTP, with a fake OpenAI Responses
// API on 127.0.0.1 in place of the model. The CLI is pinned in package.json
// here; install it with `npm ci --prefix e2e/codex`. Without it the tests
// skip, unless BORIS_E2E_CODEX=1 is set, which makes a missing CLI a failure.
package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// unknownModel is a model slug Codex does not know: it lists MCP tools to the
// model directly (as a namespace), and cuts a long tool output to about
// 12,000 characters.
const unknownModel = "boris-e2e-model"

// defaultModel is Codex 0.171.0's default model: it is given MCP tools to call
// from JavaScript that Codex's exec tool runs ("code mode").
const defaultModel = "gpt-6.2-sol"

// codexCLI is the Codex CLI, pinned in package.json here.
var codexCLI = &clitest.CLI{Name: "Codex", Command: "codex", Dir: "e2e/codex", Require: "BORIS_E2E_CODEX", Version: "0.171.0"}

func TestMain(m *testing.M) { clitest.Main(m, codexCLI) }

// run is one headless Codex turn: what it printed and the environment it
// ran with.
type run struct {
	events []map[string]any // its --json events
	stderr string
}

// runCodex runs one `codex exec --json` turn against the fake model at
// baseURL, as model, with Boris configured as the MCP server "boris" by
// server (the TOML keys of its [mcp_servers.boris] table) and env added.
func runCodex(t *testing.T, baseURL, model, server string, env []string, timeout time.Duration) run {
	t.Helper()
	bin := codexCLI.Path(t)
	home := t.TempDir()
	config := fmt.Sprintf(`model = %q
model_provider = "fake"
approval_policy = "never"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"

[mcp_servers.boris]
default_tools_approval_mode = "approve"
%s
`, model, baseURL, server)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "exec", "--json", "--skip-git-repo-check", "-C", home, "Follow the script.")
	cmd.Env = append(os.Environ(), append([]string{"CODEX_HOME=" + home, "HOME=" + home}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	r := run{stderr: stderr.String()}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			r.events = append(r.events, ev)
		}
	}
	return r
}

// wantClean checks that the turn ended with the fake model's final text.
func (r run) wantClean(t *testing.T) {
	t.Helper()
	for _, ev := range r.events {
		if item, ok := ev["item"].(map[string]any); ok && item["type"] == "agent_message" && item["text"] == finalText {
			return
		}
	}
	b, _ := json.MarshalIndent(r.events, "", "  ")
	t.Errorf("codex did not finish the turn with %q; events:\n%s\nstderr:\n%s", finalText, b, r.stderr)
}

// stdioServer is the [mcp_servers.boris] table that starts Boris over STDIO
// in dir.
func stdioServer(t *testing.T, dir string, flags ...string) string {
	args := append([]string{"--transport", "stdio", "--workdir", dir}, flags...)
	a, _ := json.Marshal(args)
	return fmt.Sprintf("command = %q\nargs = %s\ntool_timeout_sec = 120\n", clitest.Boris(t), a)
}

// tokenEnv names the variable that carries Boris's token to Codex.
const tokenEnv = "BORIS_E2E_TOKEN"

// httpServer starts Boris over HTTP on a free loopback port with a bearer
// token read from a file, and returns the [mcp_servers.boris] table that
// reaches it and the environment that gives Codex the token.
func httpServer(t *testing.T, dir string, flags ...string) (string, []string) {
	t.Helper()
	url, token := clitest.ServeHTTP(t, dir, flags...)
	return fmt.Sprintf("url = %q\nbearer_token_env_var = %q\n", url, tokenEnv), []string{tokenEnv + "=" + token}
}

// wantResult checks that the model read, as the output of script step i,
// text containing every one of want.
func wantResult(t *testing.T, m *fakeModel, i int, want ...string) {
	t.Helper()
	r, ok := m.result(i)
	if !ok {
		t.Errorf("step %d (%s): the model never received its output", i, m.script[i].Name)
		return
	}
	for _, w := range want {
		if !strings.Contains(r, w) {
			t.Errorf("step %d (%s): the output does not contain %q:\n%s", i, m.script[i].Name, w, r)
		}
	}
}

// wantFiles checks the files under dir (name → content).
func wantFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s exists, want it gone", name)
		case want != "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case want != "" && string(got) != want:
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func call(name string, args map[string]any) toolCall { return toolCall{Name: name, Args: args} }
