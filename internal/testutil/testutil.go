// Package testutil holds helpers that tests in several packages share.
package testutil

import (
	"os"
	"testing"
)

// OpenFDs returns how many file descriptors this process has open, or skips the test
// where /proc does not say.
func OpenFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}
