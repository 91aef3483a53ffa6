package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loseEvents throws away the file events queued, as an overflow of the queue would (the
// watches stay), and makes the next capture walk the tree.
func loseEvents(t *testing.T, tr *Tracker) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.w == nil {
		t.Fatal("no file events to lose")
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(tr.w.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
	}
	tr.walkAll = true
}

// captured captures a call's changes and returns their paths, sorted.
func captured(t *testing.T, tr *Tracker) []string {
	t.Helper()
	c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	return changedPaths(c)
}

func changedPaths(c *Checkpoint) []string {
	var paths []string
	if c != nil {
		for _, ch := range c.Changes {
			paths = append(paths, ch.Path)
		}
	}
	slices.Sort(paths)
	return paths
}

// A walk after lost events leaves the watches of unchanged directories as they are, but a
// directory made again or moved in meanwhile is watched again, under its new name: the
// changes made in it afterwards are found from events, under the right paths.
func TestWalkAfterLostEventsWatchesNewDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir -p made/sub moved same && echo 1 > made/sub/f && echo 2 > moved/g && echo 3 > same/h")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))

	sh(t, root, "rm -rf made && mkdir -p made/sub && mv moved renamed")
	loseEvents(t, tr)
	want := []string{"made/sub/f", "moved", "moved/g", "renamed", "renamed/g"}
	if got := captured(t, tr); !slices.Equal(got, want) {
		t.Fatalf("walk found %q, want %q", got, want)
	}

	// No walk now: only events can name these.
	sh(t, root, "echo 4 > made/new && echo 5 > made/sub/new && echo 6 > renamed/new && echo 7 > same/new")
	want = []string{"made/new", "made/sub/new", "renamed/new", "same/new"}
	if got := captured(t, tr); !slices.Equal(got, want) {
		t.Fatalf("after the walk, events named %q, want %q", got, want)
	}
}

// A directory whose watch the kernel dropped while the event saying so was lost (as when
// it is removed and made again with the same inode) is watched again by the walk once
// it changed.
func TestWalkAfterLostEventsWatchesChangedDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir -p d && echo 1 > d/f")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	tr.mu.Lock()
	wd, ok := tr.w.byPath["d"]
	tr.mu.Unlock()
	if !ok {
		t.Fatal("d is not watched")
	}
	if _, err := unix.InotifyRmWatch(tr.w.fd, uint32(wd)); err != nil {
		t.Fatal(err)
	}
	sh(t, root, "echo 2 > d/g")
	loseEvents(t, tr) // the IN_IGNORED too
	if got, want := captured(t, tr), []string{"d/g"}; !slices.Equal(got, want) {
		t.Fatalf("walk found %q, want %q", got, want)
	}
	sh(t, root, "echo 3 > d/h")
	if got, want := captured(t, tr), []string{"d/h"}; !slices.Equal(got, want) {
		t.Fatalf("after the walk, events named %q, want %q", got, want)
	}
}

// A walk leaves no directory open, whether it ends or stops at MaxFiles with directories
// still to read (some open, some not: more than the walk keeps open at once).
func TestWalkLeavesNoDirectoryOpen(t *testing.T) {
	root := t.TempDir()
	sh(t, root, "mkdir -p d{1..600}/sub && touch d{1..600}/sub/f")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	before := open()
	if found, tooMany := tr.scan(tr.base, 1000); len(found) != 0 || tooMany {
		t.Fatalf("a walk of an unchanged tree found %d paths, tooMany %v", len(found), tooMany)
	}
	if n := open(); n != before {
		t.Errorf("%d descriptors open after a walk, %d before", n, before)
	}
	tr.opts.MaxFiles = 100
	if _, tooMany := tr.scan(tr.base, 1001); !tooMany {
		t.Fatal("a walk past MaxFiles did not stop")
	}
	if n := open(); n != before {
		t.Errorf("%d descriptors open after a walk stopped at MaxFiles, %d before", n, before)
	}
}

