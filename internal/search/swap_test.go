package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// swapScope allows everything, and the first time the walk asks about a name it swaps that
// name for a symlink to outside: after the directory was listed, before its file or
// subdirectory is opened.
type swapScope struct {
	openScope
	swap map[string]string // path -> link target
	once sync.Map
}

func (s *swapScope) Hidden(abs string) bool {
	if target, ok := s.swap[abs]; ok {
		if _, done := s.once.LoadOrStore(abs, true); !done {
			if err := os.Rename(abs, abs+".moved"); err != nil {
				panic(err)
			}
			if err := os.Symlink(target, abs); err != nil {
				panic(err)
			}
		}
	}
	return false
}

// TestSearchOpensWhatItListed: a file or directory swapped for a symlink between the
// directory listing and its open is not followed by grep or find.
func TestSearchOpensWhatItListed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(out, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(root, "a.txt"):            "needle inside\n",
		filepath.Join(root, "sub/b.txt"):        "needle inside\n",
		filepath.Join(out, "secret.txt"):        "needle OUTSIDE\n",
		filepath.Join(out, "dir/outside-b.txt"): "needle OUTSIDE\n",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scope := &swapScope{swap: map[string]string{
		filepath.Join(root, "a.txt"): filepath.Join(out, "secret.txt"),
		filepath.Join(root, "sub"):   filepath.Join(out, "dir"),
	}}
	res, err := Grep(t.Context(), scope, root, GrepOptions{Pattern: "needle", Mode: Content})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if strings.Contains(fmt.Sprint(f.Output), "OUTSIDE") {
			t.Errorf("grep read %s from outside: %v", f.Path, f.Output)
		}
	}
	if res.Skipped.Unreadable == 0 {
		t.Errorf("grep skipped nothing as unreadable: %+v", res.Skipped)
	}

	// find: the swapped directory is not entered.
	for _, p := range []string{filepath.Join(root, "sub"), filepath.Join(root, "a.txt")} {
		os.Remove(p)
		if err := os.Rename(p+".moved", p); err != nil {
			t.Fatal(err)
		}
	}
	scope = &swapScope{swap: map[string]string{filepath.Join(root, "sub"): filepath.Join(out, "dir")}}
	fr, err := Find(t.Context(), scope, root, FindOptions{Pattern: "**/*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fr.Entries {
		if strings.Contains(e.Path, "outside-b") {
			t.Errorf("find listed %s, inside a directory outside", e.Path)
		}
	}
}
