package session

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/testutil"
)

func TestApplyEnv(t *testing.T) {
	t.Parallel()
	s := New(Options{ID: "t", Workdir: t.TempDir(), Env: []string{"A=1", "B=2", "C=3"}})
	defer s.Close()
	// Another command changed C and added D meanwhile.
	s.ApplyEnv([]string{"A=1", "B=2", "C=3"}, []string{"A=1", "B=2", "C=30", "D=4"})
	// This command started from the old environment, changed A, removed B, added E.
	s.ApplyEnv([]string{"A=1", "B=2", "C=3"}, []string{"A=10", "C=3", "E=5"})
	if diff := cmp.Diff([]string{"A=10", "C=30", "D=4", "E=5"}, s.Env()); diff != "" {
		t.Errorf("Env after ApplyEnv (-want +got):\n%s", diff)
	}
}

// TestConfinedSessionTmpdir: a confined session's first command gets a private TMPDIR,
// which goes away with the session, and the session's commands can no longer start then.
func TestConfinedSessionTmpdir(t *testing.T) {
	t.Parallel()
	if confine.KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	policy, err := confine.New(confine.Options{Mode: confine.On, Dirs: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{ID: "t", Workdir: t.TempDir(), Env: []string{"TMPDIR=/tmp"}, Confine: policy})
	launch, err := s.Launcher()
	if err != nil || launch == nil {
		t.Fatalf("Launcher() = %v, %v; want a launcher", launch != nil, err)
	}
	var tmp string
	for _, kv := range s.Env() {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	if info, err := os.Stat(tmp); tmp == "/tmp" || err != nil || !info.IsDir() {
		t.Fatalf("TMPDIR = %q (%v), want a new private directory", tmp, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("TMPDIR %s after Close: %v, want it removed", tmp, err)
	}
	if pid, err := launch("/bin/true", []string{"true"}, &syscall.ProcAttr{}); err == nil {
		t.Errorf("launch after Close started pid %d", pid)
	}
	if _, err := s.Launcher(); err == nil {
		t.Errorf("Launcher after Close succeeded")
	}
}

// TestUnconfinedSessionHasNoLauncher: without confinement commands start as before.
func TestUnconfinedSessionHasNoLauncher(t *testing.T) {
	t.Parallel()
	policy, err := confine.New(confine.Options{Mode: confine.Off})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{ID: "t", Workdir: t.TempDir(), Confine: policy})
	defer s.Close()
	if launch, err := s.Launcher(); launch != nil || err != nil {
		t.Errorf("Launcher() = %v, %v; want none", launch != nil, err)
	}
}
