package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/tools"
)

// TestTaskOutputUntil: task_output with until returns when a line matching the pattern is
// printed (the task still running), with the line and its context, not before it and not
// at the end of the wait.
func TestTaskOutputUntil(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	_, start := callFor[tools.BashResult](t, cs, "bash", map[string]any{"run_in_background": true,
		"command": "for i in $(seq 1 50); do echo line $i; sleep 0.1; done; echo READY; sleep 600"})
	res, out := callFor[tools.TaskResult](t, cs, "task_output", map[string]any{"task_id": start.TaskID, "until": "READY", "wait_ms": 30000})
	text := textOf(res)
	if !out.Running {
		t.Errorf("task_output returned once the task ended, not at the match: %q", text)
	}
	for _, want := range []string{"matched stdout line 51", "  line 49\n  line 50\n> READY\n", "line 1\n", "line 50\nREADY\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("task_output until = %q, lacks %q", text, want)
		}
	}
	call(t, cs, "task_kill", map[string]any{"task_id": start.TaskID})

	// No match: it returns when the task ends, and says so; a bad pattern is refused.
	_, start = callFor[tools.BashResult](t, cs, "bash", map[string]any{"run_in_background": true, "command": "echo one; echo two >&2"})
	res = call(t, cs, "task_output", map[string]any{"task_id": start.TaskID, "until": "never"})
	if text := textOf(res); !strings.Contains(text, "no match; the task ended") || !strings.Contains(text, "two") {
		t.Errorf("task_output until with no match = %q", text)
	}
	res = call(t, cs, "task_output", map[string]any{"task_id": start.TaskID, "until": "("})
	if !res.IsError || !strings.Contains(textOf(res), "not a regular expression") {
		t.Errorf("a bad pattern gave %q", textOf(res))
	}
}

// TestTaskOutputUntilStderr: a match on stderr names that stream.
func TestTaskOutputUntilStderr(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	_, start := callFor[tools.BashResult](t, cs, "bash", map[string]any{"run_in_background": true,
		"command": "echo out; echo 'Error: boom' >&2; sleep 600"})
	res, _ := callFor[tools.TaskResult](t, cs, "task_output", map[string]any{"task_id": start.TaskID, "until": "(?i)error|listening"})
	if text := textOf(res); !strings.Contains(text, "matched stderr line 1:\n> Error: boom\n") {
		t.Errorf("task_output until = %q", text)
	}
	call(t, cs, "task_kill", map[string]any{"task_id": start.TaskID})
}

// TestCallDeadline: with --call-deadline, a command still running shortly before the
// deadline goes on as a background task and the call returns its id with the output so
// far; task_output later shows the rest. A command that ends sooner is answered as usual.
func TestCallDeadline(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.CallDeadline = 3 * time.Second
	cs, _ := connect(t, cfg, nil)
	release := filepath.Join(cfg.Workdir, "release")
	began := time.Now()
	// The command waits (at most 10 s, so that a failing test ends) for the test to
	// release it.
	res, out := callFor[tools.BashResult](t, cs, "bash", map[string]any{"command": "echo begun; for i in $(seq 200); do [ -s " + release + " ] && break; sleep 0.05; done; echo done $(cat " + release + ")"})
	took := time.Since(began)
	text := textOf(res)
	if out.TaskID == "" || out.ExitCode != nil || !strings.Contains(text, "task_id: "+out.TaskID) || !strings.Contains(text, "output so far:\nstdout:\nbegun\n") {
		t.Fatalf("a command past the deadline returned %q, want its task id and output so far", text)
	}
	// The command runs until the test releases it, after the call: the call returned
	// without waiting for it. When is not checked (it is 2 s, then the time to answer,
	// which a loaded machine stretches); it is logged.
	t.Logf("the call returned after %v, with a deadline of %v", took, cfg.CallDeadline)
	if err := os.WriteFile(release, []byte("now\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, "task_output", map[string]any{"task_id": out.TaskID, "until": "done"})
	if text := textOf(res); !strings.Contains(text, "done now") || strings.Contains(text, "begun") {
		t.Errorf("task_output after the deadline = %q, want only what came after", text)
	}
	if text := textOf(call(t, cs, "bash", map[string]any{"command": "echo quick"})); !strings.Contains(text, "exit_code: 0") || strings.Contains(text, "task_id") {
		t.Errorf("a short command under a deadline = %q", text)
	}
}

// TestCallDeadlineCancel: a client that cancels a call before the deadline still stops its
// command.
func TestCallDeadlineCancel(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.CallDeadline = time.Minute
	cs, _ := connect(t, cfg, nil)
	ready := filepath.Join(cfg.Workdir, "ready")
	testutil.Fifo(t, ready)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > " + ready + "; sleep 600"}})
		returned <- err
	}()
	pid, err := strconv.Atoi(strings.TrimSpace(testutil.ReadFifo(t, ready)))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-returned
	if !testutil.Exited(pid, time.Now().Add(testutil.Within)) {
		t.Errorf("the command (pid %d) still runs after its call was cancelled", pid)
	}
}
