package tasks

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/term"
)

// Limits bound what one session's background tasks may hold.
type Limits struct {
	MaxRunning int           // most tasks running at once
	Lifetime   time.Duration // 0: a task runs until it exits, is killed or its session ends
	// Keep is how long a finished task stays listed; 0 means DefaultKeep.
	Keep time.Duration
	// Grace is SIGTERM to SIGKILL when a task is stopped; 0 means [shell.DefaultGrace].
	Grace time.Duration
	// Drain is how long a task's output is read after its shell exits while processes it
	// left behind hold the pipes; 0 means [shell.DefaultDrain].
	Drain time.Duration
	// MaxTTY is the most terminal tasks running at once ([shell.Command.TTY]); they do not
	// count towards MaxRunning. 0 means [DefaultMaxTTY].
	MaxTTY int
}

// Defaults for [Limits] fields left zero.
const (
	DefaultKeep = 30 * time.Minute
	// maxKept bounds finished tasks: past it, those whose output was read in full go first.
	maxKept = 64
	// maxAdopted bounds the leftovers of foreground commands tracked for killing.
	maxAdopted = 256
)

// Errors a caller may branch on.
var (
	ErrUnknown = errors.New("no such task")
	ErrLimit   = errors.New("too many background tasks running")
	ErrClosed  = errors.New("session is closed")
	// Causes recorded as a task's [shell.Result.Stopped].
	ErrKilled   = errors.New("killed on request")
	ErrLifetime = errors.New("ran past the background task time limit")
	ErrSession  = errors.New("session closed")
	// ErrStoppedByUser: the person watching Boris's live view stopped the task.
	ErrStoppedByUser = errors.New("stopped by the user")
)

// Manager holds one session's background tasks.
type Manager struct {
	limits Limits
	tag    string // prefix of the marks of this session's commands
	marks  atomic.Int64
	born   time.Time       // when the session began: its strays started since ([shell.StopStrays])
	ctx    context.Context // done when the Manager closes
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	fg     sync.WaitGroup // foreground commands still running, see Foreground

	mu      sync.Mutex
	tasks   map[string]*Task
	next    int
	adopted []*shell.Process
	closed  bool
	past    map[string]Past // tasks of an earlier Boris on the same state (see Restore)
}

// NewManager returns an empty Manager with the given limits.
func NewManager(limits Limits) *Manager {
	if limits.MaxRunning <= 0 {
		limits.MaxRunning = 1
	}
	if limits.Keep <= 0 {
		limits.Keep = DefaultKeep
	}
	if limits.Grace <= 0 {
		limits.Grace = shell.DefaultGrace
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Manager{limits: limits, tag: rand.Text(), born: time.Now(), ctx: ctx, cancel: cancel, tasks: make(map[string]*Task)}
}

// NewMark returns a fresh [shell.Command.Mark] for one of this session's commands, so
// that what they leave behind outside their process group ends with the session too.
func (m *Manager) NewMark() string {
	return m.tag + "/" + strconv.FormatInt(m.marks.Add(1), 10)
}

// Limits returns the limits the Manager enforces.
func (m *Manager) Limits() Limits { return m.limits }

// Task is one background command.
type Task struct {
	ID      string
	Command string
	Started time.Time

	proc   *shell.Process
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the command has ended and its result is set
	result shell.Result
	screen *term.Screen // the terminal's screen, for a task run in one; else nil
	prober *term.Prober // looks at the terminal's foreground, for a task run in one

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever output arrives
	lastOut  time.Time     // when output last arrived, or the task started
	outMark  shell.Mark
	errMark  shell.Mark
	ended    time.Time
	readDone bool // output was read to the end after the task finished
	// foreground: started by StartForeground and not yet kept; ending: its command has
	// ended and its result is being recorded (see detach.go).
	foreground, ending bool
}

// Start runs c in the background as a new task. c.Name is set by Start; c.OnOutput, if
// set, sees the output too.
func (m *Manager) Start(c shell.Command) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	room := m.roomForOne
	if c.TTY != nil {
		room = m.roomForTTY
	}
	if err := room(); err != nil {
		return nil, err
	}
	m.next++
	t := &Task{ID: "task-" + strconv.Itoa(m.next), Command: c.Script, changed: make(chan struct{}), done: make(chan struct{}), lastOut: time.Now()}
	c = m.command(c, t)
	if c.TTY != nil {
		c = m.ttyCommand(c, t)
	}
	p, err := shell.Start(c)
	if err != nil {
		if t.screen != nil {
			t.screen.Close()
		}
		return nil, err
	}
	if t.screen != nil {
		t.screen.Attach(p.TTY())
		t.prober = term.NewProber(p.TTY(), p.TTYName(), p.Members)
	}
	t.proc, t.Started = p, time.Now()
	ctx := t.bound(m.ctx, m.limits.Lifetime)
	m.tasks[t.ID] = t
	m.wg.Go(func() { t.wait(ctx) })
	return t, nil
}

