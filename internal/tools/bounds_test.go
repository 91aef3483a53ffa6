package tools_test

import (
	"strings"
	"testing"
)

// A replace_all that would grow a file far past --max-file-size is refused with the size it
// would have made, through str_replace and str_replace_editor alike, and the server goes on.
func TestReplaceAllGrowthRefused(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		cfg := testConfig(t)
		cfg.RequireViewBeforeEdit = false
		cfg.AnthropicCompat = compat
		p := writeIn(t, cfg.Workdir, "a.txt", strings.Repeat("a", 100_000), 0o644)
		cs, _ := connect(t, cfg, nil)
		args := map[string]any{"path": "a.txt", "old_str": "a", "new_str": strings.Repeat("b", 1000), "replace_all": true}
		tool := "str_replace"
		if compat {
			tool = "str_replace_editor"
			args["command"] = "str_replace"
		}
		wantErr(t, call(t, cs, tool, args), "TOO_LARGE", "100,000,000 bytes", "100000 replacements", "10,000,000-byte limit")
		if got := mustRead(t, p); len(got) != 100_000 {
			t.Errorf("%s: the file changed to %d bytes", tool, len(got))
		}
	}
}
