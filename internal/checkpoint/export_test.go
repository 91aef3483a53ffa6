package checkpoint

import (
	"os"
	"strconv"
	"testing"
)

// TestMain lets a crash test's child process stop at the crash point it names, the Nth
// time it is reached (BORIS_CHECKPOINT_CRASH=point, BORIS_CHECKPOINT_CRASH_AFTER=N).
func TestMain(m *testing.M) {
	crashAt = os.Getenv("BORIS_CHECKPOINT_CRASH")
	crashAfter, _ = strconv.ParseInt(os.Getenv("BORIS_CHECKPOINT_CRASH_AFTER"), 10, 64)
	if crashAfter == 0 {
		crashAfter = 1
	}
	os.Exit(m.Run())
}