// roomForOne prunes finished tasks and refuses a new one when MaxRunning are running.
// m.mu is held.
func (m *Manager) roomForOne() error {
	m.prune()
	running := 0
	for _, t := range m.tasks {
		if !t.finished() && !t.TTY() {
			running++
		}
	}
	if running >= m.limits.MaxRunning {
		return fmt.Errorf("%w: %d of %d", ErrLimit, running, m.limits.MaxRunning)
	}
	return nil
}

// command returns c set up to run as task t: named after it, with the manager's mark and
// limits where c has none, and its output signalling readers that wait.
func (m *Manager) command(c shell.Command, t *Task) shell.Command {
	c.Name = t.ID
	if c.Mark == "" {
		c.Mark = m.NewMark()
	}
	seen := c.OnOutput
	c.OnOutput = func(s shell.Stream, p []byte) {
		t.signal()
		if seen != nil {
			seen(s, p)
		}
	}
	if c.Grace <= 0 {
		c.Grace = m.limits.Grace
	}
	if c.Drain <= 0 {
		c.Drain = m.limits.Drain
	}
	return c
}

// bound sets t.cancel and returns the context t's command runs under: parent's, ended by
// t.cancel and, with a positive lifetime, once lifetime has passed ([ErrLifetime]).
func (t *Task) bound(parent context.Context, lifetime time.Duration) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	t.cancel = cancel
	if lifetime > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, lifetime, ErrLifetime)
		t.cancel = func(err error) { cancel(err); stop() }
	}
	return ctx
}

// wait waits for t's command to end under ctx, stops what it left running, and records
// how it ended.
func (t *Task) wait(ctx context.Context) {
	p := t.proc
	res := p.Wait(ctx)
	if res.Lingering {
		p.Stop() // a task owns its whole group: nothing outlives it
	}
	if t.screen != nil {
		t.screen.Close() // all the output is in: the screen keeps showing its end
	}
	t.mu.Lock()
	t.result, t.ended = res, time.Now()
	t.mu.Unlock()
	close(t.done)
	if t.prober != nil {
		t.prober.Close()
	}
	t.signal()
	t.cancel(nil)
}

func (t *Task) signal() {
	t.mu.Lock()
	close(t.changed)
	t.changed = make(chan struct{})
	t.lastOut = time.Now()
	t.mu.Unlock()
}

// Done returns a channel closed when the task has ended.
func (t *Task) Done() <-chan struct{} { return t.done }

func (t *Task) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// Status says how a task stands: "running", "exited 0", "killed by SIGTERM (killed on
// request)", ...
func (t *Task) Status() string {
	if !t.finished() {
		return "running"
	}
	return describe(t.result)
}

// Drained reports that the task has ended and its output was read to the end.
func (t *Task) Drained() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.readDone
}

// Result returns how the task ended; ok is false while it runs.
func (t *Task) Result() (shell.Result, bool) {
	if !t.finished() {
		return shell.Result{}, false
	}
	return t.result, true
}

