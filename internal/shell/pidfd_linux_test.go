package shell

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWithoutPidfds runs commands the way Boris does where the kernel has no pidfds: a
// goroutine waits for the shell and wakes the poll.
func TestWithoutPidfds(t *testing.T) {
	// Not parallel: it swaps a package variable.
	saved := pidfdsWork
	pidfdsWork = func() bool { return false }
	defer func() { pidfdsWork = saved }()

	c := command(t, "/bin/bash", "echo out; echo err >&2; exit 3")
	p, res := run(t, c)
	if p.pidfd >= 0 {
		t.Fatal("a pidfd was used")
	}
	if res.ExitCode != 3 || p.Stdout.Text(DefaultBudget, nil).Text != "out\n" || p.Stderr.Text(DefaultBudget, nil).Text != "err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3, out, err", res.ExitCode, p.Stdout.Text(DefaultBudget, nil).Text, p.Stderr.Text(DefaultBudget, nil).Text)
	}

	c = command(t, "/bin/bash", "sleep 60")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	p, res, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !errors.Is(res.Stopped, context.DeadlineExceeded) || res.Signal != "SIGTERM" {
		t.Errorf("stopped %v with %q, want the deadline and SIGTERM", res.Stopped, res.Signal)
	}
}
