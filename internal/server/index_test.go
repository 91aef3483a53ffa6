package server

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

// Once grep has made a search index of a tree, the live view says so and how big it is,
// and the log says it too.
func TestIndexShownInLiveView(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.CacheDir = t.TempDir()
	// A tree searched twice gets an index from a tenth of the default 50,000 files.
	for d := range 50 {
		dir := filepath.Join(cfg.Workdir, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 101 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), fmt.Appendf(nil, "file %d of %d\n", f, d), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	written := time.Now()
	// An index leaves out a file changed within the last second (its times could not tell
	// a later write in the same clock tick): let the tree get that old, so that the index
	// holds every file.
	time.Sleep(time.Until(written.Add(1100 * time.Millisecond)))
	var logs lockedBuffer
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	sub := srv.Watch().Subscribe(0)
	defer sub.Close()
	cs := testutil.Connect(t, srv.MCP(), nil)
	for range 2 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "file 7 of 42"}})
		if err != nil || res.IsError {
			t.Fatalf("grep: %v %v", err, res)
		}
	}
	deadline := time.After(time.Minute)
	for {
		evs, wait := sub.Next(100)
		for _, e := range evs {
			if e.Kind != watch.KindIndex {
				continue
			}
			if e.Cwd != cfg.Workdir || e.Files != 5050 || !regexp.MustCompile(`^search index of .+: 5050 files, about [0-9.]+ MB in memory and [0-9.]+ MB on disk, built in `).MatchString(e.Summary) {
				t.Errorf("index event: root %q, %d files, %q; want %s, 5050 files", e.Cwd, e.Files, e.Summary, cfg.Workdir)
			}
			if !regexp.MustCompile(`msg="search index ready" root=\S+ files=5050 `).MatchString(logs.String()) {
				t.Errorf("the log does not say the index is ready:\n%s", logs.String())
			}
			return
		}
		if wait != nil {
			select {
			case <-wait:
			case <-deadline:
				t.Fatal("no index event within a minute of the second search")
			}
		}
	}
}
