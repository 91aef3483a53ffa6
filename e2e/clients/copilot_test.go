package clients

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// runCopilot runs `copilot -p` in its offline bring-your-own-model mode (no login)
// against the fake model's chat/completions.
func runCopilot(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	bin := copilotCLI.Path(t)
	home := t.TempDir()
	entry := map[string]any{"type": "local", "command": srv.Command, "args": srv.Args, "tools": []string{"*"}}
	if !srv.stdio() {
		entry = map[string]any{"type": "http", "url": srv.URL, "headers": map[string]string{"Authorization": "Bearer " + srv.Token}, "tools": []string{"*"}}
	}
	// What `copilot mcp add` writes.
	writeJSON(t, filepath.Join(home, ".copilot", "mcp-config.json"), map[string]any{"mcpServers": map[string]any{"boris": entry}})
	stdout, stderr := runCLI(t, home, []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"TMPDIR=" + home, // where it saves a result too large to hand over
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL=" + m.URL + "/v1",
		"COPILOT_PROVIDER_API_KEY=dummy",
		"COPILOT_MODEL=boris-e2e-model",
	}, 5*time.Minute, bin, "-p", "Follow the script.", "--allow-all-tools", "--output-format", "json", "--no-auto-update")
	wantFinal(t, stdout, stderr)
}

func TestCopilot(t *testing.T) { runQuick(t, copilotCLI, runCopilot, false) }
