package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crashBefore and crashMutation make the workspace of the crash tests: files in two
// directories, then a command's worth of changes to them: writes, removals, additions,
// and a file replaced by a directory.
const crashBefore = `mkdir -p a b && for i in $(seq 1 20); do printf 'before %d\r\n' $i > a/f$i; printf 'b%d' $i > b/g$i; done`
const crashMutation = crashMutation1 + "; " + crashMutation2

// crashMutation1 and crashMutation2 are crashMutation in two calls.
const (
	crashMutation1 = `for i in $(seq 1 10); do printf 'after %d\n' $i > a/f$i; done`
	crashMutation2 = `rm b/g1 b/g2 b/g3; for i in 1 2 3; do echo new > a/n$i; done; rm a/f20 && mkdir a/f20 && echo in > a/f20/x`
)

// TestCrashChild is the process the crash tests kill; it does nothing in a plain run.
func TestCrashChild(t *testing.T) {
	root, state, do := os.Getenv("CRASH_ROOT"), os.Getenv("CRASH_STATE"), os.Getenv("CRASH_DO")
	if root == "" {
		t.Skip("run by TestCrashAtEveryPoint")
	}
	tr := openTracker(t, root, state)
	switch do {
	case "capture":
		sh(t, root, crashMutation)
		if _, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil {
			t.Fatal(err)
		}
	case "capture2": // the second pack goes to the file made ahead of it
		sh(t, root, crashMutation1)
		if _, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil {
			t.Fatal(err)
		}
		sh(t, root, crashMutation2)
		if _, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil {
			t.Fatal(err)
		}
	case "rewind":
		if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("%s passed crash point %s without stopping", do, crashAt)
}

// TestCrashAtEveryPoint kills Boris (SIGKILL) at each point of a capture and of a rewind
// where a kill could leave something half done, and checks that every file is wholly
// before or wholly after, that the store and journal open whole, and that the next open
// finishes an interrupted rewind, which can then itself be undone.
func TestCrashAtEveryPoint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		do, point string
		after     int
		rewound   bool // the rewind is done once reopened
	}{
		{"capture", "pack-before-link", 1, false}, // the record and its contents, one file
		{"capture2", "pack-before-link", 2, false},
		{"rewind", "journal-before-rename", 1, false}, // recording the rewind
		{"rewind", "rewind-recorded", 1, true},
		{"rewind", "rewind-file-written", 1, true},
		{"rewind", "rewind-file-written", 7, true},
		{"rewind", "rewind-half-applied", 1, true},
		{"rewind", "journal-before-rename", 2, true}, // marking the rewind done
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/%d", c.do, c.point, c.after), func(t *testing.T) {
			t.Parallel()
			root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
			sh(t, root, crashBefore)
			before := tree(t, root)
			// The child's baseline finds every content in the store already, so it stops
			// only in the capture or the rewind.
			tr, err := Open(Options{Root: root, Dir: state})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.WaitReady(t.Context()); err != nil {
				t.Fatal(err)
			}
			tr.Close()
			if c.do == "rewind" {
				tr, err := Open(Options{Root: root, Dir: state})
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.WaitReady(t.Context()); err != nil {
					t.Fatal(err)
				}
				sh(t, root, crashMutation)
				if cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); err != nil || cp == nil || cp.ID != "cp-1" {
					t.Fatalf("Capture = %v, %v", cp, err)
				}
				tr.Close()
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CRASH_ROOT="+root, "CRASH_STATE="+state, "CRASH_DO="+c.do,
				"BORIS_CHECKPOINT_CRASH="+c.point, fmt.Sprint("BORIS_CHECKPOINT_CRASH_AFTER=", c.after))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v, want killed at %s\n%s", err, c.point, out)
			}
			// Every file is wholly before or wholly after.
			after := mutated(t)
			for p, got := range tree(t, root) {
				if strings.Contains(p, tempPrefix) {
					continue // a rewind's temporary file, removed at the next open
				}
				if got != before[p] && got != after[p] {
					t.Errorf("%s = %s: neither before (%s) nor after (%s)", p, got, before[p], after[p])
				}
			}
			packs(t, state) // a kill never leaves a pack torn
			tr, err = Open(Options{Root: root, Dir: state})
			if err != nil {
				t.Fatalf("reopening after the kill: %v", err)
			}
			defer tr.Close()
			if err := tr.WaitReady(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkStore(t, filepath.Join(state, "objects"))
			want := after
			if c.rewound {
				want = before
			}
			if strings.HasPrefix(c.do, "capture") {
				want = after
				if n := len(tr.List(0)); c.do == "capture2" && n != 1 {
					t.Errorf("%d checkpoints after reopening, want the first capture's", n)
				}
			}
			if diff := cmp.Diff(want, tree(t, root)); diff != "" {
				t.Fatalf("after reopening (-want +got):\n%s", diff)
			}
			for _, cp := range tr.List(0) {
				if cp.Pending {
					t.Errorf("%s is still pending after reopening", cp.ID)
				}
			}
			if c.rewound {
				// The finished rewind is undone by rewinding to the checkpoint it made.
				if _, err := tr.Rewind(t.Context(), "cp-2", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(after, tree(t, root)); diff != "" {
					t.Fatalf("after undoing the finished rewind (-want +got):\n%s", diff)
				}
			} else if c.do == "rewind" {
				if _, err := tr.Rewind(t.Context(), "cp-1", nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Fatalf("rewinding again (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// mutated is the tree crashMutation makes of crashBefore's.
func mutated(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	sh(t, dir, crashBefore+"\n"+crashMutation)
	return tree(t, dir)
}

// checkStore checks that every content in the store is whole and named by its digest, and
// that no temporary file is left.
func checkStore(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Contains(rel, tempMark) {
			t.Errorf("store: %s left", rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if Digest(data) != strings.ReplaceAll(rel, "/", "") {
			t.Errorf("store: %s holds content %s", rel, Digest(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
