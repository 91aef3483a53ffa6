package clients

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// runQwen runs `qwen -p` in yolo mode against the fake model's chat/completions.
func runQwen(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	bin := qwenCLI.Path(t)
	home := t.TempDir()
	writeJSON(t, filepath.Join(home, ".qwen", "settings.json"), map[string]any{
		"mcpServers": map[string]any{"boris": mcpSettings(srv)},
		"security":   map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
	})
	stdout, stderr := runCLI(t, home, []string{
		"HOME=" + home,
		"OPENAI_API_KEY=dummy",
		"OPENAI_BASE_URL=" + m.URL + "/v1",
		"OPENAI_MODEL=boris-e2e-model",
		"QWEN_CODE_TRUST_WORKSPACE=true",
		"NO_BROWSER=true",
	}, 5*time.Minute, bin, "-p", "Follow the script.", "--approval-mode", "yolo", "-o", "json", "--auth-type", "openai")
	wantFinal(t, stdout, stderr)
}

func TestQwen(t *testing.T) { runQuick(t, qwenCLI, runQwen, false) }
