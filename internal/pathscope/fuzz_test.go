package pathscope

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The fuzzed tree: each entry of treeSlots may become a directory, a file or a symlink to
// one of linkTargets, as the fuzzer's bytes decide. "app" is the allowed root; "app-x"
// shares its prefix and "out" is outside.
var (
	treeSlots = []string{
		"app/a", "app/b", "app/a/c", "app/b/d", "app/a/c/e",
		"app-x", "app-x/f", "out", "out/g", "out/g/h",
	}
	linkTargets = []string{
		".", "..", "../..", "../../..", "a", "b/d", "c/e", "../app-x", "../out", "../../out/g",
		"$ROOT/out", "$ROOT/app", "$ROOT/app/a", "$ROOT", "/", "missing/x", "a/../..", "../app/../out",
		"g/../../app", "$ROOT/app-x/f/z",
	}
	pathParts = []string{"a", "b", "c", "d", "e", "f", "g", "h", "..", ".", "app", "out", "app-x", "new", ""}
)

// buildTree makes the tree that spec describes under root: one byte per slot, in order,
// so that parents come first. A slot whose parent is not a directory stays empty.
func buildTree(t *testing.T, root string, spec []byte) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, slot := range treeSlots {
		if i >= len(spec) {
			break
		}
		p := filepath.Join(root, slot)
		if fi, err := os.Lstat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			continue
		}
		var err error
		switch b := spec[i]; {
		case b%8 == 0:
			continue
		case b%8 == 1:
			err = os.Mkdir(p, 0o755)
		case b%8 == 2:
			err = os.WriteFile(p, nil, 0o644)
		default:
			target := strings.ReplaceAll(linkTargets[int(b/8)%len(linkTargets)], "$ROOT", root)
			err = os.Symlink(target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// pathFrom makes the path to resolve from the fuzzer's bytes: the first picks the working
// directory and whether the path is absolute, the rest pick components.
func pathFrom(root string, b []byte) (cwd, path string) {
	cwd = filepath.Join(root, "app")
	if len(b) == 0 {
		return cwd, "."
	}
	if b[0]&1 == 1 {
		cwd = filepath.Join(root, "out") // a shell can cd out of the allowed root
	}
	var parts []string
	if b[0]&2 == 2 {
		parts = append(parts, root)
	}
	for _, c := range b[1:] {
		parts = append(parts, pathParts[int(c)%len(pathParts)])
	}
	path = strings.Join(parts, "/")
	if path == "" {
		path = "."
	}
	return cwd, path
}

// errLoop is the reference's answer for a chain of links too long to follow.
var errLoop = errors.New("too many links")

// refResolve is a deliberately simple reference for Resolve's semantics: the path is
// cleaned as written, then walked one component at a time from the root; at a symlink
// the walk starts again from the root with the link's target (cleaned, against the real
// directory holding the link) in place of the walked part. Below a missing component, or
// a file used as a directory, the rest is kept as written.
func refResolve(abs string, hops int) (string, error) {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(abs), "/"), "/")
	cur := "/"
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops == maxLinks {
			return "", errLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		target = filepath.Clean(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		return refResolve(filepath.Join(append([]string{target}, parts[i+1:]...)...), hops+1)
	}
	return cur, nil
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// FuzzResolveTree checks Resolve on fuzz-made trees of directories and symlinks against
// refResolve: an allowed path is where the reference lands and lies under the root, and
// is really there when it exists; a refused one lands outside the root, or nowhere.
func FuzzResolveTree(f *testing.F) {
	// Seeds: slot bytes (0 empty, 1 dir, 2 file, 8k+3.. link to linkTargets[k]), path bytes.
	f.Add([]byte{1, 1, 1, 1, 2}, []byte{0, 0, 2, 4})                                // app/a/c/e, a file
	f.Add([]byte{8*8 + 3, 1}, []byte{0, 0, 8})                                      // app/a -> ../out, then a/..
	f.Add([]byte{1, 1, 8*1 + 3}, []byte{0, 0, 2, 8, 8, 8})                          // app/a/c -> .., then a/c/../../..
	f.Add([]byte{8*4 + 3, 8*4 + 3}, []byte{0, 0})                                   // a -> a: a loop
	f.Add([]byte{8*10 + 3, 0, 0, 0, 0, 1, 2, 1}, []byte{0, 0, 6})                   // a -> $ROOT/out
	f.Add([]byte{8*15 + 3, 8*16 + 3}, []byte{0, 1, 5})                              // a dangling link, b -> a/../..
	f.Add([]byte{1, 0, 8*2 + 3}, []byte{0, 0, 2, 2, 8, 8, 8, 8})                    // c -> ../.. then climbing
	f.Add([]byte{8*7 + 3, 1, 0, 0, 0, 1, 2}, []byte{0, 0, 5})                       // a/f through app/a -> ../app-x
	f.Add([]byte{1, 1, 0, 0, 0, 1, 2}, []byte{2, 10, 8, 12, 5})                     // $ROOT/app/../app-x/f
	f.Add([]byte{8*19 + 3, 8*18 + 3, 0, 0, 0, 1, 2, 1}, []byte{1, 8, 10, 1, 13, 1}) // from out: ../app/b -> g/../../app
	f.Add([]byte{8*14 + 3, 8*13 + 3}, []byte{0, 0, 8, 8, 11})                       // a -> /, b -> $ROOT
	f.Fuzz(func(t *testing.T, spec, pathBytes []byte) {
		if len(spec) > len(treeSlots) || len(pathBytes) > 12 {
			return
		}
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		buildTree(t, root, spec)
		app := filepath.Join(root, "app")
		r, err := New(app, []string{app}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cwd, path := pathFrom(root, pathBytes)
		got, err := r.Resolve(cwd, path)
		want, refErr := refResolve(absUnder(cwd, path), 0)
		where := fmt.Sprintf("Resolve(%q, %q) in tree %v", strings.TrimPrefix(cwd, root), path, spec)
		switch {
		case err == nil:
			if !under(got, app) {
				t.Fatalf("%s = %q, outside the root %q", where, got, app)
			}
			if refErr != nil || got != want {
				t.Fatalf("%s = %q, want %q (reference error %v)", where, got, want, refErr)
			}
			if real, err := filepath.EvalSymlinks(got); err == nil && !under(real, app) {
				t.Fatalf("%s = %q, which really is %q, outside the root", where, got, real)
			}
		case errors.Is(err, ErrDenied):
			if refErr == nil && under(want, app) {
				t.Fatalf("%s refused (%v), but the reference lands at %q, inside the root", where, err, want)
			}
		default:
			if refErr == nil {
				t.Fatalf("%s failed (%v), but the reference lands at %q", where, err, want)
			}
		}
	})
}
