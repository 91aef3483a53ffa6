package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/clients"
	"github.com/mjkoo/boris/internal/config"
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

// TestTaskOutputUntilBudget: the result of task_output with until stays within the
// output budget, the matching lines and a long pattern included, and quotes the pattern
// cut short; a pattern that does not compile is quoted as short.
func TestTaskOutputUntilBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.OutputBudget = config.MinOutputBudget
	cfg.StructuredOutput = false // the model reads the text
	cs, _ := connect(t, cfg, nil)
	started := textOf(call(t, cs, "bash", map[string]any{"run_in_background": true,
		"command": "yes \"$(printf '%01200d' 0)\" | head -n 100; echo READY $(printf '%01200d' 0); sleep 600"}))
	id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)[1]
	pattern := "READY|" + strings.Repeat("q", 5000)
	text := textOf(call(t, cs, "task_output", map[string]any{"task_id": id, "until": pattern}))
	call(t, cs, "task_kill", map[string]any{"task_id": id})
	if !strings.Contains(text, "matched stdout line 101:\n") {
		t.Fatalf("task_output until = %.300q, want the match on line 101", text)
	}
	// The budget is the content's; the notes around it take what they need, within the
	// room every client's budget leaves them.
	if n := utf8.RuneCountInString(text); n > cfg.OutputBudget+clients.NotesChars {
		t.Errorf("task_output until returned %d characters, over the %d budget and the notes' %d", n, cfg.OutputBudget, clients.NotesChars)
	}
	if want := `until "READY|qqq`; !strings.Contains(text, want) || strings.Contains(text, strings.Repeat("q", 100)) {
		t.Errorf("task_output until quotes the pattern as %.200q, want it cut short", text)
	}
	res := call(t, cs, "task_output", map[string]any{"task_id": id, "until": "(" + strings.Repeat("q", 5000)})
	if got := textOf(res); !res.IsError || strings.Contains(got, strings.Repeat("q", 100)) {
		t.Errorf("a bad long pattern gave %.200q, want an error quoting it short", got)
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
