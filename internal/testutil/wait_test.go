package testutil

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestExited(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Exited(pid, time.Now().Add(50*time.Millisecond)) {
		t.Fatal("a running sleep counts as exited")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie counts as exited where pidfds tell.
	if runtime.GOOS == "linux" && !Exited(pid, time.Now().Add(Within)) {
		t.Error("a killed sleep does not count as exited")
	}
	_ = cmd.Wait()
	if !Exited(pid, time.Now()) {
		t.Error("a reaped process does not count as exited")
	}
}

func TestReadFifo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	Fifo(t, path)
	cmd := exec.Command("sh", "-c", "echo 42 > "+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := ReadFifo(t, path); got != "42\n" {
		t.Errorf("ReadFifo = %q, want %q", got, "42\n")
	}
	_ = cmd.Wait()
}
