package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
)

// claudeConfig is testConfig with Claude Code's tool set, results as text.
func claudeConfig(t *testing.T) config.Config {
	cfg := testConfig(t)
	cfg.Tools, cfg.StructuredOutput = "claude-code", false
	return cfg
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantText(t *testing.T, res *mcp.CallToolResult, want ...string) string {
	t.Helper()
	got := textOf(res)
	if res.IsError {
		t.Fatalf("unexpected error: %s", got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("result lacks %q:\n%s", w, got)
		}
	}
	return got
}

func wantError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	got := textOf(res)
	if !res.IsError {
		t.Fatalf("want an error, got: %s", got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("error lacks %q: %s", w, got)
		}
	}
}

func TestClaudeCodeToolSet(t *testing.T) {
	t.Parallel()
	names := func(cfg config.Config) []string {
		cs, _ := connect(t, cfg, nil)
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, tool := range res.Tools {
			n = append(n, tool.Name)
		}
		slices.Sort(n)
		return n
	}
	want := []string{"Bash", "BashOutput", "Edit", "Glob", "Grep", "KillShell", "MultiEdit", "Read", "TaskOutput", "TaskStop", "Write"}
	if got := names(claudeConfig(t)); !slices.Equal(got, want) {
		t.Errorf("--tools claude-code offers %v, want %v", got, want)
	}
	cfg := claudeConfig(t)
	cfg.NoBash = true
	if got := names(cfg); !slices.Equal(got, []string{"Edit", "Glob", "Grep", "MultiEdit", "Read", "Write"}) {
		t.Errorf("--tools claude-code --no-bash offers %v", got)
	}
}

// TestClaudeCodeReadImage: Read returns an image as image content (its text reads are
// pinned by testdata/calls/claude_read.txtar).
func TestClaudeCodeReadImage(t *testing.T) {
	t.Parallel()
	cfg := claudeConfig(t)
	// A 1x1 PNG.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	writeFile(t, filepath.Join(cfg.Workdir, "dot.png"), string(png))
	cs, _ := connect(t, cfg, nil)
	res := call(t, cs, "Read", map[string]any{"file_path": "dot.png"})
	if len(res.Content) != 1 {
		t.Fatalf("image read: %d contents", len(res.Content))
	}
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("image read returned %T, want PNG image content", res.Content[0])
	}
}

// TestClaudeCodeBigReadContinues: Read's budget note names the offset and limit that continue.
func TestClaudeCodeBigReadContinues(t *testing.T) {
	t.Parallel()
	cfg := claudeConfig(t)
	writeFile(t, filepath.Join(cfg.Workdir, "big.txt"), strings.Repeat(strings.Repeat("y", 149)+"\n", 3000))
	cs, _ := connect(t, cfg, nil)
	got := wantText(t, call(t, cs, "Read", map[string]any{"file_path": "big.txt"}))
	m := regexp.MustCompile(`continue with offset (\d+), limit (\d+)`).FindStringSubmatch(got)
	if m == nil || len(got) > 50_000 {
		t.Fatalf("%d characters; note: %q", len(got), got[max(0, len(got)-200):])
	}
	off, _ := strconv.Atoi(m[1])
	limit, _ := strconv.Atoi(m[2])
	next := wantText(t, call(t, cs, "Read", map[string]any{"file_path": "big.txt", "offset": off, "limit": limit}))
	if !strings.HasPrefix(next, fmt.Sprintf("%6s\t", m[1])) {
		t.Errorf("continuation starts %q, want line %s", next[:20], m[1])
	}
}

