package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// mcpSettings is the mcpServers entry of Gemini CLI's and Qwen Code's settings.json
// that reaches Boris.
func mcpSettings(srv server) map[string]any {
	if srv.stdio() {
		return map[string]any{"command": srv.Command, "args": srv.Args, "trust": true}
	}
	return map[string]any{"httpUrl": srv.URL, "headers": map[string]string{"Authorization": "Bearer " + srv.Token}, "trust": true}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runGemini runs `gemini -p` in yolo mode against the fake model's Gemini API.
func runGemini(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	bin := geminiCLI.Path(t)
	home := t.TempDir()
	writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{
		"mcpServers": map[string]any{"boris": mcpSettings(srv)},
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
	})
	stdout, stderr := runCLI(t, home, []string{
		"HOME=" + home,
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL=" + m.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_BROWSER=true",
	}, 5*time.Minute, bin, "-p", "Follow the script.", "--approval-mode", "yolo", "-o", "json", "-m", "gemini-2.5-pro")
	wantFinal(t, stdout, stderr)
}

func TestGemini(t *testing.T) { runQuick(t, geminiCLI, runGemini, false) }
