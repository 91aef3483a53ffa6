package shell

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunTrue runs a script with nothing to report; BenchmarkRunCd one that has the
// shell report its working directory and exports.
func BenchmarkRunTrue(b *testing.B) { benchmarkRun(b, "true") }
func BenchmarkRunCd(b *testing.B)   { benchmarkRun(b, "cd .") }

func benchmarkRun(b *testing.B, script string) {
	c := Command{Shell: "/bin/bash", Script: script, Dir: b.TempDir(), Env: os.Environ(), StateDir: b.TempDir()}
	defer cpuPerOp(b)()
	for b.Loop() {
		p, _, err := Run(b.Context(), c)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

func BenchmarkRawTrue(b *testing.B) {
	defer cpuPerOp(b)()
	for b.Loop() {
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func cpuPerOp(b *testing.B) func() {
	var s0, c0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s0)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c0)
	return func() {
		var s1, c1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &s1)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c1)
		d := func(a, b syscall.Timeval) float64 { return float64(time.Duration(b.Nano() - a.Nano()).Microseconds()) }
		n := float64(b.N)
		b.ReportMetric((d(s0.Utime, s1.Utime)+d(s0.Stime, s1.Stime))/n, "self-µs/op")
		b.ReportMetric((d(c0.Utime, c1.Utime)+d(c0.Stime, c1.Stime))/n, "child-µs/op")
	}
}
