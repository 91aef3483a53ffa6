package testutil

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// Within bounds how long the waits below may take before the test fails: long enough
// for a loaded machine, short of the test binary's own timeout.
const Within = 20 * time.Second

// Fifo makes a named pipe at path. A command that writes to it (`echo $$ > path`) blocks
// until the test reads it with [ReadFifo], so the test learns the moment the command got
// there without polling for a file.
func Fifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("making the fifo %s: %v", path, err)
	}
}

// ReadFifo reads what a command writes to the fifo at path, up to the writer's close,
// and fails the test if nothing has been written within [Within].
func ReadFifo(t testing.TB, path string) string {
	t.Helper()
	type read struct {
		b   []byte
		err error
	}
	got := make(chan read, 1)
	go func() {
		b, err := os.ReadFile(path)
		got <- read{b, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("reading the fifo %s: %v", path, r.err)
		}
		return string(r.b)
	case <-time.After(Within):
		t.Fatalf("nothing was written to the fifo %s within %v", path, Within)
		return ""
	}
}
