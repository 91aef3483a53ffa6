package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRun: a command that runs to its end moves the session (cd, export); one that is
// stopped, here by its timeout, changes nothing; a working directory that is gone sends
// the next command to the fallback, which says so.
func TestRun(t *testing.T) {
	t.Parallel()
	work, fallback := t.TempDir(), t.TempDir()
	s := New(Options{ID: "t", Workdir: work, Env: []string{"PATH=" + os.Getenv("PATH")}})
	defer s.Close()
	sub := filepath.Join(work, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c := Command{Shell: "/bin/sh", Fallback: fallback, Grace: time.Second, Drain: 10 * time.Millisecond}

	c.Script, c.Timeout = "cd sub && export X=1 && echo hi", time.Minute
	ran, err := s.Run(t.Context(), c)
	if err != nil || ran.ExitCode != 0 || ran.Stopped != nil || ran.Stdout.Text != "hi\n" || ran.Cwd != sub || ran.Moved != nil {
		t.Fatalf("Run(%q) = %+v, %v; want exit 0, hi, cwd %s", c.Script, ran, err, sub)
	}
	if env := s.Env(); env[len(env)-1] != "X=1" {
		t.Errorf("Env() = %q, want X=1 kept", env)
	}

	c.Script, c.Timeout = "cd .. && export Y=2 && sleep 30", 50*time.Millisecond
	ran, err = s.Run(t.Context(), c)
	if err != nil || !errors.Is(ran.Stopped, ErrTimedOut) || s.Cwd() != sub {
		t.Fatalf("Run(%q) = %+v, %v; want stopped by ErrTimedOut, cwd still %s (is %s)", c.Script, ran, err, sub, s.Cwd())
	}

	ctx, cancel := context.WithCancelCause(t.Context())
	why := errors.New("the caller's reason")
	cancel(why)
	ran, err = s.Run(ctx, Command{Shell: "/bin/sh", Script: "cd ..", Fallback: fallback, Timeout: time.Minute})
	if err != nil || !errors.Is(ran.Stopped, why) || s.Cwd() != sub {
		t.Fatalf("Run with a cancelled context = %+v, %v; want stopped by the caller's reason, cwd still %s", ran, err, sub)
	}

	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	c.Script, c.Timeout = "pwd", time.Minute
	ran, err = s.Run(t.Context(), c)
	if err != nil || ran.Moved == nil || ran.Moved.From != sub || ran.Moved.To != fallback || ran.Moved.Why != "no longer exists" || ran.Stdout.Text != fallback+"\n" {
		t.Fatalf("Run after the cwd was removed = %+v, %v; want it moved from %s to %s", ran, err, sub, fallback)
	}
}
