package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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

// indexed makes ix the indexes of q, closed and waited for when the test ends, and
// searches root with q once, so that an index and its live list are built, and waits
// for them.
func indexed(t *testing.T, ix *Indexes, root string, q *GrepOptions) {
	t.Helper()
	t.Cleanup(func() {
		ix.Close()
		ix.Wait()
	})
	q.Indexes = ix
	if _, err := Grep(t.Context(), openScope{}, root, *q); err != nil {
		t.Fatal(err)
	}
	ix.Wait()
}

// compareAll runs every query class by scan and through ix and fails on a difference.
func compareAll(t *testing.T, ix *Indexes, root, state string) {
	t.Helper()
	compareIn(t, ix, root, state)
	if sub := filepath.Join(root, "a"); isDir(sub) {
		compareIn(t, ix, sub, state+", in a/")
	}
	if sub := filepath.Join(root, "node_modules"); isDir(sub) {
		compareIn(t, ix, sub, state+", in node_modules/") // not in the list: walked
	}
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

func compareIn(t *testing.T, ix *Indexes, root, state string) {
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
	tinyBlocks(t)
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
		ix.mu.Lock()
		defer ix.mu.Unlock()
		t.Fatalf("no live list after the build: %v", ix.trees[root].liveErr)
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
		t.Logf("%s: %d searches answered from the live list at once", s.name, answered)
		// Let any list broken by the step be built again, then compare once more.
		ix.Wait()
		before = ix.liveAnswers.Load()
		compareAll(t, ix, root, s.name+", once built again")
		if ix.liveAnswers.Load() == before {
			t.Errorf("%s: no search answered from the live list once built again (%d before)", s.name, answered)
		}
	}
}

// liveTree writes a tree of 40 files, one of them holding rareIdent, and returns it with
// the scan's answer to q.
func liveTree(t *testing.T, q GrepOptions) (string, *GrepResult) {
	t.Helper()
	root := t.TempDir()
	for i := range 40 {
		body := "nothing here\n"
		if i == 7 {
			body = "a rareIdent here\n"
		}
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%d", i%4)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("d%d/f%02d.txt", i%4, i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil || want.MatchedFiles != 1 {
		t.Fatalf("scan: %+v, %v", want, err)
	}
	return root, want
}

// sameAs fails unless got is want but for how the index was used.
func sameAs(t *testing.T, state string, got, want *GrepResult) {
	t.Helper()
	g := *got
	g.Index, g.Unindexed, g.Live = Scanned, 0, false
	if !reflect.DeepEqual(&g, want) {
		t.Fatalf("%s: %+v, want %+v", state, got, want)
	}
}

// TestLiveBuildIsOffTheRequestPath holds the build of the live list once the index is
// ready and sees grep answer by walking meanwhile, then from the list once it is let go.
func TestLiveBuildIsOffTheRequestPath(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	started, release := make(chan struct{}), make(chan struct{})
	ix := &Indexes{MinFiles: 20, heldLive: func() {
		close(started)
		<-release
	}}
	defer ix.Wait()
	defer ix.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	q.Indexes = ix
	if _, err := Grep(t.Context(), openScope{}, root, q); err != nil {
		t.Fatal(err)
	}
	<-started // the index is ready, and the live list's build is held
	held, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	if held.Live || held.Index != Indexed {
		t.Fatalf("while the live list is built: %+v, want the index used by a walk", held)
	}
	sameAs(t, "held", held, want)
	close(release)
	ix.Wait()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Live || got.Index != Indexed {
		t.Fatalf("after the build: %+v, want the live list", got)
	}
	sameAs(t, "live", got, want)
}

