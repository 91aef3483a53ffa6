package checkpoint

import (
	"os"
	"testing"
)

// TestMain lets a crash test's child process stop at the crash point it names.
func TestMain(m *testing.M) {
	crashAt = os.Getenv("BORIS_CHECKPOINT_CRASH")
	os.Exit(m.Run())
}