func TestClaudeCodeMultiEdit(t *testing.T) {
	t.Parallel()
	cfg := claudeConfig(t)
	path := filepath.Join(cfg.Workdir, "m.txt")
	writeFile(t, path, "alpha\r\nbeta\r\ngamma\r\n")
	cs, _ := connect(t, cfg, nil)
	wantText(t, call(t, cs, "Read", map[string]any{"file_path": path}))
	// The second edit fails: nothing is written.
	wantError(t, call(t, cs, "MultiEdit", map[string]any{"file_path": path, "edits": []map[string]any{
		{"old_string": "alpha", "new_string": "ALPHA"},
		{"old_string": "delta", "new_string": "DELTA"},
	}}), "edit 2 of 2", "no edit was made", path)
	if data, _ := os.ReadFile(path); string(data) != "alpha\r\nbeta\r\ngamma\r\n" {
		t.Fatalf("a failed MultiEdit changed the file: %q", data)
	}
	// Each edit sees the ones before it; CRLF endings are kept.
	wantText(t, call(t, cs, "MultiEdit", map[string]any{"file_path": path, "edits": []map[string]any{
		{"old_string": "alpha\nbeta", "new_string": "one\ntwo"},
		{"old_string": "two", "new_string": "TWO"},
	}}), "2 edits applied")
	if data, _ := os.ReadFile(path); string(data) != "one\r\nTWO\r\ngamma\r\n" {
		t.Errorf("after MultiEdit: %q", data)
	}
	wantText(t, call(t, cs, "MultiEdit", map[string]any{"file_path": "new.txt", "edits": []map[string]any{
		{"old_string": "", "new_string": "x = 1\n"},
		{"old_string": "1", "new_string": "2"},
	}}), "Created")
	if data, _ := os.ReadFile(filepath.Join(cfg.Workdir, "new.txt")); string(data) != "x = 2\n" {
		t.Errorf("MultiEdit creating a file wrote %q", data)
	}
}

func TestClaudeCodeGlobAndGrep(t *testing.T) {
	t.Parallel()
	cfg := claudeConfig(t)
	for i := range 300 {
		writeFile(t, filepath.Join(cfg.Workdir, "src", fmt.Sprintf("f%03d.go", i)), fmt.Sprintf("package p // id%d id%dx\n", i, i))
	}
	writeFile(t, filepath.Join(cfg.Workdir, "node_modules", "m", "x.go"), "package p\n")
	cs, _ := connect(t, cfg, nil)

	// The skipped note names no parameter these tools lack.
	got := wantText(t, call(t, cs, "Glob", map[string]any{"pattern": "**/f00*.go"}), "src/f000.go", "src/f009.go", "1 node_modules (a path inside one searches it)")
	if strings.Contains(got, "f010.go") || strings.Contains(got, "no_ignore") {
		t.Errorf("Glob matched too much, or names a parameter it lacks: %s", got)
	}
	got = wantText(t, call(t, cs, "Grep", map[string]any{"pattern": "package"}), "Found 300 files", "cut by head_limit")
	if n := strings.Count(got, ".go\n"); n != 250 {
		t.Errorf("Grep without head_limit listed %d files, want 250", n)
	}
	got = wantText(t, call(t, cs, "Grep", map[string]any{"pattern": "package", "head_limit": 0}))
	if n := strings.Count(got, ".go\n"); n != 300 {
		t.Errorf("Grep head_limit 0 listed %d files, want all 300", n)
	}
	got = wantText(t, call(t, cs, "Grep", map[string]any{"pattern": `id7\w*`, "path": "src/f007.go", "output_mode": "content", "-o": true}), "src/f007.go:1:id7\n", "src/f007.go:1:id7x\n")
	if strings.Contains(got, "package p") {
		t.Errorf("-o showed the whole line: %s", got)
	}
	wantText(t, call(t, cs, "Grep", map[string]any{"pattern": "ID42 ", "-i": true, "output_mode": "content", "-n": false}), "src/f042.go:package p // id42 id42x\n")
}

