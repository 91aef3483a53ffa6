package watch

import (
	"os"
	"testing"

	"github.com/mjkoo/boris/internal/confine"
)

// TestMain lets this test binary serve as the launcher of the confined commands its
// tests run: a launcher is the program itself started again.
func TestMain(m *testing.M) {
	if confine.IsLauncher() {
		os.Exit(confine.RunLauncher())
	}
	os.Exit(m.Run())
}