// TestLiveOverflowWalks: once events are lost, grep walks (and is right), and a new live
// list is built in the background.
func TestLiveOverflowWalks(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	l := ix.liveOf(root)
	if l == nil {
		t.Fatal("no live list")
	}
	// A write the lost events would have told of.
	if err := os.WriteFile(filepath.Join(root, "d1/new.txt"), []byte("rareIdent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.handle(event{overflow: true}, nil)
	l.mu.Unlock()
	want, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent"})
	if err != nil || want.MatchedFiles != 2 {
		t.Fatalf("scan: %+v, %v", want, err)
	}
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	if got.Live {
		t.Fatalf("after an overflow: %+v, want a walk", got)
	}
	sameAs(t, "overflow", got, want)
	ix.Wait()
	if l2 := ix.liveOf(root); l2 == nil || l2 == l {
		t.Fatal("no new live list after the overflow")
	}
	got, err = Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Live {
		t.Fatalf("once built again: %+v, want the live list", got)
	}
	sameAs(t, "built again", got, want)
}

// TestLiveWatchLimitWalks: with too few watches for the tree, grep walks, and no live list
// is built again until the next index.
func TestLiveWatchLimitWalks(t *testing.T) {
	n := maxWatches
	t.Cleanup(func() { maxWatches = n }) // after the indexes' goroutines end (indexed)
	maxWatches = 2
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	builds := 0
	ix := &Indexes{MinFiles: 20, heldLive: func() { builds++ }}
	defer ix.Wait()
	defer ix.Close()
	q.Indexes = ix
	for i := range 3 {
		got, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Live {
			t.Fatalf("search %d: %+v, want a walk", i, got)
		}
		sameAs(t, "no watches", got, want)
		ix.Wait()
	}
	if builds != 1 {
		t.Fatalf("%d builds of the live list, want 1", builds)
	}
}

// TestLiveIgnoreChangeRelists: an ignore file created, changed or deleted, at the top or
// below, has its directory listed again, and the next search is answered from the live
// list, as a scan answers it.
func TestLiveIgnoreChangeRelists(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	if err := os.MkdirAll(filepath.Join(root, "d2/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("d2/sub/g%d.txt", i)), []byte("rareIdent\n"), 0o644)
	}
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	l := ix.liveOf(root)
	steps := []struct{ file, data string }{
		{"d2/.gitignore", "g1.txt\n"},
		{".gitignore", "sub/\n"},
		{"d2/.gitignore", "g2.txt\n!sub/\n"},
		{".gitignore", ""},
		{"d2/sub/.ignore", "g3.txt\n"},
		{"d2/.gitignore", "-"},
		{"d2/sub/.ignore", "-"},
	}
	for _, s := range steps {
		p := filepath.Join(root, s.file)
		if s.data == "-" {
			os.Remove(p)
		} else if err := os.WriteFile(p, []byte(s.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, hidden := range []bool{false, true} {
			q := q
			q.Hidden, q.Indexes = hidden, nil
			want, err := Grep(t.Context(), openScope{}, root, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Indexes = ix
			got, err := Grep(t.Context(), openScope{}, root, q)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Live {
				t.Fatalf("after %s = %q: %+v, want an answer from the live list", s.file, s.data, got)
			}
			sameAs(t, s.file+" = "+s.data, got, want)
		}
		if ix.liveOf(root) != l {
			t.Fatalf("after %s = %q: the live list was built again", s.file, s.data)
		}
	}
}

// TestLiveTempFileKeepsList: a file written as sed -i and editors write it (a temporary
// file, renamed over it) is read again by the next search, but the directory, whose
// entries are in the end what they were, does not make the tree's list anew, even when
// the events of the temporary file were taken while it existed.
func TestLiveTempFileKeepsList(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	l := caughtUp(t, ix, root)
	if _, err := Grep(t.Context(), openScope{}, root, q); err != nil {
		t.Fatal(err)
	}
	tmp, target := filepath.Join(root, "d1/sedAbc123"), filepath.Join(root, "d1/f01.txt")
	l.mu.Lock()
	gen, seq := l.gen, l.seq
	l.mu.Unlock()
	drained := onDrain(l)
	if err := os.WriteFile(tmp, []byte("a rareIdent too\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	for seen := false; !seen; {
		select {
		case <-drained:
		case <-deadline:
			t.Fatal("the event of the temporary file was not taken")
		}
		l.mu.Lock()
		seen = l.seq > seq // the file's event marked it (it may be indexed since)
		l.mu.Unlock()
	}
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent"})
	if err != nil || want.MatchedFiles != 2 {
		t.Fatalf("scan: %+v, %v; want 2 files", want, err)
	}
	sameAs(t, "after the rename", got, want)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen {
		t.Fatalf("the list was made anew (%d times) for a directory whose entries are as they were", l.gen-gen)
	}
}

// TestLiveListMadeWithTheIndex: the list of files the first search's filters give is made
// with the live list, so the next search with them finds it made.
func TestLiveListMadeWithTheIndex(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	l := ix.liveOf(root)
	if l == nil {
		t.Fatal("no live list")
	}
	lists := func() []*liveList {
		l.mu.Lock()
		defer l.mu.Unlock()
		var s []*liveList
		for _, ll := range l.lists {
			s = append(s, ll)
		}
		return s
	}
	made := lists()
	if len(made) != 1 {
		t.Fatalf("%d lists made with the live list, want 1", len(made))
	}
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Live {
		t.Fatalf("%+v, want the live list", got)
	}
	sameAs(t, "the next search", got, want)
	if after := lists(); len(after) != 1 || after[0] != made[0] {
		t.Fatal("the next search made its list anew")
	}
}

// TestLiveReadsFreshCandidatesAsKnown: a search from the live list reads the candidates
// the index holds fresh with what it knows of them; a scan, and a file changed since it
// was indexed, are read as any file.
func TestLiveReadsFreshCandidatesAsKnown(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	var mu sync.Mutex
	var known []string
	knownReadHook = func(p string) {
		mu.Lock()
		defer mu.Unlock()
		known = append(known, p)
	}
	defer func() { knownReadHook = nil }()
	took := func() []string {
		mu.Lock()
		defer mu.Unlock()
		k := known
		known = nil
		return k
	}
	scan, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "scan", scan, want)
	if k := took(); len(k) != 0 {
		t.Fatalf("a scan read %v as the index knows them", k)
	}
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	took()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil || !got.Live {
		t.Fatalf("%+v, %v; want the live list", got, err)
	}
	sameAs(t, "live", got, want)
	if k := took(); len(k) != 1 || k[0] != want.Files[0].Path {
		t.Fatalf("read as known: %v, want the one candidate %s", k, want.Files[0].Path)
	}
}

// TestLiveReadsFilesNotIndexed: files the index does not hold (one over maxIndexedFile,
// a symlink to a file) are read by every search from the live list, found, and said to
// make the answer partly indexed, in a directory no change touched as in one changed.
func TestLiveReadsFilesNotIndexed(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	big := filepath.Join(root, "d1", "big.txt")
	data := append(bytes.Repeat([]byte("filler line\n"), maxIndexedFile/12+1), "the last rareIdent\n"...)
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "d3", "f07.txt"), filepath.Join(root, "d2", "link.txt")); err != nil {
		t.Fatal(err)
	}
	want, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil || want.MatchedFiles != 3 {
		t.Fatalf("scan: %+v, %v", want, err)
	}
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	caughtUp(t, ix, root)
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil || !got.Live || got.Index != PartlyIndexed || got.Unindexed != 2 {
		t.Fatalf("%+v, %v; want the live list, partly indexed, two files not indexed", got, err)
	}
	sameAs(t, "live", got, want)
}

// TestLiveWaitHoldsNoThread: the goroutine that waits for file events, once an edit's
// events are taken, waits in the runtime's poller. Blocked in a system call instead, it would
// keep one of GOMAXPROCS from the next search until the runtime took it back, up to 10 ms
// later: a search right after an edit ran on one core fewer.
func TestLiveWaitHoldsNoThread(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	l := caughtUp(t, ix, root)
	drained := onDrain(l)
	if err := os.WriteFile(filepath.Join(root, "d1/f01.txt"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-drained:
	case <-time.After(time.Minute):
		t.Fatal("the edit's events were not taken")
	}
	// It passes through other states (a lock, a system call that does not wait) on its
	// way; one that blocks in a system call stays there.
	deadline, inSyscall := time.Now().Add(time.Minute), 0
	for {
		switch state := goroutineState(t, "search.(*live).follow("); state {
		case "IO wait":
			return
		case "syscall":
			if inSyscall++; inSyscall == 100 {
				t.Fatal("the event goroutine waits blocked in a system call, not in the poller")
			}
		default:
			inSyscall = 0
			if time.Now().After(deadline) {
				t.Fatalf("the event goroutine did not wait again (%q)", state)
			}
		}
		runtime.Gosched()
	}
}

// onDrain returns a channel that receives when events are taken from l's queue.
func onDrain(l *live) <-chan struct{} {
	drained := make(chan struct{}, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drained = func() {
		select {
		case drained <- struct{}{}:
		default:
		}
	}
	return drained
}

// goroutineState returns the state of the goroutine whose stack holds fn, as the runtime
// prints it ("IO wait", "syscall", "running", ...), or "" if there is none.
func goroutineState(t *testing.T, fn string) string {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, fn) {
			continue
		}
		head, _, _ := strings.Cut(g, "\n")
		_, state, _ := strings.Cut(head, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",") // "IO wait, 2 minutes"
		return state
	}
	return ""
}
