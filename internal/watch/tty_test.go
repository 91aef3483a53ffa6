package watch_test

import (
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/watch"
)

// TestTTYTaskInputOutputAndStop: the live view shows what is typed at a terminal task,
// what the program answers, and can stop the task.
func TestTTYTaskInputOutputAndStop(t *testing.T) {
	cs, srv := connect(t, testConfig(t))
	h := srv.Watch()
	f := follow(t, h)
	started := <-callAsync(t, cs, "bash", map[string]any{"command": `while read -r l; do echo "got:$l"; done`, "tty": true, "run_in_background": true})
	if !strings.Contains(textOf(started), "waiting for input") {
		t.Fatalf("terminal task not waiting for input:\n%s", textOf(started))
	}
	task := f.until("task", func(e watch.Event) bool { return e.Kind == watch.KindTask })
	if task.Task != "task-1" || task.Stop == "" {
		t.Fatalf("task event = %+v", task)
	}

	answer := callAsync(t, cs, "task_input", map[string]any{"task_id": "task-1", "input": "hello\n"})
	in := f.until("task_input call", func(e watch.Event) bool { return e.Kind == watch.KindCall && e.Tool == "task_input" })
	if in.Args != `task-1  "hello\n"` {
		t.Errorf("task_input shows as %q", in.Args)
	}
	var seen strings.Builder
	f.until("the answer", func(e watch.Event) bool {
		if e.Kind == watch.KindOutput && e.Task == "task-1" {
			seen.WriteString(e.Text)
		}
		return strings.Contains(seen.String(), "got:hello")
	})
	if res := <-answer; !strings.Contains(textOf(res), "got:hello") {
		t.Errorf("task_input result:\n%s", textOf(res))
	}

	if !h.Stop(task.Stop) {
		t.Fatal("Stop found no terminal task")
	}
	end := f.until("task end", func(e watch.Event) bool { return e.Kind == watch.KindTaskEnd })
	if end.Task != "task-1" || !strings.Contains(end.Outcome, "stopped by the user") {
		t.Errorf("task end = %+v", end)
	}
	res := <-callAsync(t, cs, "task_input", map[string]any{"task_id": "task-1", "input": "again\n"})
	if !res.IsError || !strings.Contains(textOf(res), "ended") {
		t.Errorf("task_input after stop:\n%s", textOf(res))
	}
}
