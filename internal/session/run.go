package session

import (
	"cmp"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/term"
)

// Why a command was stopped, as [Ran]'s Stopped holds it. A caller may stop a command for
// reasons of its own by cancelling the context it passes to [Session.Run] with a cause.
var (
	ErrTimedOut = errors.New("timed out")
	ErrClosed   = tasks.ErrSession // as for the session's background tasks
)

// Command is a command to run in the session: the script, and the server's settings that
// apply to it.
type Command struct {
	Script string
	Shell  string
	// Dir, when set, is where a background task starts instead of the session's working
	// directory: an absolute path the caller has checked.
	Dir string
	// Fallback is where the command runs when the session's working directory can no
	// longer be used (the server's workdir); it becomes the working directory.
	Fallback     string
	Grace, Drain time.Duration
	MaxSpillFile int64
	// MaxSpillTotal bounds the session's saved output (0: [shell.MaxSpill]); a run whose
	// output was saved removes the oldest files past it.
	MaxSpillTotal int64
	// Timeout bounds a foreground run; past it the command is stopped with [ErrTimedOut].
	Timeout time.Duration
	// OnOutput, if set, sees the output as it arrives.
	OnOutput shell.OutputFunc
	// Hint says how to read output the result leaves out.
	Hint shell.Hint
	// TTY, if set, runs the command in a pseudo-terminal of this size, with TERM set to
	// the terminal's type ([Session.RunTTY]).
	TTY *shell.TTYSize
	// Budget is how many characters of output the result shows, stdout and stderr
	// together (see [shell.Split]); 0 means [shell.DefaultBudget].
	Budget int
	// Lines, when positive, is the most lines of each stream the result shows.
	Lines int
}

// Moved says that a command did not start in the session's working directory, and why.
type Moved struct {
	From, To string
	Why      string // "no longer exists", "can no longer be entered"
}

// Ran is how a foreground command ended.
type Ran struct {
	shell.Result
	// Stdout and Stderr are the output, within the command's Budget together.
	Stdout, Stderr shell.Excerpt
	Moved          *Moved // the command ran in the fallback directory
	Confined       bool   // the command ran confined by the kernel
	Cwd            string // the session's working directory afterwards
}

// Run runs c in the foreground, in the session's working directory, and waits for it.
//
// It stops the command when ctx is done (Ran.Stopped is then ctx's cause), when c.Timeout
// passes ([ErrTimedOut]) or when the session closes ([ErrClosed]). A command that ran to
// its end changes the session's working directory and environment as it changed them,
// and only that, so that commands running side by side do not undo each other's cd and
// export; a stopped command changes nothing, as it did not finish what it set out to do.
// Processes the command left running become the session's, to end when it closes.
func (s *Session) Run(ctx context.Context, c Command) (*Ran, error) {
	sc, moved, err := s.command(c)
	if err != nil {
		return nil, err
	}
	done, err := s.Tasks.Foreground()
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(s.Context(), func() { cancel(ErrClosed) })
	defer stop()
	if c.Timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, c.Timeout, ErrTimedOut)
		defer cancelTimeout()
	}

	p, res, err := shell.Run(ctx, sc)
	if err != nil {
		return nil, err
	}
	return s.ran(c, sc, moved, p, res), nil
}

// ran is how a foreground command ended: it applies the command's cd and export if it ran
// to its end, takes charge of what it left running, and reads its output.
func (s *Session) ran(c Command, sc shell.Command, moved *Moved, p *shell.Process, res shell.Result) *Ran {
	if res.Stopped == nil {
		if res.Cwd != "" && res.Cwd != sc.Dir {
			s.SetCwd(res.Cwd)
		}
		if res.Env != nil {
			s.ApplyEnv(sc.Env, res.Env)
		}
	}
	if res.Lingering {
		s.Tasks.Adopt(p)
	} else {
		p.Release()
	}
	outBudget, errBudget := shell.Split(cmp.Or(c.Budget, shell.DefaultBudget), p.Stdout.End().Chars, p.Stderr.End().Chars)
	// The two streams share the lines a client keeps as they share the characters.
	shell.ShareLines(p.Stdout, p.Stderr, p.Stdout.End().Lines, p.Stderr.End().Lines)
	r := &Ran{Result: res, Moved: moved, Confined: sc.Launch != nil, Cwd: s.Cwd(),
		Stdout: p.Stdout.Text(outBudget, c.Hint), Stderr: p.Stderr.Text(errBudget, c.Hint)}
	if r.Stdout.SpillPath != "" || r.Stderr.SpillPath != "" {
		total := c.MaxSpillTotal
		if total <= 0 {
			total = shell.MaxSpill
		}
		// The output of tasks not yet read to the end is spared, like this command's own.
		shell.PruneSpills(sc.StateDir, total, append(s.Tasks.Spills(), r.Stdout.SpillPath, r.Stderr.SpillPath)...)
	}
	return r
}

// Start starts c as a background task in the session's working directory (c.Timeout does
// not apply). It returns the task and the directory it started in.
func (s *Session) Start(c Command) (t *tasks.Task, dir string, moved *Moved, err error) {
	sc, moved, err := s.command(c)
	if err != nil {
		return nil, "", nil, err
	}
	t, err = s.Tasks.Start(sc)
	return t, sc.Dir, moved, err
}

// command prepares c to run in the session's working directory, falling back to
// c.Fallback when that directory is gone.
func (s *Session) command(c Command) (shell.Command, *Moved, error) {
	dir := s.Cwd()
	var moved *Moved
	if c.Dir != "" {
		dir = c.Dir
	} else if why := unusableDir(dir); why != "" {
		moved = &Moved{From: dir, To: c.Fallback, Why: why}
		dir = c.Fallback
		s.SetCwd(dir)
	}
	// First, since a session's first confined command sets its TMPDIR.
	launch, err := s.Launcher()
	if err != nil {
		return shell.Command{}, nil, err
	}
	spill, err := s.SpillDir()
	if err != nil {
		return shell.Command{}, nil, err
	}
	env := s.Env()
	if c.TTY != nil {
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }), "TERM="+term.TERM)
	}
	return shell.Command{Shell: c.Shell, Script: c.Script, Dir: dir, Env: env, StateDir: spill,
		Mark: s.Tasks.NewMark(), Grace: c.Grace, Drain: c.Drain, MaxSpillFile: c.MaxSpillFile, MaxLines: c.Lines,
		OnOutput: c.OnOutput, Launch: launch, TTY: c.TTY}, moved, nil
}

// unusableDir says why a command cannot start in dir, or returns "".
func unusableDir(dir string) string {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "no longer exists"
	}
	if unix.Access(dir, unix.X_OK) != nil {
		return "can no longer be entered" // its permissions changed since the cd
	}
	return ""
}
