package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mjkoo/boris/internal/testutil"
)

// tree is a workspace as a map: path → its kind, mode and content or target.
var tree = testutil.Tree

func sh(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func openTracker(t testing.TB, root, state string) *Tracker {
	t.Helper()
	tr, err := Open(Options{Root: root, Dir: state, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if err := tr.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	return tr
}

// setup and the command mutations a checkpoint must undo byte for byte are shared with the
// tools' tests: each mutation runs after setup, is captured, and rewound; the tree must then
// be what it was, and rewinding the rewind must bring back what the command made.
const setup = testutil.MutationSetup

var mutations = testutil.Mutations

func TestCommandMutationsRewind(t *testing.T) {
	t.Parallel()
	for _, m := range mutations {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			sh(t, root, setup)
			tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
			before := tree(t, root)
			sh(t, root, m.Script)
			after := tree(t, root)
			cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash", Call: m.Script})
			if err != nil {
				t.Fatal(err)
			}
			if cp == nil {
				t.Fatalf("Capture after %q = nil, want a checkpoint", m.Script)
			}
			if u := cp.Unrestorable(); len(u) > 0 {
				t.Errorf("unrestorable: %v", u)
			}
			dry, err := tr.Rewind(t.Context(), cp.ID, nil, true, false, CallInfo{Tool: "rewind"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(after, tree(t, root)); diff != "" {
				t.Fatalf("a dry run changed the tree (-want +got):\n%s", diff)
			}
			plan, err := tr.Rewind(t.Context(), cp.ID, nil, false, false, CallInfo{Tool: "rewind"})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Actions) != len(dry.Actions) {
				t.Errorf("rewind did %d actions, its dry run said %d", len(plan.Actions), len(dry.Actions))
			}
			if len(plan.Failed) > 0 {
				t.Errorf("failed: %v", plan.Failed)
			}
			if diff := cmp.Diff(before, tree(t, root)); diff != "" {
				t.Fatalf("after rewind to %s (-want +got):\n%s", cp.ID, diff)
			}
			// Nothing is left to capture: the rewind's own writes are known.
			if c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
				t.Errorf("Capture after the rewind = %+v, %v; want nothing", c, err)
			}
			// The rewind is undone by rewinding to its rescue checkpoint.
			if _, err := tr.Rewind(t.Context(), plan.Rescue.ID, nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(after, tree(t, root)); diff != "" {
				t.Fatalf("after undoing the rewind (-want +got):\n%s", diff)
			}
		})
	}
}

// With no file events, every capture walks the tree and finds the same changes.
func TestCommandMutationsRewindByWalk(t *testing.T) {
	t.Parallel()
	for _, m := range mutations {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			sh(t, root, setup)
			tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
			tr.mu.Lock()
			tr.walkAll = true // as after a queue overflow
			tr.mu.Unlock()
			before := tree(t, root)
			sh(t, root, m.Script)
			cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
			if err != nil || cp == nil {
				t.Fatalf("Capture = %v, %v", cp, err)
			}
			if _, err := tr.Rewind(t.Context(), cp.ID, nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, tree(t, root)); diff != "" {
				t.Fatalf("after rewind (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNothingChangedNoCheckpoint(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, setup)
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	sh(t, root, "cat crlf.txt > /dev/null; ls -R > /dev/null")
	if c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
		t.Errorf("Capture = %+v, %v; want nothing", c, err)
	}
}

func TestRewindRefusesOutsideChanges(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, setup)
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	sh(t, root, "echo one > plain.txt")
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatal(cp, err)
	}
	sh(t, root, "echo two > plain.txt") // no capture for a call: made outside
	_, err = tr.Rewind(t.Context(), cp.ID, nil, false, false, CallInfo{Tool: "rewind"})
	var ce *ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "plain.txt") {
		t.Fatalf("Rewind = %v, want a conflict naming plain.txt", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "plain.txt")); string(got) != "two\n" {
		t.Errorf("a refused rewind wrote plain.txt: %q", got)
	}
	if _, err := tr.Rewind(t.Context(), cp.ID, nil, false, true, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "plain.txt")); string(got) != "no newline" {
		t.Errorf("forced rewind: plain.txt = %q", got)
	}
}

func TestIgnoredListedNotKept(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir -p node_modules/x && echo a > node_modules/x/i.js")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	sh(t, root, "rm -rf node_modules && mkdir node_modules")
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatal(cp, err)
	}
	u := cp.Unrestorable()
	if len(u) != 1 || u[0].Path != "node_modules" {
		t.Errorf("unrestorable = %+v, want node_modules", u)
	}
}

