package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/term"
)

// DefaultMaxTTY bounds a session's running terminal tasks when [Limits.MaxTTY] is 0.
const DefaultMaxTTY = 8

// Defaults for [Until] fields left zero.
const (
	// DefaultQuiet is how long output must have stopped when the kernel's view is only a
	// guess (the program polls), missing, or the program is full-screen.
	DefaultQuiet = time.Second
	escSettle    = 150 * time.Millisecond
	minStep      = 20 * time.Microsecond
	maxStep      = 50 * time.Millisecond
)

// Errors of terminal tasks a caller may branch on.
var (
	ErrTTYLimit = errors.New("too many terminal tasks running")
	ErrNoTTY    = errors.New("the task has no terminal")
	ErrEnded    = errors.New("the task has ended")
	// ErrInputBlocked: input typed earlier was not all taken by the program.
	ErrInputBlocked = term.ErrInputBlocked
)

// Until says when waiting on a terminal task ends: at Wait at the latest.
type Until struct {
	Wait time.Duration
	// Settle is how long output must have stopped, at least, once the kernel says the
	// program reads its terminal. None is needed for what it printed before it went to
	// sleep ([shell.Process.FlushTTY] takes that in).
	Settle time.Duration
	Quiet  time.Duration // 0: DefaultQuiet
}

func (u Until) withDefaults() Until {
	if u.Quiet <= 0 {
		u.Quiet = DefaultQuiet
	}
	return u
}

// Why says why waiting on a terminal task ended.
type Why int

// Reasons a wait ends.
const (
	WhyDeadline   Why = iota // Until.Wait passed
	WhyExited                // the command ended
	WhyInput                 // the program waits for input
	WhyFullScreen            // a full-screen program waits for keys, or has gone quiet
	WhyQuiet                 // no output for Until.Quiet, and the kernel's view is not to be had
	WhyCancelled             // the caller's context ended
)

// Exchange is the outcome of typing at a terminal task, or of waiting on one.
type Exchange struct {
	Why      Why
	Snapshot // the task's state and its new output, as plain text
	Screen   term.Snapshot
	View     term.View // what the kernel said of the foreground program last
	// Foreground names the program in the foreground when the wait ran out ("sleep").
	Foreground string
}

// TTY reports whether the task runs in a terminal.
func (t *Task) TTY() bool { return t.screen != nil }

// startTTY prepares c's terminal for task t, before c starts.
func (m *Manager) ttyCommand(c shell.Command, t *Task) shell.Command {
	t.screen = term.NewScreen(int(c.TTY.Rows), int(c.TTY.Cols))
	seen := c.OnOutput
	c.OnOutput = func(s shell.Stream, p []byte) {
		t.screen.Write(p)
		if seen != nil {
			seen(s, p)
		}
	}
	return c
}

// roomForTTY refuses a terminal task when MaxTTY of them run. m.mu is held.
func (m *Manager) roomForTTY() error {
	running := 0
	for _, t := range m.tasks {
		if t.TTY() && !t.finished() {
			running++
		}
	}
	if limit := m.maxTTY(); running >= limit {
		return fmt.Errorf("%w: %d of %d", ErrTTYLimit, running, limit)
	}
	return nil
}

func (m *Manager) maxTTY() int {
	if m.limits.MaxTTY > 0 {
		return m.limits.MaxTTY
	}
	return DefaultMaxTTY
}

// ttyTask returns task id if it has a terminal and still runs.
func (m *Manager) ttyTask(id string) (*Task, error) {
	t, err := m.get(id)
	if err != nil {
		return nil, err
	}
	if !t.TTY() {
		return nil, fmt.Errorf("%w: %s was started without one", ErrNoTTY, t.ID)
	}
	if t.finished() {
		return t, fmt.Errorf("%w: %s %s", ErrEnded, t.ID, t.Status())
	}
	return t, nil
}

// Send types text and then keys at the terminal of task id, then waits until the
// program waits for input again, goes quiet, ends, or until says to stop; it returns
// the output written meanwhile (and before, if not yet read) within budget characters.
func (m *Manager) Send(ctx context.Context, id string, text []byte, keys []term.Key, until Until, budget int, hint shell.Hint) (Exchange, error) {
	t, err := m.ttyTask(id)
	if err != nil {
		return Exchange{}, err
	}
	before := t.probe()
	if err := t.screen.Type(text, keys); err != nil {
		return Exchange{}, fmt.Errorf("%w: some input typed earlier at %s was dropped", err, t.ID)
	}
	before.At = time.Now()
	if endsInEsc(text, keys) {
		// A lone Esc may start a key's sequence: the program waits its escape timeout
		// (vim's ttimeoutlen, 100 ms by default) before it acts on it.
		until.Settle = max(until.Settle, escSettle)
	}
	why, view := t.settle(ctx, before, until)
	return m.exchange(t, why, view, budget, hint), nil
}

