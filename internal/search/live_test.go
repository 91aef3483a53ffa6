package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// liveOf returns the live list of root; for tests.
func (s *Indexes) liveOf(root string) *live {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.trees[root]; t != nil {
		return t.live
	}
	return nil
}

// compareAll runs every query class by scan and through ix and fails on a difference.
func compareAll(t *testing.T, ix *Indexes, root, state string) {
	t.Helper()
	for _, q := range indexQueries {
		scan, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		q.Indexes = ix
		idx, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		idx.Index, idx.Unindexed, idx.Live = Scanned, 0, false
		if !reflect.DeepEqual(scan, idx) {
			t.Fatalf("%s, %q: index gave\n%+v\nscan gave\n%+v", state, q.Pattern, idx, scan)
		}
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestLiveMatchesScan answers every query class from a live list (no walk) and by scan,
// warm, after sed -i on many files, after a git checkout of a branch that differs in
// many files, after mkdir and rmdir, and after random edits, deletes, renames and
// ignore-file changes, and finds no difference.
func TestLiveMatchesScan(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/\n"), 0o644)
	for range 150 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "one")
	git(t, root, "checkout", "-q", "-b", "other")
	for range 60 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	os.MkdirAll(filepath.Join(root, "new/deep"), 0o755)
	writeRandomFile(t, rng, filepath.Join(root, "new/deep/f.go"))
	git(t, root, "add", "-A")
	git(t, root, "commit", "-qm", "two")
	git(t, root, "checkout", "-q", "main")

	ix := &Indexes{MinFiles: 1}
	t.Cleanup(func() {
		ix.Close()
		ix.Wait()
	})
	compareAll(t, ix, root, "cold")
	ix.Wait()
	if ix.liveOf(root) == nil {
		t.Fatal("no live list after the build")
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"warm", func() {}},
		{"sed -i", func() {
			var files []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "/.git/") {
					files = append(files, p)
				}
				return nil
			})
			cmd := exec.Command("sed", append([]string{"-i", "s/the/rareIdent/"}, files...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sed: %v\n%s", err, out)
			}
		}},
		{"checkout other", func() {
			git(t, root, "checkout", "-q", "-f", "other")
		}},
		{"checkout main", func() {
			git(t, root, "checkout", "-q", "-f", "main")
		}},
		{"mkdir", func() {
			os.MkdirAll(filepath.Join(root, "m/n/o"), 0o755)
			writeRandomFile(t, rng, filepath.Join(root, "m/n/o/x.go"))
			writeRandomFile(t, rng, filepath.Join(root, "m/y.txt"))
		}},
		{"mv dir", func() {
			if err := os.Rename(filepath.Join(root, "m"), filepath.Join(root, "a/m2")); err != nil {
				t.Fatal(err)
			}
		}},
		{"rmdir", func() {
			os.RemoveAll(filepath.Join(root, "a/m2"))
			os.RemoveAll(filepath.Join(root, "c"))
		}},
		{"chmod", func() {
			os.Chmod(filepath.Join(root, "a/b"), 0)
		}},
		{"chmod back", func() {
			os.Chmod(filepath.Join(root, "a/b"), 0o755)
		}},
	}
	for i := range 12 {
		steps = append(steps, struct {
			name string
			do   func()
		}{fmt.Sprintf("random %d", i), func() { mutate(t, rng, root) }})
	}
	for _, s := range steps {
		s.do()
		before := ix.liveAnswers.Load()
		compareAll(t, ix, root, s.name)
		answered := ix.liveAnswers.Load() - before
		t.Logf("%s: %d of %d searches from the live list at once", s.name, answered, len(indexQueries))
		// Let any list broken by the step be built again, then compare once more.
		ix.Wait()
		before = ix.liveAnswers.Load()
		compareAll(t, ix, root, s.name+", once built again")
		if ix.liveAnswers.Load() == before {
			t.Errorf("%s: no search answered from the live list once built again (%d before)", s.name, answered)
		}
	}
}