func TestClaudeCodeBashAndTasks(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, claudeConfig(t), nil)
	wantText(t, call(t, cs, "Bash", map[string]any{"command": "echo hi; cd /tmp", "description": "Say hi"}), "exit_code: 0", "hi\n")
	wantText(t, call(t, cs, "Bash", map[string]any{"command": "pwd"}), "/tmp\n")
	wantText(t, call(t, cs, "Bash", map[string]any{"command": "sleep 5", "timeout": 50}), "timed out")

	start := func() string {
		got := wantText(t, call(t, cs, "Bash", map[string]any{"command": "echo started; sleep 30", "run_in_background": true}), "BashOutput", "KillShell")
		if strings.Contains(got, "task_output") {
			t.Errorf("Claude Code's Bash points to Boris's tools: %s", got)
		}
		return regexp.MustCompile(`bash_id: (\S+)`).FindStringSubmatch(got)[1]
	}
	id := start()
	wantText(t, call(t, cs, "TaskOutput", map[string]any{"task_id": id, "timeout": 10000}), "started")
	wantText(t, call(t, cs, "BashOutput", map[string]any{"bash_id": id}), "(no new output)", "running")
	wantText(t, call(t, cs, "KillShell", map[string]any{"shell_id": id}), "killed")
	id = start()
	wantText(t, call(t, cs, "TaskStop", map[string]any{"shell_id": id}), "killed")
	wantError(t, call(t, cs, "TaskStop", map[string]any{}), "task_id")
	wantError(t, call(t, cs, "BashOutput", map[string]any{"bash_id": "nope"}), "NOT_FOUND")
}

// TestClaudeCodeTruncatedOutputNamesRead: the follow-up in truncated Bash output names
// Read's parameters, and they fetch exactly the omitted lines.
func TestClaudeCodeTruncatedOutputNamesRead(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, claudeConfig(t), nil)
	got := wantText(t, call(t, cs, "Bash", map[string]any{"command": "seq 1 100000"}))
	m := regexp.MustCompile(`lines (\d+)-(\d+) of \S+\. Read them with Read \(file_path (\S+), offset (\d+), limit (\d+)\) or Bash:`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no Read follow-up in the marker: %s", got[len(got)/2-300:len(got)/2+300])
	}
	off, _ := strconv.Atoi(m[4])
	limit, _ := strconv.Atoi(m[5])
	last, _ := strconv.Atoi(m[2])
	if m[1] != m[4] || off+limit-1 != last {
		t.Errorf("lines %s-%s, but offset %d limit %d", m[1], m[2], off, limit)
	}
	read := wantText(t, call(t, cs, "Read", map[string]any{"file_path": m[3], "offset": off, "limit": 1}))
	if !strings.HasPrefix(read, fmt.Sprintf("%6d\t%d\n", off, off)) {
		t.Errorf("Read of the first omitted line = %q", read[:min(len(read), 40)])
	}
}

// TestClaudeCodeStructured: with --structured-output the Claude Code tools' hints name
// Claude Code's tools in the structured form too.
func TestClaudeCodeStructured(t *testing.T) {
	t.Parallel()
	cfg := claudeConfig(t)
	cfg.StructuredOutput = true
	cs, _ := connect(t, cfg, nil)
	var start struct {
		TaskID string `json:"task_id"`
		Hint   string `json:"hint"`
	}
	structured(t, call(t, cs, "Bash", map[string]any{"command": "sleep 30", "run_in_background": true}), &start)
	if start.TaskID == "" || !strings.Contains(start.Hint, "BashOutput (bash_id") || !strings.Contains(start.Hint, "KillShell") {
		t.Errorf("structured background start %+v: want a hint naming BashOutput and KillShell", start)
	}
	var out struct{ Hint string }
	structured(t, call(t, cs, "BashOutput", map[string]any{"bash_id": start.TaskID}), &out)
	if out.Hint != "(no new output)" {
		t.Errorf("BashOutput hint = %q", out.Hint)
	}
	call(t, cs, "KillShell", map[string]any{"shell_id": start.TaskID})
}
