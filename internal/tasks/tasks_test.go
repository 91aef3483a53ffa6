package tasks

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/shell"
)

func newManager(t *testing.T, l Limits) *Manager {
	t.Helper()
	if l.Grace == 0 {
		l.Grace = 100 * time.Millisecond
	}
	m := NewManager(l)
	t.Cleanup(m.Close)
	return m
}

func cmd(t *testing.T, script string) shell.Command {
	return shell.Command{
		Shell: "/bin/bash", Script: script, Dir: t.TempDir(), StateDir: t.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH")}, Drain: 50 * time.Millisecond,
	}
}

// pidOf waits for the task's first line of output, its shell's pid.
func pidOf(t *testing.T, m *Manager, id string) int {
	t.Helper()
	snap, err := m.Output(t.Context(), id, 10*time.Second, shell.DefaultBudget, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(snap.Stdout.Text))
	if err != nil {
		t.Fatalf("first output %q: %v", snap.Stdout.Text, err)
	}
	return pid
}

func TestLifetime(t *testing.T) {
	t.Parallel()
	m := newManager(t, Limits{MaxRunning: 2, Lifetime: 200 * time.Millisecond})
	// Silent: the lifetime may end before a loaded machine has run anything of it.
	task, err := m.Start(cmd(t, "sleep 100"))
	if err != nil {
		t.Fatal(err)
	}
	pid := task.proc.PGID()
	snap, err := m.Output(t.Context(), task.ID, 10*time.Second, shell.DefaultBudget, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Running || !strings.Contains(snap.Status, ErrLifetime.Error()) {
		t.Errorf("status = %q, want killed for running too long", snap.Status)
	}
	if shell.GroupAlive(pid) {
		t.Errorf("group %d outlived the task's lifetime", pid)
	}
}

func TestCloseKillsEverything(t *testing.T) {
	t.Parallel()
	m := NewManager(Limits{MaxRunning: 4, Grace: 100 * time.Millisecond})
	var pids []int
	for _, script := range []string{"echo $$; sleep 100", "echo $$; trap '' TERM; sleep 100 & sleep 100"} {
		task, err := m.Start(cmd(t, script))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pidOf(t, m, task.ID))
	}
	// A foreground command's leftover, adopted by the manager.
	p, res, err := shell.Run(t.Context(), cmd(t, "sleep 100 &"))
	if err != nil || !res.Lingering {
		t.Fatalf("Run: %v, lingering %v", err, res.Lingering)
	}
	m.Adopt(p)
	pids = append(pids, p.PGID())
	m.Close()
	m.Close() // twice is fine
	for _, pid := range pids {
		if shell.GroupAlive(pid) {
			t.Errorf("group %d survived Close", pid)
		}
	}
	if _, err := m.Start(cmd(t, "true")); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
}

func TestLimitAndUnknown(t *testing.T) {
	t.Parallel()
	m := newManager(t, Limits{MaxRunning: 1})
	task, err := m.Start(cmd(t, "sleep 100"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(cmd(t, "true")); !errors.Is(err, ErrLimit) {
		t.Errorf("second Start: %v, want ErrLimit", err)
	}
	if _, err := m.Kill(task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(cmd(t, "true")); err != nil {
		t.Errorf("Start after Kill: %v", err)
	}
	if _, err := m.Output(t.Context(), "task-99", 0, 100, nil); !errors.Is(err, ErrUnknown) {
		t.Errorf("Output(unknown): %v, want ErrUnknown", err)
	}
}

func TestOutputWaitsForNewOutput(t *testing.T) {
	t.Parallel()
	m := newManager(t, Limits{MaxRunning: 1})
	dir := t.TempDir()
	c := cmd(t, "echo a; while [ ! -e "+dir+"/go ]; do sleep 0.01; done; echo b")
	task, err := m.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := m.Output(t.Context(), task.ID, 10*time.Second, 100, nil); s.Stdout.Text != "a\n" {
		t.Fatalf("first read %q", s.Stdout.Text)
	}
	// Nothing new: a short wait returns empty-handed, still running.
	if s, _ := m.Output(t.Context(), task.ID, 20*time.Millisecond, 100, nil); s.Stdout.Text != "" || !s.Running {
		t.Errorf("idle read = %+v", s)
	}
	if err := os.WriteFile(dir+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got string
	for {
		s, _ := m.Output(t.Context(), task.ID, 10*time.Second, 100, nil)
		got += s.Stdout.Text
		if !s.Running {
			break
		}
	}
	if got != "b\n" {
		t.Errorf("reads after the wait = %q, want %q", got, "b\n")
	}
}
