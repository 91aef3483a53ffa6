package clients

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mjkoo/boris/e2e/internal/clitest"
)

// runOpencode runs `opencode run` against the fake model as an OpenAI-compatible
// provider (chat/completions).
func runOpencode(t *testing.T, m *clitest.Model, srv server) {
	t.Helper()
	bin := opencodeCLI.Path(t)
	home := t.TempDir()
	mcp := map[string]any{"type": "local", "command": append([]string{srv.Command}, srv.Args...)}
	if !srv.stdio() {
		mcp = map[string]any{"type": "remote", "url": srv.URL, "headers": map[string]string{"Authorization": "Bearer " + srv.Token}, "oauth": false}
	}
	config := filepath.Join(home, "opencode.json")
	writeJSON(t, config, map[string]any{
		"$schema":     "https://opencode.ai/config.json",
		"autoupdate":  false,
		"share":       "disabled",
		"model":       "fake/boris-e2e-model",
		"small_model": "fake/boris-e2e-model",
		"permission":  map[string]any{"*": "allow"},
		"provider": map[string]any{"fake": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Fake",
			"options": map[string]any{"baseURL": m.URL + "/v1", "apiKey": "dummy"},
			"models":  map[string]any{"boris-e2e-model": map[string]any{"name": "Boris e2e model", "tool_call": true}},
		}},
		"mcp": map[string]any{"boris": mcp},
	})
	stdout, stderr := runCLI(t, home, []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"OPENCODE_CONFIG=" + config,
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	}, 5*time.Minute, bin, "run", "--format", "json", "Follow the script.")
	wantFinal(t, stdout, stderr)
}

// opencode passes a model's arguments to the server as they are, so a model under
// OpenAI's strict schemas sends null for every optional parameter it does not use: over
// HTTP the model here does. (A turn through opencode is slow, so the two transports
// share the two kinds of model rather than doubling up.)
func TestOpencode(t *testing.T) { runQuick(t, opencodeCLI, runOpencode, false, "stdio") }

func TestOpencodeNulls(t *testing.T) { runQuick(t, opencodeCLI, runOpencode, true, "http") }
