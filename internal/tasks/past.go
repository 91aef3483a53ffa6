package tasks

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mjkoo/boris/internal/shell"
)

// Past is what is kept of a task after the Boris that ran it ended: for a Boris started
// again on the same state directory (a sandbox resumed after a suspend) to answer for it.
type Past struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	Status  string    `json:"status"`           // how it ended: "exited 0", or Interrupted
	Ended   time.Time `json:"ended"`            // when it ended, or when Boris stopped
	Stdout  string    `json:"stdout,omitempty"` // the end of its output, within pastTail
	Stderr  string    `json:"stderr,omitempty"`
}

// Interrupted is the status of a task that was still running when Boris shut down.
const Interrupted = "was still running when Boris shut down (a sandbox suspend or restart), which ended it"

// Bounds of what is kept of one task.
const (
	pastCommand = 512
	pastTail    = 2048
	// MaxPast bounds the tasks kept for one session.
	MaxPast = 32
)

// PastError is the answer for a task of an earlier Boris: not unknown, but gone with it.
type PastError struct{ Past Past }

func (e *PastError) Error() string {
	p := e.Past
	var b strings.Builder
	fmt.Fprintf(&b, "task %s ran before Boris restarted and cannot be read or stopped now: it %s (at %s; command: %s)",
		p.ID, p.Status, p.Ended.UTC().Format(time.RFC3339), p.Command)
	if p.Stdout != "" {
		fmt.Fprintf(&b, "\nthe end of its stdout:\n%s", p.Stdout)
	}
	if p.Stderr != "" {
		fmt.Fprintf(&b, "\nthe end of its stderr:\n%s", p.Stderr)
	}
	return b.String()
}

// Record returns what is kept of the session's tasks, oldest first, at most MaxPast:
// those of earlier Borises, then the current ones, with Interrupted for those still
// running.
func (m *Manager) Record() []Past {
	m.mu.Lock()
	out := make([]Past, 0, len(m.past)+len(m.tasks))
	for _, p := range m.past {
		if _, ok := m.tasks[p.ID]; !ok {
			out = append(out, p)
		}
	}
	live := make([]*Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		if t.proc != nil {
			live = append(live, t)
		}
	}
	m.mu.Unlock()
	now := time.Now()
	for _, t := range live {
		p := Past{ID: t.ID, Command: cut(t.Command, pastCommand), Status: Interrupted, Ended: now}
		if res, done := t.Result(); done {
			p.Status = describe(res)
			t.mu.Lock()
			if !t.ended.IsZero() {
				p.Ended = t.ended
			}
			t.mu.Unlock()
		}
		stdout, stderr := t.Output(4*pastTail, func(shell.Omitted) string { return "task_output" })
		p.Stdout, p.Stderr = tail(stdout.Text, pastTail), tail(stderr.Text, pastTail)
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Past) int { return cmp.Compare(idNumber(a.ID), idNumber(b.ID)) })
	if len(out) > MaxPast {
		out = out[len(out)-MaxPast:]
	}
	return out
}

// Restore makes the Manager answer for the tasks of an earlier Boris, and number its own
// after them.
func (m *Manager) Restore(past []Past) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(past) > MaxPast {
		past = past[len(past)-MaxPast:]
	}
	m.past = make(map[string]Past, len(past))
	for _, p := range past {
		m.past[p.ID] = p
		m.next = max(m.next, idNumber(p.ID))
	}
}

// pastLocked returns the error for id when it is a task of an earlier Boris. m.mu must be
// held.
func (m *Manager) pastLocked(id string) error {
	if p, ok := m.past[id]; ok {
		return &PastError{Past: p}
	}
	return nil
}

// idNumber is the number in a task id (task-3), or 0.
func idNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "task-"))
	return n
}

// cut returns s within n bytes, whole UTF-8 sequences only.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// tail returns the end of s within n bytes, from a line start where there is one.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// PastTask returns the error that says task id (its local part) ran under an earlier
// Boris, or nil when it did not.
func (m *Manager) PastTask(id string) error {
	id, _, _ = strings.Cut(strings.TrimSpace(id), ".")
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[id]; ok {
		return nil
	}
	return m.pastLocked(id)
}
