package tasks

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/mjkoo/boris/internal/shell"
)

// StartForeground runs c for a caller that waits for it in the foreground, as a task that
// is not listed: the caller may hand it over to the background with [Manager.Keep] when
// it runs long. Until then it is the caller's: it is stopped when timeout passes (with
// stopCause), when the caller calls [Task.Stop] or when the session closes, and what it
// leaves running is the caller's to adopt. c.Name is left as the caller set it.
func (m *Manager) StartForeground(c shell.Command, timeout time.Duration, stopCause error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	t := &Task{Command: c.Script, changed: make(chan struct{}), done: make(chan struct{})}
	name := c.Name
	c = m.command(c, t)
	c.Name = name
	p, err := shell.Start(c)
	if err != nil {
		return nil, err
	}
	t.proc, t.Started, t.foreground = p, time.Now(), true
	ctx, cancel := context.WithCancelCause(m.ctx)
	t.cancel = cancel
	if timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, timeout, stopCause)
		t.cancel = func(err error) { cancel(err); stop() }
	}
	m.wg.Go(func() { t.waitForeground(ctx) })
	return t, nil
}

// waitForeground is [Task.wait] for a task started by [Manager.StartForeground]: while it
// is still the caller's when it ends, what it left running stays running, for the caller
// to adopt, as a foreground command's would.
func (t *Task) waitForeground(ctx context.Context) {
	p := t.proc
	res := p.Wait(ctx)
	t.mu.Lock()
	t.ending = true
	kept := !t.foreground
	t.mu.Unlock()
	if kept && res.Lingering {
		p.Stop() // a task owns its whole group: nothing outlives it
	}
	t.mu.Lock()
	t.result, t.ended = res, time.Now()
	t.mu.Unlock()
	close(t.done)
	t.signal()
	t.cancel(nil)
}

// Keep lists t, started by [Manager.StartForeground], as a background task with an id of
// its own, and reports whether it did. It does not when t has ended meanwhile (its result
// is then the caller's) or when MaxRunning tasks are running already. The session's
// background task lifetime counts from t's start.
func (m *Manager) Keep(t *Task) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, ErrClosed
	}
	if err := m.roomForOne(); err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ending || !t.foreground {
		return false, nil
	}
	t.foreground = false
	m.next++
	t.ID = "task-" + strconv.Itoa(m.next)
	m.tasks[t.ID] = t
	if m.limits.Lifetime > 0 {
		cancel := t.cancel
		timer := time.AfterFunc(m.limits.Lifetime-time.Since(t.Started), func() { cancel(ErrLifetime) })
		t.cancel = func(err error) { cancel(err); timer.Stop() }
	}
	return true, nil
}

// Stop asks t to stop, giving cause as the reason, without waiting for it to end; see
// [Manager.KillCause] for a kill that waits. Stopping a task that has ended does nothing.
func (t *Task) Stop(cause error) {
	t.mu.Lock()
	cancel := t.cancel
	t.mu.Unlock()
	cancel(cause)
}

// Output returns t's whole output so far within budget characters for both streams
// together (see [shell.Split]), as a foreground command's result shows it, without moving
// the marks [Manager.Output] reads from.
func (t *Task) Output(budget int, hint shell.Hint) (stdout, stderr shell.Excerpt) {
	outBudget, errBudget := shell.Split(budget, t.proc.Stdout.End().Chars, t.proc.Stderr.End().Chars)
	shell.ShareLines(t.proc.Stdout, t.proc.Stderr, t.proc.Stdout.End().Lines, t.proc.Stderr.End().Lines)
	return t.proc.Stdout.Text(outBudget, hint), t.proc.Stderr.Text(errBudget, hint)
}

// Process returns the command's process, for the caller of [Manager.StartForeground] to
// adopt or release once t has ended in the foreground.
func (t *Task) Process() *shell.Process { return t.proc }

// ErrCancelled is the cause a task stopped by its client (MCP tasks/cancel) records.
var ErrCancelled = errors.New("cancelled by the client")
