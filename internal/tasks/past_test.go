package tasks

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPastBounded: a Manager restored from an earlier Boris's tasks keeps at most MaxPast
// of them, the newest, answers for those with a PastError (not ErrUnknown), numbers its
// own tasks after them, and keeps what it records within its bounds.
func TestPastBounded(t *testing.T) {
	m := newManager(t, Limits{MaxRunning: 2})
	var past []Past
	for i := 1; i <= MaxPast+5; i++ {
		past = append(past, Past{ID: fmt.Sprintf("task-%d", i), Command: "echo", Status: "exited 0", Ended: time.Now(), Stdout: strings.Repeat("x", 10)})
	}
	m.Restore(past)
	if _, err := m.get("task-1"); !errors.Is(err, ErrUnknown) {
		t.Errorf("the oldest past task, beyond MaxPast: %v, want ErrUnknown", err)
	}
	last := fmt.Sprintf("task-%d", MaxPast+5)
	var pe *PastError
	if _, err := m.get(last); !errors.As(err, &pe) || errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "exited 0") {
		t.Errorf("a past task: %v, want a PastError saying how it ended", err)
	}
	if m.PastTask(last+".random") == nil {
		t.Error("PastTask does not take an MCP task id")
	}
	task, err := m.Start(cmd(t, "printf '%05000d' 0; printf 'é%.0s' $(seq 3000) >&2"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("task-%d", MaxPast+6); task.ID != want {
		t.Errorf("new task id %s, want %s", task.ID, want)
	}
	<-task.Done()
	rec := m.Record()
	if len(rec) != MaxPast {
		t.Errorf("Record kept %d tasks, want %d", len(rec), MaxPast)
	}
	got := rec[len(rec)-1]
	if got.ID != task.ID || got.Status != "exited 0" || len(got.Stdout) > pastTail || len(got.Stderr) > pastTail || !strings.HasPrefix(got.Stderr, "é") {
		t.Errorf("the recorded task = %s %q, stdout %d bytes, stderr %d bytes starting %q", got.ID, got.Status, len(got.Stdout), len(got.Stderr), got.Stderr[:4])
	}
}