// Settle waits, as [Manager.Send] does after typing, on task id, and returns the
// output not yet read.
func (m *Manager) Settle(ctx context.Context, id string, until Until, budget int, hint shell.Hint) (Exchange, error) {
	why, view, err := m.Await(ctx, id, until)
	if err != nil {
		return Exchange{}, err
	}
	t, err := m.get(id)
	if err != nil {
		return Exchange{}, err
	}
	return m.exchange(t, why, view, budget, hint), nil
}

// Await waits, as [Manager.Send] does after typing, on task id, and reads nothing.
func (m *Manager) Await(ctx context.Context, id string, until Until) (Why, term.View, error) {
	t, err := m.get(id)
	if err != nil {
		return 0, 0, err
	}
	if !t.TTY() {
		return 0, 0, fmt.Errorf("%w: %s was started without one", ErrNoTTY, t.ID)
	}
	why, view := t.settle(ctx, term.Probe{}, until)
	return why, view, nil
}

// Forget drops task id, which has ended, from the list, as if it had never been a
// task: a foreground command that ran to its end within its call.
func (m *Manager) Forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tasks[id]; ok && t.finished() {
		delete(m.tasks, id)
		m.release(t)
	}
}

// Screen returns what task id's terminal shows.
func (m *Manager) Screen(id string) (term.Snapshot, error) {
	t, err := m.get(id)
	if err != nil {
		return term.Snapshot{}, err
	}
	if !t.TTY() {
		return term.Snapshot{}, fmt.Errorf("%w: %s was started without one", ErrNoTTY, t.ID)
	}
	return t.screen.Snapshot(), nil
}

func (m *Manager) exchange(t *Task, why Why, view term.View, budget int, hint shell.Hint) Exchange {
	x := Exchange{Why: why, View: view}
	if why == WhyDeadline {
		x.Foreground = term.Foreground(t.proc.TTY())
	}
	if t.screen.Alt() {
		x.Screen = t.screen.Snapshot() // else the caller asks for it if it wants it
	}
	x.Snapshot = m.read(t, budget, hint)
	return x
}

// endsInEsc reports whether what is typed ends with a lone Esc.
func endsInEsc(text []byte, keys []term.Key) bool {
	if len(keys) > 0 {
		return keys[len(keys)-1].IsEsc()
	}
	return len(text) > 0 && text[len(text)-1] == 0x1b
}

// probe looks at the task's foreground processes.
func (t *Task) probe() term.Probe {
	return term.Look(t.proc.TTY(), t.proc.TTYName(), t.proc.Members)
}

// settle waits until the program in t's terminal waits for input, goes quiet, or ends,
// or until u.Wait passes or ctx ends. before is a probe taken before the input was typed,
// if any: a program counts as waiting again only once it has run since.
func (t *Task) settle(ctx context.Context, before term.Probe, u Until) (Why, term.View) {
	u = u.withDefaults()
	deadline := time.NewTimer(u.Wait)
	defer deadline.Stop()
	step := minStep
	view := term.Unknown
	for {
		t.mu.Lock()
		ch, last := t.changed, t.lastOut
		t.mu.Unlock()
		if t.finished() {
			return WhyExited, view
		}
		quiet := time.Since(last)
		if !before.At.IsZero() {
			quiet = min(quiet, time.Since(before.At))
		}
		wait := step
		if quiet < u.Settle {
			wait = u.Settle - quiet
		} else {
			var why Why
			var ok bool
			why, view, ok = t.settled(before, quiet, u)
			if ok {
				return why, view
			}
			step = min(step*2, maxStep)
		}
		tick := time.NewTimer(wait)
		select {
		case <-ch:
			step = minStep
		case <-t.done:
		case <-tick.C:
		case <-deadline.C:
			tick.Stop()
			return WhyDeadline, view
		case <-ctx.Done():
			tick.Stop()
			return WhyCancelled, view
		}
		tick.Stop()
	}
}

// settled says whether waiting on t is over, output having stopped for quiet.
func (t *Task) settled(before term.Probe, quiet time.Duration, u Until) (Why, term.View, bool) {
	p := t.probe()
	if p.Reading == term.Reading && t.proc.FlushTTY() {
		return 0, p.Reading, false // it printed more before it went to sleep: look again
	}
	ran := p.RanSince(before)
	alt := t.screen.Alt()
	switch {
	case p.Reading == term.Reading && ran, p.Reading == term.Polling && ran && quiet >= u.Quiet:
		if alt {
			return WhyFullScreen, p.Reading, true
		}
		return WhyInput, p.Reading, true
	case alt && quiet >= u.Quiet:
		return WhyFullScreen, p.Reading, true
	case p.Reading == term.Unknown && quiet >= u.Quiet:
		return WhyQuiet, p.Reading, true
	}
	return 0, p.Reading, false
}
