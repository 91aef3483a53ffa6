package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/testutil"
)

type taskOut struct {
	TaskID   string `json:"task_id"`
	Status   string `json:"status"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	File     string `json:"stdout_file"`
}

func startTask(t *testing.T, cs *mcp.ClientSession, command string) string {
	t.Helper()
	res, out := bash(t, cs, map[string]any{"command": command, "run_in_background": true})
	if res.IsError || out.TaskID == "" || !strings.Contains(textOf(res), "task_id: "+out.TaskID) {
		t.Fatalf("starting %q: %s", command, textOf(res))
	}
	return out.TaskID
}

func taskOutput(t *testing.T, cs *mcp.ClientSession, id string, waitMS int) (*mcp.CallToolResult, taskOut) {
	t.Helper()
	return callFor[taskOut](t, cs, "task_output", map[string]any{"task_id": id, "wait_ms": waitMS})
}

func TestTaskOutputSinceLastRead(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	// The task waits for files the test creates, so each read sees a known step.
	id := startTask(t, cs, "echo one; while [ ! -e go2 ]; do sleep 0.01; done; echo two; echo err >&2; while [ ! -e go3 ]; do sleep 0.01; done; exit 4")
	_, o1 := taskOutput(t, cs, id, 5000)
	if o1.Stdout != "one\n" || !o1.Running || o1.Status != "running" {
		t.Fatalf("first read = %+v", o1)
	}
	_, o2 := taskOutput(t, cs, id, 0)
	if o2.Stdout != "" || !o2.Running {
		t.Errorf("second read repeats output: %+v", o2)
	}
	touch(t, cfg.Workdir, "go2")
	_, o3 := taskOutput(t, cs, id, 5000)
	for o3.Stdout == "" || o3.Stderr == "" { // stdout and stderr may arrive in two reads
		_, more := taskOutput(t, cs, id, 5000)
		o3.Stdout += more.Stdout
		o3.Stderr += more.Stderr
	}
	if o3.Stdout != "two\n" || o3.Stderr != "err\n" {
		t.Errorf("third read = %+v", o3)
	}
	touch(t, cfg.Workdir, "go3")
	var last taskOut
	for last.Running || last.Status == "" {
		_, last = taskOutput(t, cs, id, 5000)
	}
	if last.ExitCode == nil || *last.ExitCode != 4 || last.Status != "exited 4" {
		t.Errorf("final read = %+v", last)
	}
	res := call(t, cs, "task_list", map[string]any{})
	if !strings.Contains(textOf(res), id+"  exited 4") {
		t.Errorf("task_list = %s", textOf(res))
	}
}

func TestTaskKillAndUnknown(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	id := startTask(t, cs, "echo $$; sleep 100")
	_, o := taskOutput(t, cs, id, 5000)
	pgid := o.Stdout
	res := call(t, cs, "task_kill", map[string]any{"task_id": id})
	var k taskOut
	structured(t, res, &k)
	if k.Running || k.Signal != "SIGTERM" || !strings.Contains(k.Status, "killed by SIGTERM (killed on request)") {
		t.Errorf("task_kill = %s", textOf(res))
	}
	if k.Stdout != "" {
		t.Errorf("task_kill repeats output already read: %q", k.Stdout)
	}
	_ = pgid
	for _, tool := range []string{"task_output", "task_kill"} {
		res := call(t, cs, tool, map[string]any{"task_id": "task-999"})
		if !res.IsError || !strings.HasPrefix(textOf(res), "NOT_FOUND") || !strings.Contains(textOf(res), id) {
			t.Errorf("%s(unknown) = %s", tool, textOf(res))
		}
	}
}

func TestTaskLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxBackgroundTasks = 2
	cs, _ := connect(t, cfg, nil)
	startTask(t, cs, "sleep 100")
	second := startTask(t, cs, "sleep 100")
	res := call(t, cs, "bash", map[string]any{"command": "sleep 100", "run_in_background": true})
	if !res.IsError || !strings.HasPrefix(textOf(res), "LIMIT_REACHED") || !strings.Contains(textOf(res), "task_kill") {
		t.Fatalf("third task: %s", textOf(res))
	}
	call(t, cs, "task_kill", map[string]any{"task_id": second})
	startTask(t, cs, "true")
}

func TestTaskTruncatedOutput(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	id := startTask(t, cs, "seq 1 200000")
	var out taskOut
	last := ""
	for out.Running || out.Status == "" {
		_, out = taskOutput(t, cs, id, 5000)
		if n := utf8.RuneCountInString(out.Stdout); n > shell.DefaultBudget {
			t.Fatalf("a read has %d characters, over the budget", n)
		}
		if out.Stdout != "" {
			last = out.Stdout
		}
	}
	// However the reads fell, the last one with output ends with the last line.
	if !strings.HasSuffix(last, "200000\n") {
		t.Errorf("last read lacks the tail: %q", last[max(0, len(last)-50):])
	}
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTaskSpillCapped: a task's saved output is bounded on disk, keeping its head and its
// tail and saying what was dropped.
func TestTaskSpillCapped(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxSpillFile = 1 << 20
	cs, _ := connect(t, cfg, nil)
	id := startTask(t, cs, "echo START; head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100; echo END")
	var out taskOut
	file := ""
	for out.Running || out.Status == "" {
		_, out = taskOutput(t, cs, id, 5000)
		if out.File != "" {
			file = out.File
		}
	}
	if file == "" {
		t.Fatalf("no spill file named: %+v", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) > cfg.MaxSpillFile+4096 || !strings.HasPrefix(string(b), "START\n") || !strings.HasSuffix(string(b), "aEND\n") || !strings.Contains(string(b), "were not saved") {
		t.Errorf("spill file of %d bytes (limit %d), want its head, a note and its tail: %.100q ... %q", len(b), cfg.MaxSpillFile, b, b[max(0, len(b)-100):])
	}
}

// TestTaskUnreadOutputNotPruned: pruning old saved output spares a task's output that has
// not been read yet.
func TestTaskUnreadOutputNotPruned(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxSpillTotal = 3 << 20
	cs, _ := connect(t, cfg, nil)
	done := filepath.Join(cfg.Workdir, "done")
	testutil.Fifo(t, done)
	id := startTask(t, cs, "seq 1 300000; echo > done")
	testutil.ReadFifo(t, done)
	_, out := bash(t, cs, map[string]any{"command": "seq 1 400000"})
	if out.StdoutFile == "" {
		t.Fatalf("foreground output not saved: %+v", out)
	}
	task := filepath.Join(filepath.Dir(out.StdoutFile), id+".stdout")
	if _, err := os.Stat(task); err != nil {
		t.Errorf("the unread output of %s was removed: %v", id, err)
	}
	_, to := taskOutput(t, cs, id, 0)
	if to.File != task || !strings.HasPrefix(to.Stdout, "1\n2\n") {
		t.Errorf("task_output = %+v", to)
	}
}

// TestTaskOutputWaitSendsProgress: task_output waiting on a silent task sends progress
// notifications saying it still waits, so that a client whose wait restarts with each
// keeps waiting.
func TestTaskOutputWaitSendsProgress(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.ProgressQuiet = 20 * time.Millisecond
	// The task waits on the fifo, silent, until a notification has come.
	cs, notes := connectReleasing(t, cfg, filepath.Join(cfg.Workdir, "release"))
	id := startTask(t, cs, "read -r word < release; echo got $word")
	params := &mcp.CallToolParams{Name: "task_output", Arguments: map[string]any{"task_id": id, "wait_ms": testutil.Within.Milliseconds()}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(textOf(res), "got go") {
		t.Errorf("task_output = %q, want the output that followed the notification", textOf(res))
	}
	if msgs := notes(); len(msgs) == 0 || !strings.Contains(msgs[0], "still waiting after") {
		t.Errorf("notifications = %q, want one saying the call still waits", msgs)
	}
}
