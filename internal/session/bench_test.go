package session

import (
	"os"
	"testing"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/testutil"
)

// BenchmarkRunConfinedAdded is what confinement adds to a command at the session's level,
// without the MCP client and server in the way: each iteration runs `true` in an
// unconfined session and then in a confined one (see testutil.Paired).
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
	run := func(i int) func() {
		return func() {
			ran, err := sessions[i].Run(b.Context(), Command{Script: "true", Shell: "/bin/bash"})
			if err != nil || ran.ExitCode != 0 || ran.Confined != (i == 1) {
				b.Fatalf("run %d: %+v, %v", i, ran, err)
			}
		}
	}
	testutil.Paired(b, "unconfined", run(0), "confined", run(1))
}
