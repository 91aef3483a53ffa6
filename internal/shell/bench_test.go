package shell

import (
	"os"
	"os/exec"
	"testing"

	"github.com/mjkoo/boris/internal/testutil"
)

// BenchmarkRunTrue runs a script with nothing to report; BenchmarkRunCd one that has the
// shell report its working directory and exports.
func BenchmarkRunTrue(b *testing.B) { benchmarkRun(b, "true") }
func BenchmarkRunCd(b *testing.B)   { benchmarkRun(b, "cd .") }

func benchmarkRun(b *testing.B, script string) {
	c := Command{Shell: "/bin/bash", Script: script, Dir: b.TempDir(), Env: os.Environ(), StateDir: b.TempDir()}
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		p, _, err := Run(b.Context(), c)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

func BenchmarkRawTrue(b *testing.B) {
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
