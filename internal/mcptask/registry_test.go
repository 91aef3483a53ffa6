package mcptask

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type owner struct{ ctx context.Context }

func (o owner) Context() context.Context { return o.ctx }

// work is a Work that ends when end is closed and counts the times it is asked to stop.
type work struct {
	end     chan struct{}
	cancels atomic.Int32
}

func (w *work) Done() <-chan struct{}       { return w.end }
func (w *work) Result() *mcp.CallToolResult { return &mcp.CallToolResult{} }
func (w *work) Status() string              { return "running" }
func (w *work) Cancel()                     { w.cancels.Add(1) }

// TestCancelOnce: tasks/cancel, however often it comes, asks the work to stop once; the
// task then ends cancelled, without a result.
func TestCancelOnce(t *testing.T) {
	r := NewRegistry(Limits{})
	o := owner{t.Context()}
	w := &work{end: make(chan struct{})}
	created, err := r.Add(o, "task-1", w)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := r.Cancel(o, created.TaskID); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.cancels.Load(); n != 1 {
		t.Errorf("the work was asked to stop %d times, want once", n)
	}
	close(w.end)
	got, err := r.Get(o, created.TaskID)
	if err != nil || got.Status != Cancelled || got.Result != nil {
		t.Errorf("tasks/get after cancel = %+v, %v; want cancelled without a result", got, err)
	}
}

// TestBoundPerOwner: an owner with MaxTasks tasks running gets no more; one of its ended
// tasks makes room by expiring, and another owner is not affected.
func TestBoundPerOwner(t *testing.T) {
	r := NewRegistry(Limits{MaxTasks: 2})
	a, b := owner{t.Context()}, owner{context.WithoutCancel(t.Context())}
	first, second := &work{end: make(chan struct{})}, &work{end: make(chan struct{})}
	one, _ := r.Add(a, "task-1", first)
	if _, err := r.Add(a, "task-2", second); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(a, "task-3", &work{end: make(chan struct{})}); err == nil {
		t.Error("a third running task was added past MaxTasks 2")
	}
	if _, err := r.Add(b, "task-1", &work{end: make(chan struct{})}); err != nil {
		t.Errorf("another owner was refused: %v", err)
	}
	close(first.end)
	if _, err := r.Get(a, one.TaskID); err != nil { // records that it ended
		t.Fatal(err)
	}
	if _, err := r.Add(a, "task-3", &work{end: make(chan struct{})}); err != nil {
		t.Errorf("no room made by the ended task: %v", err)
	}
	if _, err := r.Get(a, one.TaskID); err == nil {
		t.Error("the ended task that made room is still there")
	}
	if _, err := r.Get(b, one.TaskID); err == nil {
		t.Error("another owner sees the task")
	}
}
