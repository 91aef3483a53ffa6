package server

import (
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

// faceCall is one tool call and how it reads to people: in the live view (the summary at
// its start; outcome, result line and diff at its end) and in the audit log.
type faceCall struct {
	tool string
	args map[string]any
	view string // "summary [stop] → outcome — result line", as the live view shows the call
	diff string // the live view's diff, "" for none
	log  string // "args → outcome", as the audit log shows the call
}

// TestCallsReadInEveryFace: each face's tools show their calls in the live view and the
// audit log by their own argument names: Claude Code's Bash shows its command, Read its
// file_path, Edit its diff.
func TestCallsReadInEveryFace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(*config.Config)
		calls []faceCall
	}{
		{"boris", func(*config.Config) {}, []faceCall{
			{tool: "bash", args: map[string]any{"command": "echo hi", "timeout": 5000},
				view: "echo hi [stop] → exit 0", log: `command="echo hi" timeout=5000 → ok`},
			{tool: "bash", args: map[string]any{"command": "sleep 100", "run_in_background": true, "description": "wait"},
				view: "sleep 100  (in the background) → started task-1", log: `command="sleep 100" description="(4 chars)" run_in_background=true → ok`},
			{tool: "task_kill", args: map[string]any{"task_id": "task-1"},
				view: "task-1 → killed by SIGTERM (killed on request)", log: `task_id=task-1 → ok`},
			{tool: "task_list", args: map[string]any{},
				view: " → ok", log: ` → ok`},
			{tool: "create_file", args: map[string]any{"path": "a.txt", "content": "one\ntwo\n"},
				view: "a.txt → ok — Created $WORKDIR/a.txt: wrote 8 bytes (mode 0644).", diff: "--- a.txt\n+++ a.txt\n@@ (new content) @@\n+one\n+two\n",
				log: `content="(8 chars)" path=a.txt → ok`},
			{tool: "view", args: map[string]any{"path": "a.txt", "view_range": []any{1, 1}},
				view: "a.txt → ok", log: `path=a.txt view_range=[1,1] → ok`},
			{tool: "str_replace", args: map[string]any{"path": "a.txt", "old_str": "two", "new_str": "2"},
				view: "a.txt → ok — Replaced 1 occurrence in $WORKDIR/a.txt (now line 2). The edited region reads:", diff: "--- a.txt\n+++ a.txt\n@@\n-two\n+2\n",
				log: `new_str="(1 chars)" old_str="(3 chars)" path=a.txt → ok`},
			{tool: "grep", args: map[string]any{"pattern": "one", "path": ".", "glob": "*.txt", "-i": true},
				view: "one  in .  glob *.txt → ok — Found 1 file (newest first):", log: `-i=(…) glob=*.txt path=. pattern=one → ok`},
			{tool: "find", args: map[string]any{"pattern": "*.txt", "type": "file"},
				view: `*.txt → ok — Found 1 file matching "*.txt" (newest first):`, log: `pattern=*.txt type=file → ok`},
			{tool: "view", args: map[string]any{"path": "missing.txt"},
				view: "missing.txt → error NOT_FOUND — NOT_FOUND: missing.txt does not exist (relative paths are taken against the working directory, $WORKDIR)", log: `path=missing.txt → error NOT_FOUND`},
		}},
		{"editor", func(c *config.Config) { c.AnthropicCompat = true }, []faceCall{
			{tool: "str_replace_editor", args: map[string]any{"command": "create", "path": "a.txt", "file_text": "one\ntwo\n"},
				view: "create a.txt → ok — Created $WORKDIR/a.txt: wrote 8 bytes (mode 0644).", diff: "--- a.txt\n+++ a.txt\n@@ (new content) @@\n+one\n+two\n",
				log: `command=create file_text="(8 chars)" path=a.txt → ok`},
			{tool: "str_replace_editor", args: map[string]any{"command": "view", "path": "a.txt"},
				view: "view a.txt → ok", log: `command=view path=a.txt → ok`},
			{tool: "str_replace_editor", args: map[string]any{"command": "str_replace", "path": "a.txt", "old_str": "two", "new_str": "2"},
				view: "str_replace a.txt → ok — Replaced 1 occurrence in $WORKDIR/a.txt (now line 2). The edited region reads:", diff: "--- a.txt\n+++ a.txt\n@@\n-two\n+2\n",
				log: `command=str_replace new_str="(1 chars)" old_str="(3 chars)" path=a.txt → ok`},
			{tool: "str_replace_editor", args: map[string]any{"command": "insert", "path": "a.txt", "insert_line": 1, "new_str": "1.5"},
				view: "insert a.txt → ok — Inserted 1 line after line 1 of $WORKDIR/a.txt (now line 2). The edited region reads:", diff: "--- a.txt\n+++ a.txt\n@@ after line 1 @@\n+1.5\n",
				log: `command=insert insert_line=1 new_str="(3 chars)" path=a.txt → ok`},
			{tool: "bash", args: map[string]any{"command": "cat a.txt"},
				view: "cat a.txt [stop] → exit 0", log: `command="cat a.txt" → ok`},
		}},
		{"claude-code", func(c *config.Config) { c.Tools = "claude-code" }, []faceCall{
			{tool: "Bash", args: map[string]any{"command": "echo hi", "timeout": 5000, "description": "say hi"},
				view: "echo hi [stop] → exit 0", log: `command="echo hi" description="(6 chars)" timeout=5000 → ok`},
			{tool: "Bash", args: map[string]any{"command": "sleep 100", "run_in_background": true},
				view: "sleep 100  (in the background) → started task-1", log: `command="sleep 100" run_in_background=true → ok`},
			{tool: "KillShell", args: map[string]any{"shell_id": "task-1"},
				view: "task-1 → killed by SIGTERM (killed on request)", log: `shell_id=task-1 → ok`},
			{tool: "BashOutput", args: map[string]any{"bash_id": "task-1"},
				view: "task-1 → killed by SIGTERM (killed on request)", log: `bash_id=task-1 → ok`},
			{tool: "TaskOutput", args: map[string]any{"task_id": "task-1", "block": false},
				view: "task-1 → killed by SIGTERM (killed on request)", log: `block=false task_id=task-1 → ok`},
			{tool: "TaskStop", args: map[string]any{"shell_id": "task-1"},
				view: "task-1 → killed by SIGTERM (killed on request)", log: `shell_id=task-1 → ok`},
			{tool: "Write", args: map[string]any{"file_path": "a.txt", "content": "one\ntwo\n"},
				view: "a.txt → ok — Created $WORKDIR/a.txt: wrote 8 bytes (mode 0644).", diff: "--- a.txt\n+++ a.txt\n@@ (new content) @@\n+one\n+two\n",
				log: `content="(8 chars)" file_path=a.txt → ok`},
			{tool: "Read", args: map[string]any{"file_path": "a.txt", "offset": 1, "limit": 1},
				view: "a.txt → ok", log: `file_path=a.txt limit=1 offset=1 → ok`},
			{tool: "Edit", args: map[string]any{"file_path": "a.txt", "old_string": "two", "new_string": "2"},
				view: "a.txt → ok — Replaced 1 occurrence in $WORKDIR/a.txt (now line 2). The edited region reads:", diff: "--- a.txt\n+++ a.txt\n@@\n-two\n+2\n",
				log: `file_path=a.txt new_string="(1 chars)" old_string="(3 chars)" → ok`},
			{tool: "MultiEdit", args: map[string]any{"file_path": "a.txt", "edits": []any{
				map[string]any{"old_string": "one", "new_string": "1"}, map[string]any{"old_string": "2", "new_string": "two"}}},
				view: "a.txt → ok — Edited $WORKDIR/a.txt: 2 edits applied.", diff: "--- a.txt\n+++ a.txt\n@@\n-one\n+1\n@@\n-2\n+two\n",
				log: `edits=(…) file_path=a.txt → ok`},
			{tool: "Glob", args: map[string]any{"pattern": "*.txt", "path": "."},
				view: `*.txt  in . → ok — Found 1 file matching "*.txt" (newest first):`, log: `path=. pattern=*.txt → ok`},
			{tool: "Grep", args: map[string]any{"pattern": "two", "glob": "*.txt", "output_mode": "count"},
				view: "two  glob *.txt → ok — Found 1 matching line in 1 file:", log: `glob=*.txt output_mode=count pattern=two → ok`},
			{tool: "Edit", args: map[string]any{"file_path": "b.txt", "old_string": "", "new_string": "new\n"},
				view: "b.txt → ok — Created $WORKDIR/b.txt: wrote 4 bytes (mode 0644).", diff: "--- b.txt\n+++ b.txt\n@@ (new content) @@\n+new\n",
				log: `file_path=b.txt new_string="(4 chars)" old_string="(0 chars)" → ok`},
		}},
		{"codex", func(c *config.Config) { c.Tools = "codex" }, []faceCall{
			{tool: "exec_command", args: map[string]any{"cmd": "printf 'one\\ntwo\\n' > a.txt", "yield_time_ms": 5000},
				view: `printf 'one\ntwo\n' > a.txt → exited 0`, log: `cmd="printf 'one\\ntwo\\n' > a.txt" yield_time_ms=5000 → ok`},
			{tool: "apply_patch", args: map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** Add File: b.txt\n+new\n*** End Patch"},
				view: "M a.txt, A b.txt → ok — Success. Updated the following files:",
				diff: "--- a.txt\n+++ a.txt\n@@\n one\n-two\n+2\n--- b.txt\n+++ b.txt\n@@ (new content) @@\n+new\n",
				log:  `input="(93 chars)" → ok`},
			{tool: "exec_command", args: map[string]any{"cmd": "sleep 100", "yield_time_ms": 250, "workdir": "."},
				view: "sleep 100  (in .) → running", log: `cmd="sleep 100" workdir=. yield_time_ms=250 → ok`},
			{tool: "write_stdin", args: map[string]any{"session_id": 2, "chars": "\u0003"},
				view: "session 2  (typed 1 chars) → killed by SIGTERM (killed on request)", log: `chars="(1 chars)" session_id=2 → ok`},
			{tool: "view_image", args: map[string]any{"path": "a.txt"},
				view: "a.txt → error UNSUPPORTED_FILE — UNSUPPORTED_FILE: $WORKDIR/a.txt is not an image (PNG, JPEG, GIF or WebP): read a text file with exec_command, for example sed -n '1,200p' $WORKDIR/a.txt",
				log:  `path=a.txt → error UNSUPPORTED_FILE`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig(t)
			cfg.WatchAddr = "127.0.0.1:0" // over STDIO the live view's stream is kept only for --watch
			tc.setup(&cfg)
			views, logs := readCalls(t, cfg, tc.calls)
			for i, c := range tc.calls {
				want := []string{c.view, c.diff, c.log}
				got := []string{views[i].line, views[i].diff, logs[i]}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %v: view, diff, log (-want +got):\n%s", c.tool, c.args, diff)
				}
			}
		})
	}
}

