package tools_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

// BenchmarkBashTrueCheckpointsAdded is what checkpoints add to a call that changes
// nothing, in a workspace of 4 copies of GOROOT: each iteration runs `bash true` on a
// server with checkpoints off and on one with them on, in turn (target: at most 1.2x; no
// walk of the tree per call).
//
//	go test -run '^$' -bench BashTrueCheckpointsAdded -benchtime 1000x ./internal/tools
func BenchmarkBashTrueCheckpointsAdded(b *testing.B) {
	trees := testutil.GoTrees(b, 4)
	off := connectB(b, func(c *config.Config) { c.Workdir = trees })
	on := connectB(b, func(c *config.Config) {
		c.Workdir, c.Checkpoints, c.StateDir, c.CheckpointMaxFileSize = trees, true, b.TempDir(), 16<<20
	})
	// The first call waits for the baseline; it is not what a call costs.
	if res := callB(b, on, "checkpoint_list", map[string]any{}); res.IsError {
		b.Fatal(textOf(res))
	}
	run := func(cs *mcp.ClientSession) func() {
		return func() {
			if res := callB(b, cs, "bash", map[string]any{"command": "true"}); res.IsError {
				b.Fatal(textOf(res))
			}
		}
	}
	testutil.Paired(b, "off", run(off), "on", run(on))
}
