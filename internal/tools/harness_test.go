package tools_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/testutil"
)

// testConfig is a Config as Parse would make it, working in a fresh temporary directory.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	wd := t.TempDir()
	return config.Config{
		Transport:             "stdio",
		Workdir:               wd,
		Timeout:               120 * time.Second, // the default, so goldens and docs/tools.md show it
		MaxFileSize:           10_000_000,
		OutputBudget:          config.DefaultOutputBudget,
		RequireViewBeforeEdit: true,
		MaxSessions:           8,
		MaxBackgroundTasks:    4,
		MaxRequestBytes:       4 << 20,
		LogLevel:              slog.LevelWarn,
		LogFormat:             "text",
		Shell:                 "/bin/bash",
		Version:               "test",
		// Most tests read results through their structured form; tests of the default,
		// text-only results turn it off.
		StructuredOutput: true,
	}
}

// connect starts a server for cfg and returns a client session talking to it over an
// in-memory transport. Both are closed when the test ends.
func connect(t testing.TB, cfg config.Config, opts *mcp.ClientOptions) (*mcp.ClientSession, *server.Server) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(&cfg, log, os.Environ())
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(srv.Close)
	return testutil.Connect(t, srv.MCP(), opts), srv
}

// call invokes a tool and fails the test on a protocol error; tool errors come back as
// results with IsError set.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	return res
}

// textOf joins the text content of a result.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into v.
// callFor calls a tool and decodes its structuredContent into a T, unless the result is
// an error.
func callFor[T any](t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, T) {
	t.Helper()
	res := call(t, cs, name, args)
	var out T
	if !res.IsError {
		structured(t, res, &out)
	}
	return res, out
}

func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structuredContent: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode structuredContent %s: %v", b, err)
	}
}

// TestConcurrentBashKeepsEachOthersState: a command that finishes after another one in the
// same session must not undo that one's cd and export.
func TestConcurrentBashKeepsEachOthersState(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	if err := os.Mkdir(filepath.Join(cfg.Workdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Named pipes order the two commands without polling: the slow one says it started
	// by writing to one, then waits until the fast one opens and closes the other.
	for _, name := range []string{"started", "done"} {
		if err := syscall.Mkfifo(filepath.Join(cfg.Workdir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs, _ := connect(t, cfg, nil)
	slow := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "echo > started; cat done",
		}})
		slow <- res
	}()
	started := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(filepath.Join(cfg.Workdir, "started"))
		started <- err
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("slow command never started")
	}
	res := call(t, cs, "bash", map[string]any{"command": "export FROM_FAST=yes; cd sub; echo > ../done"})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	if r := <-slow; r == nil || r.IsError {
		t.Fatalf("slow command failed: %v", r)
	}
	got := textOf(call(t, cs, "bash", map[string]any{"command": `echo "$FROM_FAST $(basename "$PWD")"`}))
	if !strings.Contains(got, "yes sub") {
		t.Errorf("after both commands: %q, want the fast command's export and cd kept", got)
	}
}

// TestGrepContentPagingTotals: a content page never states a total smaller than the
// entries that exist, and every page that states one states the same.
func TestGrepContentPagingTotals(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "ctx.txt"), []byte("a\nhit\nb\nc\nhit\nd\ne\nf\nhit\ng\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	totals := map[string]bool{}
	for off := 0; off < 10; off += 2 {
		out := textOf(call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "ctx.txt", "output_mode": "content", "-C": 1, "head_limit": 2, "offset": off}))
		if m := regexp.MustCompile(` of (\d+)`).FindStringSubmatch(out); m != nil {
			totals[m[1]] = true
			if n, _ := strconv.Atoi(m[1]); n < 9 {
				t.Errorf("offset %d: total %d, but there are 9 entries:\n%s", off, n, out)
			}
		}
	}
	if len(totals) > 1 {
		t.Errorf("pages state different totals: %v", totals)
	}
}