type viewedCall struct{ line, diff string }

// auditLine picks the arguments and the outcome out of a tool call's line in the audit log,
// as the text handler writes it.
var auditLine = regexp.MustCompile(`msg="tool call" session=\S* tool=\S+((?: args\.\S+?=(?:"(?:[^"\\]|\\.)*"|\S*))*) duration_ms=\d+ outcome=(.*)$`)

// readCalls makes calls on a server with cfg and returns how each read in the live view
// and in the audit log, with the working directory shown as $WORKDIR.
func readCalls(t *testing.T, cfg config.Config, calls []faceCall) ([]viewedCall, []string) {
	t.Helper()
	var logs lockedBuffer
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(&logs, nil)), []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	sub := srv.Watch().Subscribe(0)
	defer sub.Close()
	cs := testutil.Connect(t, srv.MCP(), nil)
	for _, c := range calls {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatal(err)
		}
	}
	// A call's events are published before the call returns.
	byCall := map[uint64]*viewedCall{}
	var order []uint64
	for {
		evs, wait := sub.Next(100)
		if wait != nil {
			break
		}
		for _, e := range evs {
			switch e.Kind {
			case watch.KindCall:
				byCall[e.Call] = &viewedCall{line: e.Args}
				if e.Stop != "" {
					byCall[e.Call].line += " [stop]"
				}
				order = append(order, e.Call)
			case watch.KindCallEnd:
				v := byCall[e.Call]
				v.line += " → " + e.Outcome
				if e.Summary != "" || e.Error {
					v.line += " — " + e.Summary
				}
				v.diff = e.Diff
			}
		}
	}
	var views []viewedCall
	for _, id := range order {
		v := *byCall[id]
		v.line = strings.ReplaceAll(v.line, cfg.Workdir, "$WORKDIR")
		views = append(views, v)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if m := auditLine.FindStringSubmatch(line); m != nil {
			outcome, err := strconv.Unquote(m[2])
			if err != nil {
				outcome = m[2]
			}
			lines = append(lines, strings.TrimSpace(strings.ReplaceAll(m[1], " args.", " "))+" → "+outcome)
		}
	}
	if len(views) != len(calls) || len(lines) != len(calls) {
		t.Fatalf("%d calls in the live view and %d in the audit log, want %d:\n%s", len(views), len(lines), len(calls), logs.String())
	}
	return views, lines
}
