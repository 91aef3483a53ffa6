package tools_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
)

// testConfig is a Config as Parse would make it, working in a fresh temporary directory.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	wd := t.TempDir()
	return config.Config{
		Transport:             "stdio",
		Workdir:               wd,
		Timeout:               120 * time.Second, // the default, so goldens and the README show it
		MaxFileSize:           10_000_000,
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
func connect(t *testing.T, cfg config.Config, opts *mcp.ClientOptions) (*mcp.ClientSession, *server.Server) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(&cfg, log, os.Environ())
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		srv.Close()
	})
	return cs, srv
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

func TestMalformedArgumentsAreToolErrors(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	tests := []struct {
		tool string
		args any
	}{
		{"bash", map[string]any{"command": "echo hi", "bogus": 1}},
		{"view", map[string]any{"path": 5}},
		{"view", map[string]any{}},
		{"grep", map[string]any{"pattern": []int{1}}},
	}
	for _, tt := range tests {
		res := call(t, cs, tt.tool, tt.args)
		if !res.IsError || !strings.HasPrefix(textOf(res), "INVALID_ARGUMENT: ") || res.Meta["code"] != "INVALID_ARGUMENT" {
			t.Errorf("%s(%v) = %q (isError %v, meta %v), want an INVALID_ARGUMENT tool error", tt.tool, tt.args, textOf(res), res.IsError, res.Meta)
		}
	}
}

// TestSpilledOutputViewableWhenConfined: output past the budget is saved in the session's
// spill directory, and view can read it back even though --allow-dir excludes that directory.
func TestSpilledOutputViewableWhenConfined(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cs, _ := connect(t, cfg, nil)
	res := call(t, cs, "bash", map[string]any{"command": "seq 1 20000"})
	out := textOf(res)
	m := regexp.MustCompile(`(/\S+)`).FindAllString(out, -1)
	var spill string
	for _, p := range m {
		p = strings.TrimRight(p, ".,;:)'\"")
		if strings.HasPrefix(p, os.TempDir()) && !strings.HasPrefix(p, cfg.Workdir) {
			spill = p
			break
		}
	}
	if spill == "" {
		t.Fatalf("truncated output names no spill file:\n%s", out[len(out)/2-500:len(out)/2+500])
	}
	view := call(t, cs, "view", map[string]any{"path": spill, "view_range": []int{19999, 20000}})
	if view.IsError || !strings.Contains(textOf(view), "20000") {
		t.Fatalf("view %s = %q, want the last lines of the full output", spill, textOf(view))
	}
	if res := call(t, cs, "view", map[string]any{"path": filepath.Join(filepath.Dir(spill), "..")}); !res.IsError {
		t.Errorf("view of the spill directory's parent succeeded under --allow-dir: %q", textOf(res))
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
	cs, _ := connect(t, cfg, nil)
	slow := make(chan *mcp.CallToolResult, 1)
	go func() {
		// Waits until the other command has run, so it surely ends last.
		res, _ := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "touch started; while [ ! -f done ]; do sleep 0.01; done",
		}})
		slow <- res
	}()
	started := filepath.Join(cfg.Workdir, "started")
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("slow command never started")
		default:
			runtime.Gosched()
		}
	}
	res := call(t, cs, "bash", map[string]any{"command": "export FROM_FAST=yes; cd sub; touch ../done"})
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

func TestBashInvalidUTF8Noted(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	for cmd, want := range map[string]bool{`printf 'a\xffb\n'`: true, `printf 'caf\xc3\xa9\n'`: false} {
		got := textOf(call(t, cs, "bash", map[string]any{"command": cmd}))
		if noted := strings.Contains(got, "not valid UTF-8"); noted != want {
			t.Errorf("bash %q = %q, want a note about invalid UTF-8: %v", cmd, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("bash %q: result is not valid UTF-8", cmd)
		}
	}
}

// TestSearchThroughSymlinkedDir: results under a symlinked search root are named the way
// the caller reached them.
func TestSearchThroughSymlinkedDir(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	if err := os.MkdirAll(filepath.Join(cfg.Workdir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "real", "r.txt"), []byte("match\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(cfg.Workdir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	for tool, args := range map[string]map[string]any{
		"grep": {"pattern": "match", "path": "linkdir"},
		"find": {"pattern": "*.txt", "path": "linkdir"},
	} {
		got := textOf(call(t, cs, tool, args))
		if !strings.Contains(got, "linkdir/r.txt") {
			t.Errorf("%s(%v) = %q, want linkdir/r.txt", tool, args, got)
		}
	}
}
