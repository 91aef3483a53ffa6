package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/clients"
)

// TestResultsAreTextByDefault: without --structured-output no tool offers an output
// schema and results carry only text, so clients that prefer structuredContent show the
// model the text with its hints.
func TestResultsAreTextByDefault(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cs, _ := connect(t, cfg, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.OutputSchema != nil {
			t.Errorf("%s has an outputSchema without --structured-output", tool.Name)
		}
	}
	res := call(t, cs, "bash", map[string]any{"command": "sleep 30 >/dev/null & wait", "run_in_background": true})
	if res.StructuredContent != nil || !strings.Contains(textOf(res), "Read its output with task_output") {
		t.Fatalf("background start: structured %v, text %q", res.StructuredContent, textOf(res))
	}
	id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(textOf(res))[1]
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"task_output", map[string]any{"task_id": id}, "(no new output)"},
		{"task_list", map[string]any{}, id},
		{"task_kill", map[string]any{"task_id": id}, "status: "},
		{"bash", map[string]any{"command": "sleep 5", "timeout": 50}, "timed out: the command ran past its 50 ms timeout"},
	} {
		res := call(t, cs, c.tool, c.args)
		if res.StructuredContent != nil || !strings.Contains(textOf(res), c.want) {
			t.Errorf("%s: structured %v, text %q; want text only, with %q", c.tool, res.StructuredContent, textOf(res), c.want)
		}
	}
}

// TestStructuredHints: with --structured-output every hint the text gives is also in a
// structured field, since some clients show the model only the structured form.
func TestStructuredHints(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil) // testConfig turns structured output on
	var start struct {
		TaskID string `json:"task_id"`
		Hint   string `json:"hint"`
	}
	structured(t, call(t, cs, "bash", map[string]any{"command": "sleep 30", "run_in_background": true}), &start)
	if start.TaskID == "" || !strings.Contains(start.Hint, "task_output") || !strings.Contains(start.Hint, "task_kill") {
		t.Errorf("background start %+v: want a hint naming task_output and task_kill", start)
	}
	var out struct{ Hint string }
	structured(t, call(t, cs, "task_output", map[string]any{"task_id": start.TaskID}), &out)
	if out.Hint != "(no new output)" {
		t.Errorf("task_output hint = %q, want (no new output)", out.Hint)
	}
	var timed struct {
		TimedOut bool `json:"timed_out"`
		Hint     string
	}
	structured(t, call(t, cs, "bash", map[string]any{"command": "sleep 5", "timeout": 50}), &timed)
	if !timed.TimedOut || !strings.Contains(timed.Hint, "ran past its 50 ms timeout") {
		t.Errorf("timed-out bash %+v: want the reason in hint", timed)
	}
	res := call(t, cs, "bash", map[string]any{"command": "seq 1 20000; seq 1 20000 >&2"})
	var long struct{ Omitted []string }
	structured(t, res, &long)
	for _, cut := range long.Omitted {
		if !strings.Contains(textOf(res), "cut: "+cut+"\n") {
			t.Errorf("structured omitted %q is not what the text says:\n%.500s", cut, textOf(res))
		}
	}
	if len(long.Omitted) != 2 || !strings.HasPrefix(long.Omitted[0], "stdout: ") || !strings.HasPrefix(long.Omitted[1], "stderr: ") {
		t.Errorf("omitted = %q, want a note for each stream", long.Omitted)
	}
	call(t, cs, "task_kill", map[string]any{"task_id": start.TaskID})
}

// TestViewBudget: a default view of a 3000-line file of 150-character lines fits the
// output budget, and its note, at the start and again at the end, names the range that
// continues exactly where it stopped.
func TestViewBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		line := fmt.Sprintf("line %d ", i)
		b.WriteString(line + strings.Repeat("x", 150-len(line)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	got := textOf(call(t, cs, "view", map[string]any{"path": "big.txt"}))
	limit := clients.DefaultFileChars + clients.NotesChars // a view's budget and its notes
	if len(got) > limit {
		t.Fatalf("default view returned %d characters, over the %d budget", len(got), limit)
	}
	first, _, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(first, "[Showing lines 1-") || !strings.HasSuffix(got, first+"\n") {
		t.Fatalf("the note that starts the result (%q) is not the one that ends it:\n%s", first, got[len(got)-300:])
	}
	m := regexp.MustCompile(`Showing lines 1-(\d+)(?: of [\d,]+)? \(output budget \d+ characters\); continue with view_range \[(\d+), (\d+)\]`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no continuation note:\n%s", got[len(got)-300:])
	}
	last, _ := strconv.Atoi(m[1])
	next, _ := strconv.Atoi(m[2])
	if next != last+1 || !strings.Contains(got, fmt.Sprintf("%6d\tline %d ", last, last)) || strings.Contains(got, fmt.Sprintf("\tline %d ", next)) {
		t.Fatalf("shown up to %d, continue at %d: the note does not match what was shown", last, next)
	}
	more := textOf(call(t, cs, "view", map[string]any{"path": "big.txt", "view_range": []int{next, -1}}))
	_, rest, _ := strings.Cut(more, "\n")
	if !strings.HasPrefix(rest, fmt.Sprintf("%6d\tline %d ", next, next)) || len(more) > limit {
		t.Errorf("the continuation starts %q (%d characters)", more[:40], len(more))
	}
}

// TestSearchSkipsNodeModules: grep and find leave node_modules out by default and say so,
// and search it with no_ignore or when the path is inside it.
func TestSearchSkipsNodeModules(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	for _, p := range []string{"src/app.js", "node_modules/dep/index.js"} {
		full := filepath.Join(cfg.Workdir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs, _ := connect(t, cfg, nil)
	for _, tool := range []struct {
		name string
		args map[string]any
	}{{"grep", map[string]any{"pattern": "needle"}}, {"find", map[string]any{"pattern": "*.js"}}} {
		got := textOf(call(t, cs, tool.name, tool.args))
		if strings.Contains(got, "node_modules/dep") || !strings.Contains(got, "src/app.js") || !strings.Contains(got, "1 node_modules") {
			t.Errorf("%s default = %q, want src/app.js only and node_modules counted as not searched", tool.name, got)
		}
		tool.args["no_ignore"] = true
		if got := textOf(call(t, cs, tool.name, tool.args)); !strings.Contains(got, "node_modules/dep/index.js") {
			t.Errorf("%s with no_ignore = %q, want node_modules searched", tool.name, got)
		}
		delete(tool.args, "no_ignore")
		tool.args["path"] = "node_modules"
		if got := textOf(call(t, cs, tool.name, tool.args)); !strings.Contains(got, "node_modules/dep/index.js") {
			t.Errorf("%s with path node_modules = %q, want it searched", tool.name, got)
		}
	}
}
