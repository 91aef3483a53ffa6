package session

import (
	"os"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/confine"
)

// BenchmarkRunConfinedAdded is what confinement adds to a command at the session's level,
// without the MCP client and server in the way: each iteration runs `true` in an
// unconfined session and then in a confined one, so that the host's load weighs on both
// alike; added-µs/op is the difference.
func BenchmarkRunConfinedAdded(b *testing.B) {
	if confine.KernelABI() < 1 {
		b.Skip("no Landlock")
	}
	dir := b.TempDir()
	on, err := confine.New(confine.Options{Mode: confine.On, Dirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	off, err := confine.New(confine.Options{Mode: confine.Off})
	if err != nil {
		b.Fatal(err)
	}
	sessions := []*Session{
		New(Options{ID: "plain", Workdir: dir, Env: os.Environ(), Confine: off}),
		New(Options{ID: "confined", Workdir: dir, Env: os.Environ(), Confine: on}),
	}
	for _, s := range sessions {
		b.Cleanup(func() { _ = s.Close() })
	}
	var took [2]time.Duration
	for b.Loop() {
		for i, s := range sessions {
			start := time.Now()
			ran, err := s.Run(b.Context(), Command{Script: "true", Shell: "/bin/bash"})
			if err != nil || ran.ExitCode != 0 || ran.Confined != (i == 1) {
				b.Fatalf("run %d: %+v, %v", i, ran, err)
			}
			took[i] += time.Since(start)
		}
	}
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(perOp(took[0]), "unconfined-µs/op")
	b.ReportMetric(perOp(took[1]), "confined-µs/op")
	b.ReportMetric(perOp(took[1]-took[0]), "added-µs/op")
}