func TestGitDirNeverWritten(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir .git && echo ref > .git/HEAD && echo a > a.txt")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	sh(t, root, "echo b > a.txt && echo changed > .git/HEAD && echo x > .git/new")
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatal(cp, err)
	}
	for _, ch := range cp.Changes {
		if strings.HasPrefix(ch.Path, ".git") {
			t.Errorf("checkpoint holds %s", ch.Path)
		}
	}
	if _, err := tr.Rewind(t.Context(), cp.ID, nil, false, true, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, ".git", "HEAD")); string(got) != "changed\n" {
		t.Errorf(".git/HEAD = %q: the rewind wrote .git", got)
	}
}

func TestTooManyFilesTurnsCheckpointsOff(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "for i in $(seq 1 20); do echo $i > f$i; done")
	tr, err := Open(Options{Root: root, Dir: filepath.Join(t.TempDir(), "state"), MaxFiles: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Off(t.Context()); !errors.Is(err, ErrTooManyFiles) {
		t.Fatalf("Off = %v, want ErrTooManyFiles", err)
	}
	sh(t, root, "echo x > f1")
	if c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
		t.Errorf("Capture = %v, %v; want nothing", c, err)
	}
	if _, err := tr.Rewind(t.Context(), "cp-1", nil, true, false, CallInfo{}); !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("Rewind = %v, want ErrTooManyFiles", err)
	}
}

// TestBaselineYields: the baseline waits in Options.Yield between directories and files
// (Boris waits there while a search runs), and is not ready while Yield holds it; a
// capture, which a call waits for, never calls it, even one that walks the whole tree.
func TestBaselineYields(t *testing.T) {
	root, tr, calls, first, held := heldBaseline(t, 20)
	t.Cleanup(func() { tr.Close() })
	select {
	case <-first:
	case <-tr.Ready():
		t.Fatal("the baseline was built without calling Yield")
	}
	select {
	case <-tr.Ready():
		t.Fatal("the baseline is ready while Yield holds it")
	default:
	}
	close(held)
	if err := tr.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	// 5 directories and 20 files: one call before each.
	if n := calls.Load(); n < 25 {
		t.Fatalf("Yield called %d times, want one before each of 5 directories and 20 files", n)
	}
	before := calls.Load()
	if err := os.WriteFile(filepath.Join(root, "d0", "new"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.walkAll = true // as after a queue overflow: the capture walks the whole tree
	tr.mu.Unlock()
	cp, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil || cp == nil {
		t.Fatalf("capture: %v, %v; want a checkpoint of the new file", cp, err)
	}
	if n := calls.Load(); n != before {
		t.Fatalf("a capture called Yield %d times", n-before)
	}
}

// TestCloseStopsBaseline: closing the tracker while the baseline is being built stops the
// build where it is, instead of waiting for it to read the whole workspace (which holds
// the lock on the checkpoints, so a Boris started next would find them taken).
func TestCloseStopsBaseline(t *testing.T) {
	_, tr, calls, first, held := heldBaseline(t, 200)
	<-first // the baseline is under way, held in Yield
	closed := make(chan error, 1)
	go func() { closed <- tr.Close() }()
	select {
	case <-tr.stopped:
	case <-time.After(10 * time.Second):
		close(held)
		t.Fatal("Close did not tell the baseline to stop before waiting for it")
	}
	close(held)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	// Each walker held in Yield finishes the directory it took, and nothing more.
	if n := calls.Load(); n > 8 {
		t.Fatalf("the baseline went on after Close: Yield called %d times, want at most one per walker", n)
	}
	if err := tr.Off(t.Context()); err == nil {
		t.Fatal("Off() = nil after the baseline was stopped; want an error saying checkpoints are closed")
	}
}

// heldBaseline opens a tracker of a new tree of the given number of files in 4
// directories, whose Options.Yield counts its calls, closes first at the first, and waits
// until held is closed.
func heldBaseline(t *testing.T, files int) (root string, tr *Tracker, calls *atomic.Int64, first, held chan struct{}) {
	t.Helper()
	root = t.TempDir()
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%4))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("content\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	calls = new(atomic.Int64)
	held, first = make(chan struct{}), make(chan struct{})
	var once sync.Once
	tr, err := Open(Options{Root: root, Dir: t.TempDir(), MaxFileSize: 1 << 20, Yield: func() {
		calls.Add(1)
		once.Do(func() { close(first) })
		<-held
	}})
	if err != nil {
		t.Fatal(err)
	}
	return root, tr, calls, first, held
}
