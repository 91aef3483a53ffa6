package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
	"github.com/mjkoo/boris/internal/testutil"
)

// runAgents runs agents.mjs, one turn of an OpenAI Agents SDK agent with Boris as its
// MCP server and the SDK's default settings, against the fake model's Responses API.
func runAgents(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", "@openai", "agents")); err != nil {
		testutil.Missing(t, agentsCLI.Require, "the OpenAI Agents SDK is not installed: run `npm ci --prefix e2e/clients`")
	}
	bin := agentsCLI.Path(t)
	script, err := filepath.Abs("agents.mjs")
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"command": srv.Command, "args": srv.Args, "url": srv.URL, "token": srv.Token})
	home := t.TempDir()
	stdout, stderr := runCLI(t, home, []string{
		"HOME=" + home,
		"BORIS_E2E_SERVER=" + string(spec),
		"BORIS_E2E_MODEL_URL=" + m.URL + "/v1",
		"BORIS_E2E_API=responses",
	}, 5*time.Minute, bin, script)
	wantFinal(t, stdout, stderr)
}

func TestAgents(t *testing.T) { runQuick(t, agentsCLI, runAgents, false) }

// The Agents SDK gives up on a call after 60 s by default.
func TestAgentsLongCall(t *testing.T) { runLongCall(t, agentsCLI, runAgents) }
