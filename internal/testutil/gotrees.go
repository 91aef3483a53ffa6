package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// GoTrees returns a directory holding n copies of GOROOT (copy1 … copyN), the large tree
// the checkpoint benchmarks work on, made once in the system's temporary directory and
// kept for later runs (BORIS_BENCH_TREES names another place). A benchmark that changes
// it must put it back.
func GoTrees(b testing.TB, n int) string {
	b.Helper()
	dir := os.Getenv("BORIS_BENCH_TREES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "boris-bench-gotrees-"+strconv.Itoa(n))
	}
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		out, err := exec.Command("cp", "-a", GoRoot(b), filepath.Join(dir, "copy"+strconv.Itoa(i))).CombinedOutput()
		if err != nil {
			b.Fatalf("copying GOROOT: %v\n%s", err, out)
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// GoRoot returns the GOROOT of the go command on the PATH.
func GoRoot(b testing.TB) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("no go command: %v", err)
	}
	return strings.TrimSpace(string(out))
}
