package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateAcrossRestart: a Boris started again on the same state directory, as a sandbox
// resumed after a suspend, gives each stateless workspace back its cwd and environment,
// and answers for the tasks of the one before: the result of one that finished, and that
// one still running was ended by the shutdown (for task_output and tasks/get alike),
// never "no such task"; new tasks do not take the old ids.
func TestStateAcrossRestart(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	cfg.StateDir, cfg.StateDirGiven = t.TempDir(), true
	if err := os.Mkdir(filepath.Join(cfg.Workdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	srv1, ts1 := start(t, cfg)
	c := &httpRPC{url: ts1.URL, workspace: "w1"}
	other := &httpRPC{url: ts1.URL, workspace: "w2"}
	toolText(t, c, "bash", map[string]any{"command": "cd sub && export KEPT=yes-kept && unset HOME"})
	toolText(t, other, "bash", map[string]any{"command": "export KEPT=other"})
	bashCall(t, c, false, map[string]any{"command": "echo finished-before", "run_in_background": true})
	finished := taskIDIn(t, toolText(t, c, "task_list", map[string]any{}), 0)
	awaitEnd(t, c, finished)
	running, _ := bashCall(t, c, true, map[string]any{"command": "echo begun; sleep 600", "run_in_background": true})
	local, _, _ := strings.Cut(running.TaskID, ".")
	toolText(t, c, "task_output", map[string]any{"task_id": local, "until": "begun", "wait_ms": 30000})
	srv1.Close() // as SIGTERM does
	ts1.Close()
	srv1.Close() // a second Close keeps what the first saved

	_, ts2 := start(t, cfg)
	c = &httpRPC{url: ts2.URL, workspace: "w1"}
	other = &httpRPC{url: ts2.URL, workspace: "w2"}
	if got := toolText(t, c, "bash", map[string]any{"command": `echo "cwd=$PWD kept=$KEPT home=${HOME-unset}"`}); !strings.Contains(got, "cwd="+filepath.Join(cfg.Workdir, "sub")+" kept=yes-kept home=unset") {
		t.Errorf("workspace after the restart: %q, want its cwd and environment back", got)
	}
	if got := toolText(t, other, "bash", map[string]any{"command": `echo "kept=$KEPT"`}); !strings.Contains(got, "kept=other") {
		t.Errorf("the other workspace after the restart: %q", got)
	}
	if got := toolText(t, c, "task_output", map[string]any{"task_id": finished}); !strings.Contains(got, "exited 0") || !strings.Contains(got, "finished-before") || strings.Contains(got, "no such task") {
		t.Errorf("task_output of a task that finished before the restart = %q", got)
	}
	got := toolText(t, c, "task_output", map[string]any{"task_id": local})
	if !strings.Contains(got, "was still running when Boris shut down") || !strings.Contains(got, "stdout:\nbegun") {
		t.Errorf("task_output of a task the shutdown ended = %q", got)
	}
	_, rpcErr := taskCall(t, c, "tasks/get", running.TaskID, true)
	if rpcErr == nil || !strings.Contains(rpcErr.Message, "shut down") {
		t.Errorf("tasks/get of a task the shutdown ended = %v, want it said", rpcErr)
	}
	if got := toolText(t, c, "bash", map[string]any{"command": "true", "run_in_background": true}); strings.Contains(got, finished+"\n") || strings.Contains(got, local+"\n") {
		t.Errorf("a new task took an old id: %q", got)
	}
}

// taskIDIn returns the i-th task id that text names.
func taskIDIn(t *testing.T, text string, i int) string {
	t.Helper()
	var ids []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\n' || r == ':' || r == ',' }) {
		if strings.HasPrefix(f, "task-") {
			ids = append(ids, f)
		}
	}
	if i >= len(ids) {
		t.Fatalf("no task id %d in %q", i, text)
	}
	return ids[i]
}

// TestStateOnlyWhenGiven: with the state directory defaulted rather than given, nothing
// of the workspaces is kept, so servers and tests sharing the default do not take each
// other's.
func TestStateOnlyWhenGiven(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	cfg.StateDir = t.TempDir()
	srv, ts := start(t, cfg)
	toolText(t, &httpRPC{url: ts.URL, workspace: "w"}, "bash", map[string]any{"command": "export X=1"})
	srv.Close()
	// Checkpoints have a store of their own there, keyed by the workspace's path.
	if entries, err := os.ReadDir(filepath.Join(cfg.StateDir, "workspaces")); !os.IsNotExist(err) {
		t.Errorf("the defaulted state directory holds workspaces %v (%v), want none", entries, err)
	}
}