// A walk reads again only the directories whose times changed, and finds every change all
// the same: a file made, removed or renamed in a directory (read again), a file rewritten
// in place and one made in a subdirectory of a directory whose names are unchanged (not
// read again: its names are the ones the baseline read).
func TestWalkReadsOnlyChangedDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir -p d e/sub && echo 1 > d/a && echo 2 > d/b && echo 3 > e/f && echo 4 > e/sub/g")
	// Times an hour old: a change sets the directory's to now, whatever the clock's tick.
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{".", "d", "e", "e/sub"} {
		if err := os.Chtimes(filepath.Join(root, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	tr.mu.Lock()
	tr.racy = -time.Hour // names read a moment after their directory changed are used all the same
	tr.mu.Unlock()

	loseEvents(t, tr)
	if c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
		t.Fatalf("a walk of an unchanged tree: %v, %v", c, err)
	}
	if tr.listed != 0 {
		t.Fatalf("a walk of an unchanged tree read %d directories, want none", tr.listed)
	}

	sh(t, root, "echo 5 > d/new && rm d/a && mv d/b d/c && echo 6 >> e/f && echo 7 > e/sub/g2")
	loseEvents(t, tr)
	want := []string{"d/a", "d/b", "d/c", "d/new", "e/f", "e/sub/g2"}
	if got := captured(t, tr); !slices.Equal(got, want) {
		t.Fatalf("walk found %q, want %q", got, want)
	}
	if tr.listed != 2 {
		t.Errorf("the walk read %d directories, want 2 (d and e/sub)", tr.listed)
	}
}

// A directory whose names were read too soon after it last changed is read again, even
// with its times as they were then: a change made in the same tick of the file system's
// clock leaves them so.
func TestWalkRereadsNamesReadInTheSameTick(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir d && echo 1 > d/a && echo 2 > d/b")
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	// The baseline read d's names right after d was made.
	sh(t, root, "echo 3 > d/new && rm d/a && mv d/b d/c")
	// Make d's times those the baseline saw and its names were read with, as if these
	// changes had come in the same tick.
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, "d"), &st); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	n := *tr.base["d"]
	if n.list == nil {
		tr.mu.Unlock()
		t.Fatal("the baseline kept no names of d")
	}
	l := *n.list
	l.ino, l.mtime, l.ctime = st.Ino, st.Mtim.Nano(), st.Ctim.Nano()
	n.ino, n.mtime, n.ctime, n.list = st.Ino, st.Mtim.Nano(), st.Ctim.Nano(), &l
	tr.base.set("d", &n)
	tr.mu.Unlock()

	loseEvents(t, tr)
	want := []string{"d/a", "d/b", "d/c", "d/new"}
	if got := captured(t, tr); !slices.Equal(got, want) {
		t.Fatalf("walk found %q, want %q", got, want)
	}
}

// A walk that uses a directory's names also uses the nodes it found for them, but not one
// the baseline has replaced since: a file whose change events named, or a rewind put
// back, is found as it now is, and a walk after that finds nothing changed.
func TestWalkAfterChangesFoundOtherwise(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sh(t, root, "mkdir d && echo 1 > d/a && echo 2 > d/b")
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{".", "d"} {
		if err := os.Chtimes(filepath.Join(root, d), old, old); err != nil {
			t.Fatal(err)
		}
	}
	tr := openTracker(t, root, filepath.Join(t.TempDir(), "state"))
	tr.mu.Lock()
	tr.racy = -time.Hour
	tr.mu.Unlock()
	walk := func(what string, listed int) *Checkpoint {
		t.Helper()
		loseEvents(t, tr)
		c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		if tr.listed != listed {
			t.Fatalf("%s: the walk read %d directories, want %d", what, tr.listed, listed)
		}
		return c
	}
	walk("unchanged", 0)

	sh(t, root, "echo 3 >> d/a")
	c, err := tr.Capture(t.Context(), CallInfo{Tool: "bash"}) // from events
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changedPaths(c), []string{"d/a"}; !slices.Equal(got, want) {
		t.Fatalf("events named %q, want %q", got, want)
	}
	if c := walk("after events", 0); c != nil {
		t.Fatalf("a walk after events found %q, want nothing", changedPaths(c))
	}

	if _, err := tr.Rewind(t.Context(), c.ID, nil, false, false, CallInfo{Tool: "rewind"}); err != nil {
		t.Fatal(err)
	}
	// The rewind renamed a file into place: d is read again.
	if c := walk("after a rewind", 1); c != nil {
		t.Fatalf("a walk after a rewind found %q, want nothing", changedPaths(c))
	}
	sh(t, root, "echo 4 >> d/b")
	if c := walk("after a change", 0); !slices.Equal(changedPaths(c), []string{"d/b"}) {
		t.Fatalf("a walk after a change found %q, want d/b", changedPaths(c))
	}
	if c := walk("after a walk", 0); c != nil {
		t.Fatalf("a walk after a walk found %q, want nothing", changedPaths(c))
	}
}