func describe(r shell.Result) string {
	var s string
	if r.Signal != "" {
		s = "killed by " + r.Signal
	} else {
		s = "exited " + strconv.Itoa(r.ExitCode)
	}
	if r.Stopped != nil {
		s += " (" + r.Stopped.Error() + ")"
	}
	if r.ProcessLimit > 0 {
		s += " (it hit its process limit, " + strconv.Itoa(r.ProcessLimit) + " processes and threads at once, and was killed with everything it started)"
	}
	return s
}

// Snapshot is what [Manager.Output] returns: the task's state and its output since the
// previous read.
type Snapshot struct {
	Task           *Task
	Running        bool
	Status         string
	Stdout, Stderr shell.Excerpt
}

// Output returns the output task id wrote since the last call, within budget characters
// for both streams together (see [shell.Split]), with hint saying how to read what was left out. If there is none yet and
// wait is positive, it first waits up to wait for output or for the task to end.
func (m *Manager) Output(ctx context.Context, id string, wait time.Duration, budget int, hint shell.Hint) (Snapshot, error) {
	t, err := m.get(id)
	if err != nil {
		return Snapshot{}, err
	}
	if wait > 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		m.watch(ctx, t, timer.C, func(final bool) bool { return final || t.hasNew() })
	}
	return m.read(t, budget, hint), nil
}

// watch calls check each time t's output changes, until check returns true, t has ended
// (after a last check, with final set), expire fires, or ctx or the manager ends. It
// reports whether check returned true.
func (m *Manager) watch(ctx context.Context, t *Task, expire <-chan time.Time, check func(final bool) bool) bool {
	for {
		t.mu.Lock()
		ch := t.changed
		t.mu.Unlock()
		final := t.finished()
		if check(final) {
			return true
		}
		if final {
			return false
		}
		select {
		case <-ch:
		case <-t.done:
		case <-expire:
			return false
		case <-ctx.Done():
			return false
		case <-m.ctx.Done():
			return false
		}
	}
}

// read returns t's state and the output it wrote since the last read, within budget
// characters for both streams together; a terminal's output as plain text ([term.Plain]).
func (m *Manager) read(t *Task, budget int, hint shell.Hint) Snapshot {
	final := t.finished()
	t.mu.Lock()
	defer t.mu.Unlock()
	snap := Snapshot{Task: t, Running: !final, Status: t.Status()}
	outEnd, errEnd := t.proc.Stdout.End(), t.proc.Stderr.End()
	outBudget, errBudget := shell.Split(budget, outEnd.Chars-t.outMark.Chars, errEnd.Chars-t.errMark.Chars)
	shell.ShareLines(t.proc.Stdout, t.proc.Stderr, outEnd.Lines-t.outMark.Lines, errEnd.Lines-t.errMark.Lines)
	snap.Stdout = t.proc.Stdout.Since(t.outMark, outBudget, final, hint)
	snap.Stderr = t.proc.Stderr.Since(t.errMark, errBudget, final, hint)
	t.outMark, t.errMark = snap.Stdout.To, snap.Stderr.To
	if t.screen != nil {
		snap.Stdout.Text = term.Plain(snap.Stdout.Text)
	}
	if final {
		t.readDone = true
	}
	return snap
}

func (t *Task) hasNew() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc.Stdout.End().Bytes > t.outMark.Bytes || t.proc.Stderr.End().Bytes > t.errMark.Bytes
}

// Spills returns the spill files of the tasks whose output has not been read to the end:
// pruning must spare them.
func (m *Manager) Spills() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var paths []string
	for _, t := range m.tasks {
		t.mu.Lock()
		read := t.readDone
		t.mu.Unlock()
		if !read {
			paths = append(paths, t.proc.Stdout.Path(), t.proc.Stderr.Path())
		}
	}
	return paths
}

// Kill stops task id (SIGTERM to its group, SIGKILL after the grace period) and waits
// until it has ended. Killing a finished task is not an error.
func (m *Manager) Kill(id string) (*Task, error) {
	return m.KillCause(id, ErrKilled)
}

