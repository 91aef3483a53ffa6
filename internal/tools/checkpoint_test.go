package tools_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
)

// checkpointConfig is testConfig with checkpoints kept in a fresh state directory.
func checkpointConfig(t *testing.T) (cfgDir string, cs *mcp.ClientSession) {
	t.Helper()
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cfg.Checkpoints, cfg.StateDir = true, t.TempDir()
	cfg.CheckpointMaxFileSize = 1 << 20
	cs, _ = connect(t, cfg, nil)
	return cfg.Workdir, cs
}

var checkpointLineRE = regexp.MustCompile(`(?m)^checkpoint: (cp-\d+) \((\d+) files? changed\)\n?$`)

// A background task that writes for a while is rewound with what it wrote, whether its
// writes fell between calls or in a task_output call waiting for it; changes made between
// calls are refused without force.
func TestCheckpointBackgroundTask(t *testing.T) {
	t.Parallel()
	wd, cs := checkpointConfig(t)
	if err := os.WriteFile(filepath.Join(wd, "keep.txt"), []byte("kept\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := textOf(call(t, cs, "checkpoint", map[string]any{"label": "before the task"}))
	id := regexp.MustCompile(`cp-\d+`).FindString(mark)
	if id == "" {
		t.Fatalf("checkpoint result names no id: %q", mark)
	}
	res := call(t, cs, "bash", map[string]any{"command": "for i in 1 2 3 4 5; do echo $i >> bg.txt; echo x > keep.txt; sleep 0.02; done; mkdir made", "run_in_background": true})
	task := regexp.MustCompile(`task-\d+`).FindString(textOf(res))
	call(t, cs, "task_output", map[string]any{"task_id": task, "wait_ms": 30000})
	if _, err := os.Stat(filepath.Join(wd, "made")); err != nil {
		t.Fatalf("the task has not finished: %v", err)
	}
	res = call(t, cs, "rewind", map[string]any{"to": id, "dry_run": false, "force": true})
	if res.IsError {
		t.Fatalf("rewind: %s", textOf(res))
	}
	if m := checkpointLineRE.FindStringSubmatch(textOf(res)); m == nil {
		t.Errorf("rewind result has no checkpoint line:\n%s", textOf(res))
	}
	for _, name := range []string{"bg.txt", "made"} {
		if _, err := os.Lstat(filepath.Join(wd, name)); !os.IsNotExist(err) {
			t.Errorf("%s after the rewind: %v, want it gone", name, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(wd, "keep.txt")); string(got) != "kept\r\n" {
		t.Errorf("keep.txt = %q after the rewind", got)
	}
}

// A file changed outside Boris's calls since the checkpoint is refused, named, and left
// alone; force rewinds it.
func TestCheckpointRewindRefusesOutsideChange(t *testing.T) {
	t.Parallel()
	wd, cs := checkpointConfig(t)
	res := call(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "one\n"})
	m := checkpointLineRE.FindStringSubmatch(textOf(res))
	if m == nil || m[2] != "1" {
		t.Fatalf("create_file result:\n%s\nwant a checkpoint line for 1 file", textOf(res))
	}
	if err := os.WriteFile(filepath.Join(wd, "a.txt"), []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, "rewind", map[string]any{"to": m[1], "dry_run": false})
	if !res.IsError || !strings.Contains(textOf(res), "a.txt") {
		t.Fatalf("rewind over an outside change: %v %s; want a refusal naming a.txt", res.IsError, textOf(res))
	}
	if got, _ := os.ReadFile(filepath.Join(wd, "a.txt")); string(got) != "edited by hand\n" {
		t.Fatalf("a refused rewind wrote a.txt: %q", got)
	}
	res = call(t, cs, "rewind", map[string]any{"to": m[1], "dry_run": false, "force": true})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	if _, err := os.Stat(filepath.Join(wd, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt after a forced rewind to before it was made: %v", err)
	}
}

// A client that says which turn a call belongs to (Codex, in _meta) can rewind a turn. The
// _meta is what Codex 0.171.0 sends, whose turn object has other strings under "turn" keys.
func TestCheckpointRewindByTurn(t *testing.T) {
	t.Parallel()
	wd, cs := checkpointConfig(t)
	callIn := func(turn, name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args,
			Meta: mcp.Meta{"callId": "call_1", "threadId": "th", "progressToken": 1,
				"x-codex-turn-metadata": map[string]any{"turn_id": turn, "thread_id": "th", "turn_trigger": "exec",
					"turn_started_at_unix_ms": 1795860690653, "codex_version": "0.171.0", "sandbox_mode": "read-only"}}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", name, err, textOf(res))
		}
		return textOf(res)
	}
	callIn("turn-1", "bash", map[string]any{"command": "echo 1 > one.txt"})
	callIn("turn-2", "bash", map[string]any{"command": "echo 2 > two.txt && echo changed > one.txt"})
	callIn("turn-2", "create_file", map[string]any{"path": "three.txt", "content": "3"})
	list := textOf(call(t, cs, "checkpoint_list", map[string]any{}))
	if !strings.Contains(list, "[turn turn-2]") {
		t.Errorf("checkpoint_list does not show turns:\n%s", list)
	}
	res := call(t, cs, "rewind", map[string]any{"to": "turn:turn-2", "dry_run": false})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	got, _ := os.ReadFile(filepath.Join(wd, "one.txt"))
	_, err2 := os.Stat(filepath.Join(wd, "two.txt"))
	_, err3 := os.Stat(filepath.Join(wd, "three.txt"))
	if string(got) != "1\n" || !os.IsNotExist(err2) || !os.IsNotExist(err3) {
		t.Errorf("after rewinding turn-2: one.txt = %q, two.txt: %v, three.txt: %v; want turn-1's state", got, err2, err3)
	}
}

// A second Boris on the same workspace and state directory runs without checkpoints: its
// commands work, its results have no checkpoint line, and its checkpoint tools say why.
func TestCheckpointsHeldByAnotherBoris(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cfg.Checkpoints, cfg.StateDir = true, t.TempDir()
	connect(t, cfg, nil)
	second, _ := connect(t, cfg, nil)
	res := call(t, second, "bash", map[string]any{"command": "echo x > a.txt"})
	if res.IsError || checkpointLineRE.MatchString(textOf(res)) {
		t.Errorf("bash on the second Boris: %v %q; want success without a checkpoint line", res.IsError, textOf(res))
	}
	res = call(t, second, "checkpoint_list", map[string]any{})
	if !res.IsError || !strings.Contains(textOf(res), "checkpoints are off") {
		t.Errorf("checkpoint_list on the second Boris: %v %q; want an error saying checkpoints are off", res.IsError, textOf(res))
	}
}

// Each of the command mutations is undone through the tools, byte for byte (modes,
// symlinks, byte order marks, line endings), and the rewind itself is undone by rewinding
// to its rescue checkpoint; .git is never written by a rewind.
func TestCommandMutationsRewindByCalls(t *testing.T) {
	t.Parallel()
	for _, m := range testutil.Mutations {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			wd, cs := checkpointConfig(t)
			setup := exec.Command("sh", "-c", testutil.MutationSetup)
			setup.Dir = wd
			if out, err := setup.CombinedOutput(); err != nil {
				t.Fatalf("setup: %v\n%s", err, out)
			}
			before := testutil.Tree(t, wd)
			res := call(t, cs, "bash", map[string]any{"command": m.Script})
			cp := checkpointLineRE.FindStringSubmatch(textOf(res))
			if res.IsError || cp == nil {
				t.Fatalf("bash %q:\n%s\nwant a checkpoint line", m.Script, textOf(res))
			}
			after := testutil.Tree(t, wd)
			git := gitState(t, wd)
			dry := call(t, cs, "rewind", map[string]any{"to": cp[1]})
			if dry.IsError || !maps.Equal(after, testutil.Tree(t, wd)) {
				t.Fatalf("dry run (isError %v) changed the tree or failed:\n%s", dry.IsError, textOf(dry))
			}
			res = call(t, cs, "rewind", map[string]any{"to": cp[1], "dry_run": false})
			rescue := regexp.MustCompile(`rewind \{"to": "(cp-\d+)"`).FindStringSubmatch(textOf(res))
			if res.IsError || rescue == nil {
				t.Fatalf("rewind to %s:\n%s", cp[1], textOf(res))
			}
			if got := testutil.Tree(t, wd); !maps.Equal(before, got) {
				t.Fatalf("after rewind to %s:\n got %v\nwant %v", cp[1], got, before)
			}
			if g := gitState(t, wd); g != git {
				t.Errorf("the rewind wrote .git: %s, was %s", g, git)
			}
			res = call(t, cs, "rewind", map[string]any{"to": rescue[1], "dry_run": false})
			if res.IsError {
				t.Fatalf("rewind to the rescue checkpoint %s:\n%s", rescue[1], textOf(res))
			}
			if got := testutil.Tree(t, wd); !maps.Equal(after, got) {
				t.Fatalf("after undoing the rewind:\n got %v\nwant %v", got, after)
			}
		})
	}
}

// gitState sums every file under wd/.git with its modification time, or says there is none.
func gitState(t *testing.T, wd string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(filepath.Join(wd, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "no .git"
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
