package session

import (
	"context"
	"errors"

	"github.com/mjkoo/boris/internal/shell"
	"github.com/mjkoo/boris/internal/tasks"
	"github.com/mjkoo/boris/internal/term"
)

// TTYRan is how a command run in a terminal in the foreground came back: it ended (Task
// is nil, and Ran says how), or it waits for input or shows a full-screen program and
// goes on as Task.
type TTYRan struct {
	Ran
	Task   *tasks.Task
	Why    tasks.Why
	View   term.View     // what the kernel said of the foreground program
	Screen term.Snapshot // the terminal's screen when the call returned
}

// RunTTY runs c (c.TTY set) in the foreground, in a pseudo-terminal, as [Session.Run]
// does, except that it returns early, leaving the command running as a background task
// of the session, once the program waits for input or takes the whole screen (see
// [tasks.Manager.Await]). A command that ended within the call is no task: it changes
// the working directory and environment as [Session.Run] does.
//
// started, if not nil, is called with the task as soon as it runs, for the live view.
func (s *Session) RunTTY(ctx context.Context, c Command, budget int, started func(*tasks.Task)) (*TTYRan, error) {
	if c.TTY == nil {
		return nil, errors.New("RunTTY needs c.TTY")
	}
	sc, moved, err := s.command(c)
	if err != nil {
		return nil, err
	}
	t, err := s.Tasks.Start(sc)
	if err != nil {
		return nil, err
	}
	if started != nil {
		started(t)
	}
	r := &TTYRan{Ran: Ran{Moved: moved, Confined: sc.Launch != nil}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.Context(), cancel)
	defer stop()
	r.Why, r.View, err = s.Tasks.Await(ctx, t.ID, tasks.Until{Wait: c.Timeout})
	if err != nil {
		return nil, err
	}
	switch r.Why {
	case tasks.WhyDeadline:
		_, _ = s.Tasks.KillCause(t.ID, ErrTimedOut)
	case tasks.WhyCancelled:
		cause := context.Cause(ctx)
		if s.Context().Err() != nil {
			cause = ErrClosed
		}
		_, _ = s.Tasks.KillCause(t.ID, cause)
	}
	return s.ttyResult(t, sc.Env, r, budget, c.Hint)
}

// ttyResult fills r once RunTTY is done waiting on t, started with env.
func (s *Session) ttyResult(t *tasks.Task, env []string, r *TTYRan, budget int, hint shell.Hint) (*TTYRan, error) {
	snap, err := s.Tasks.Output(context.Background(), t.ID, 0, budget, hint)
	if err != nil {
		return nil, err
	}
	r.Stdout = snap.Stdout
	if r.Screen, err = s.Tasks.Screen(t.ID); err != nil {
		return nil, err
	}
	res, ended := t.Result()
	if !ended {
		r.Task, r.Cwd = t, s.Cwd()
		return r, nil
	}
	r.Result = res
	if res.Stopped == nil {
		if res.Cwd != "" {
			s.SetCwd(res.Cwd)
		}
		if res.Env != nil {
			s.ApplyEnv(env, res.Env)
		}
	}
	r.Cwd = s.Cwd()
	s.Tasks.Forget(t.ID)
	return r, nil
}
