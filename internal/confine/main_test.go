package confine

import (
	"os"
	"testing"
)

// TestMain lets this test binary serve as the launcher of the confined commands its
// tests run: a launcher is the program itself started again.
func TestMain(m *testing.M) {
	if IsLauncher() {
		os.Exit(RunLauncher())
	}
	os.Exit(m.Run())
}
