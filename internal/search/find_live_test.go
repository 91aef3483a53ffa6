package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// findQueries are the find classes compared: names at any depth, a path glob, hidden
// entries, directories, both, a literal start directory, type filters and a cap.
var findQueries = []FindOptions{
	{Pattern: "*.go"},
	{Pattern: "**/*.txt", Type: FilesAndDirs},
	{Pattern: "*", Filter: Filter{Hidden: true}},
	{Pattern: "*", Type: Dirs},
	{Pattern: "a/**", Type: FilesAndDirs, Filter: Filter{Hidden: true}},
	{Pattern: "f1*", Filter: Filter{Globs: []string{"!*.md"}}},
	{Pattern: "*", Filter: Filter{Types: []string{"go"}}, Keep: 7},
	{Pattern: "*", Filter: Filter{NoIgnore: true}},
}

// compareFind runs every find class by walk and through ix and fails on a difference; it
// returns how many were answered from the live list.
func compareFind(t *testing.T, ix *Indexes, root, state string) int {
	t.Helper()
	live := 0
	for _, q := range findQueries {
		walk, err := Find(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		q.Indexes = ix
		got, err := Find(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Live {
			live++
		}
		got.Live = false
		if !reflect.DeepEqual(walk, got) {
			t.Fatalf("%s, %q: live list gave\n%+v\nwalk gave\n%+v", state, q.Pattern, got, walk)
		}
	}
	return live
}

// TestFindLiveMatchesWalk lists every find class from a live list and by walk, warm, after
// mkdir, mv, rm, chmod and random edits, and finds no difference.
func TestFindLiveMatchesWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/\n"), 0o644)
	for range 150 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	os.Symlink("a", filepath.Join(root, "link"))
	ix := &Indexes{MinFiles: 1}
	t.Cleanup(func() {
		ix.Close()
		ix.Wait()
	})
	if _, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "x", Indexes: ix}); err != nil {
		t.Fatal(err)
	}
	ix.Wait()
	if ix.liveOf(root) == nil {
		t.Fatal("no live list")
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"warm", func() {}},
		{"mkdir", func() {
			os.MkdirAll(filepath.Join(root, "m/n/o"), 0o755)
			writeRandomFile(t, rng, filepath.Join(root, "m/n/o/x.go"))
			writeRandomFile(t, rng, filepath.Join(root, "m/.y.txt"))
		}},
		{"mv dir", func() {
			if err := os.Rename(filepath.Join(root, "m"), filepath.Join(root, "a/m2")); err != nil {
				t.Fatal(err)
			}
		}},
		{"rm", func() {
			os.RemoveAll(filepath.Join(root, "a/m2/n"))
			os.RemoveAll(filepath.Join(root, "c"))
		}},
		{"touch", func() {
			// Only the time changes: the file comes first in a list by time.
			files, _ := filepath.Glob(filepath.Join(root, "*", "*"))
			for _, f := range files {
				if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
					future := fi.ModTime().Add(time.Hour)
					if err := os.Chtimes(f, future, future); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
			t.Fatal("no file to touch")
		}},
		{"chmod", func() { os.Chmod(filepath.Join(root, "a/b"), 0) }},
		{"chmod back", func() { os.Chmod(filepath.Join(root, "a/b"), 0o755) }},
	}
	for i := range 10 {
		steps = append(steps, struct {
			name string
			do   func()
		}{fmt.Sprintf("random %d", i), func() { mutateFiles(t, rng, root) }})
	}
	for _, s := range steps {
		s.do()
		if n := compareFind(t, ix, root, s.name); n == 0 {
			t.Fatalf("%s: no find answered from the live list", s.name)
		}
		if sub := filepath.Join(root, "a"); isDir(sub) {
			compareFind(t, ix, sub, s.name+", in a/")
		}
	}
}
