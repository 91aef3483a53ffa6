package session

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
