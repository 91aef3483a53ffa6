package tools_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/testutil"
)

// TestEditFileHeldForWriting: an edit or overwrite of a file that a command's background
// process holds open for appending says that what the process writes on is lost; an edit
// of a file no one holds says nothing of the kind.
func TestEditFileHeldForWriting(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	log := writeIn(t, cfg.Workdir, "app.log", "start\n", 0o644)
	log2 := writeIn(t, cfg.Workdir, "app2.log", "start\n", 0o644)
	other := writeIn(t, cfg.Workdir, "other.txt", "start\n", 0o644)
	ready := filepath.Join(cfg.Workdir, "ready")
	testutil.Fifo(t, ready)
	startTask(t, cs, "exec 3>>app.log 4>>app2.log; echo > ready; exec sleep 300")
	testutil.ReadFifo(t, ready)
	const note = ") had this file open for writing"
	for _, c := range []struct {
		tool string
		args map[string]any
		held bool
	}{
		{"view", map[string]any{"path": log}, false},
		{"str_replace", map[string]any{"path": log, "old_str": "start", "new_str": "begin"}, true},
		// The file the process holds is no longer the one at that path.
		{"str_replace", map[string]any{"path": log, "old_str": "begin", "new_str": "again"}, false},
		{"view", map[string]any{"path": log2}, false},
		{"create_file", map[string]any{"path": log2, "content": "new\n"}, true},
		{"view", map[string]any{"path": other}, false},
		{"str_replace", map[string]any{"path": other, "old_str": "start", "new_str": "begin"}, false},
	} {
		res := call(t, cs, c.tool, c.args)
		if got := textOf(res); res.IsError || strings.Contains(got, note) != c.held {
			t.Errorf("%s(%v) = %s; want a note %q: %v", c.tool, c.args, got, note, c.held)
		}
	}
}