// KillCause is [Manager.Kill] with the reason the task's status gives.
func (m *Manager) KillCause(id string, cause error) (*Task, error) {
	t, err := m.get(id)
	if err != nil {
		return nil, err
	}
	t.cancel(cause)
	<-t.done
	return t, nil
}

// List returns the session's tasks, oldest first.
func (m *Manager) List() []*Task {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune()
	list := make([]*Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		list = append(list, t)
	}
	slices.SortFunc(list, func(a, b *Task) int { return a.Started.Compare(b.Started) })
	return list
}

func (m *Manager) get(id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tasks[strings.TrimSpace(id)]; ok {
		return t, nil
	}
	if err := m.pastLocked(strings.TrimSpace(id)); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w %q", ErrUnknown, id)
}

// prune forgets finished tasks kept past their time, and, past maxKept, those whose
// output was read to the end. It also lets go of adopted leftovers that have ended.
// m.mu must be held.
func (m *Manager) prune() {
	now := time.Now()
	var read []*Task
	for id, t := range m.tasks {
		if !t.finished() {
			continue
		}
		t.mu.Lock()
		ended, readDone := t.ended, t.readDone
		t.mu.Unlock()
		if now.Sub(ended) > m.limits.Keep {
			delete(m.tasks, id)
			m.release(t)
		} else if readDone {
			read = append(read, t)
		}
	}
	slices.SortFunc(read, func(a, b *Task) int { return a.ended.Compare(b.ended) })
	for _, t := range read {
		if len(m.tasks) <= maxKept {
			break
		}
		delete(m.tasks, t.ID)
		m.release(t)
	}
	m.adopted = slices.DeleteFunc(m.adopted, func(p *shell.Process) bool {
		if p.Done() {
			m.wg.Go(p.Release)
			return true
		}
		return false
	})
}

// release frees what a forgotten, finished task holds; its spill files stay with the
// session's spill directory.
func (m *Manager) release(t *Task) {
	m.wg.Go(t.proc.Release)
}

// Adopt takes charge of processes a foreground command left running (shell.Result
// Lingering), so that they end with the session.
func (m *Manager) Adopt(p *shell.Process) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		p.Close()
		return
	}
	m.prune()
	m.adopted = append(m.adopted, p)
	var evict *shell.Process
	if len(m.adopted) > maxAdopted {
		evict = m.adopted[0]
		m.adopted = m.adopted[1:]
	}
	m.mu.Unlock()
	if evict != nil {
		m.wg.Go(evict.Close)
	}
}

// Close kills every task and every adopted process, and waits until they are gone. It is
// safe to call twice.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.fg.Wait()
		m.wg.Wait()
		return
	}
	m.closed = true
	m.mu.Unlock()

	m.cancel(ErrSession)
	// Foreground commands are stopped through their own contexts, which end with the
	// session; wait for them, so that what they leave behind is adopted (and killed below,
	// or at once once closed) before Close returns.
	m.fg.Wait()
	m.mu.Lock()
	adopted := m.adopted
	m.adopted = nil
	tasks := make([]*Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		tasks = append(tasks, t)
	}
	m.mu.Unlock()
	for _, p := range adopted {
		m.wg.Go(p.Close)
	}
	for _, t := range tasks {
		m.wg.Go(func() {
			<-t.done
			t.proc.Close()
		})
	}
	m.wg.Wait()
	// Whatever left its process group (setsid) but kept its environment.
	shell.StopMarked(m.tag+"/", m.limits.Grace)
	// Whatever also left its cgroup and cleared its mark: only root can.
	shell.StopStrays(m.born, m.limits.Grace)
}

// Foreground records that a foreground command of this session is running. Call done once
// it has returned and its leftover processes are adopted or released: [Manager.Close]
// waits for that, so no command outlives its session. It fails once the Manager is closed.
func (m *Manager) Foreground() (done func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrSession
	}
	m.fg.Add(1)
	return sync.OnceFunc(m.fg.Done), nil
}
