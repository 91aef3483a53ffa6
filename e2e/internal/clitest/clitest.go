// Package clitest is what the end-to-end checks through real client CLIs share: the Boris
// binary they drive, and the client's CLI, installed from the package.json of the
// checks' directory.
package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	buildOnce sync.Once
	borisBin  string
	buildErr  error
)

// Boris builds the Boris binary once for every test, or returns the one named by
// BORIS_E2E_BINARY (to check a release build).
func Boris(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("BORIS_E2E_BINARY"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "boris-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		borisBin = filepath.Join(dir, "boris")
		out, err := exec.Command("go", "build", "-o", borisBin, "github.com/mjkoo/boris/cmd/boris").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return borisBin
}

// CLI is a client's command line.
type CLI struct {
	Name    string // what people call it: "Claude Code"
	Command string // its command: "claude"
	Dir     string // the checks' directory, whose package.json pins it: "e2e/claudecode"
	Require string // the variable that, set to 1, makes a missing CLI a failure
	Version string // the release the checks were written against
	Needs   string // what installing it needs, if anything: "Node.js 22 or later"

	missing atomic.Bool
}

// Path finds the CLI: the one installed from package.json in the test's directory, else
// one on PATH. It skips the test when there is none, unless c.Require is set to 1.
func (c *CLI) Path(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("node_modules", ".bin", c.Command))
	if err == nil {
		if _, err = os.Stat(path); err != nil {
			path, err = exec.LookPath(c.Command)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("%s CLI not found: run `npm ci --prefix %s` (or put %s on PATH)", c.Name, c.Dir, c.Command)
		if os.Getenv(c.Require) == "1" {
			t.Fatalf("%s (%s=1 makes this check mandatory)", msg, c.Require)
		}
		c.missing.Store(true)
		t.Skip(msg)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", path, err)
	}
	if !strings.Contains(string(out), c.Version) {
		t.Logf("checking with %s %s; these checks were written against %s", c.Name, strings.TrimSpace(string(out)), c.Version)
	}
	return path
}

// Main runs the tests, removes the binary Boris built for them, and, for each of cs that
// was missing, says that its checks did not run.
func Main(m *testing.M, cs ...*CLI) {
	code := m.Run()
	if borisBin != "" {
		os.RemoveAll(filepath.Dir(borisBin))
	}
	warned := false
	for _, c := range cs {
		if !c.missing.Load() || code != 0 {
			continue
		}
		// `go test ./...` shows a passing package's output only with -v, but it marks
		// the summary line "[no tests to run]" when the output holds this warning, so
		// that a run without the CLI says that these checks did not run.
		if !warned {
			fmt.Print("\ntesting: warning: no tests to run\n")
			warned = true
		}
		needs := ""
		if c.Needs != "" {
			needs = " (" + c.Needs + ")"
		}
		fmt.Printf("%s: the %s CLI is not installed, so its end-to-end checks were skipped; run `npm ci --prefix %s`%s to run them\n", c.Dir, c.Name, c.Dir, needs)
	}
	os.Exit(code)
}
