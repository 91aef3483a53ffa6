package tools

import (
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/mjkoo/boris/internal/confine"
)

// TestMain lets this test binary serve as the launcher of the confined commands its
// tests run: a launcher is the program itself started again.
//
// It also catches SIGINT and SIGQUIT when the binary was started with them ignored (as a
// shell starts a background job): ignored signals stay ignored in every command, and a
// Ctrl-C typed at a terminal would then stop nothing. The boris binary catches SIGINT
// before its first tool call, so its commands start with the default.
func TestMain(m *testing.M) {
	if confine.IsLauncher() {
		os.Exit(confine.RunLauncher())
	}
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
	os.Exit(m.Run())
}
