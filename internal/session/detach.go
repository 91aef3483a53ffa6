package session

import (
	"context"
	"time"

	"github.com/mjkoo/boris/internal/tasks"
)

// RunOrDetach is [Session.Run] for a command that may move to the background: if it is
// still running after the given time, it becomes one of the session's background tasks,
// which RunOrDetach returns (with a nil Ran) instead of waiting on. From then on it goes
// on as any background task: the caller's ctx no longer stops it (c.Timeout still does),
// and its cd and export do not change the session. When no task can be added (the
// session runs as many as it may), RunOrDetach waits for the command as Run does.
func (s *Session) RunOrDetach(ctx context.Context, c Command, after time.Duration) (*Ran, *tasks.Task, error) {
	sc, moved, err := s.command(c)
	if err != nil {
		return nil, nil, err
	}
	done, err := s.Tasks.Foreground()
	if err != nil {
		return nil, nil, err
	}
	defer done()
	t, err := s.Tasks.StartForeground(sc, c.Timeout, ErrTimedOut)
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { t.Stop(context.Cause(ctx)) })
	defer func() { stop() }()
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case <-t.Done():
	case <-timer.C:
		if stop() {
			if kept, _ := s.Tasks.Keep(t); kept {
				return nil, t, nil
			}
			stop = context.AfterFunc(ctx, func() { t.Stop(context.Cause(ctx)) })
		}
		<-t.Done()
	}
	res, _ := t.Result()
	return s.ran(c, sc, moved, t.Process(), res), nil, nil
}
