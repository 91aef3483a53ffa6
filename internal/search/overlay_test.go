package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// caughtUp waits until the live list of root has indexed every changed file it can.
func caughtUp(t *testing.T, ix *Indexes, root string) *live {
	t.Helper()
	l := ix.liveOf(root)
	if l == nil {
		t.Fatal("no live list")
	}
	if !l.waitCaughtUp() {
		t.Fatal("the live list broke or closed while changed files were indexed")
	}
	return l
}

// overlaySize says how many entries the overlay of root holds.
func overlaySize(ix *Indexes, root string) int {
	_, _, o := ix.lookup(root)
	if o == nil {
		return 0
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.files)
}

// TestOverlayMatchesScan answers every query class through the index, its live list and
// the overlay of changed files indexed again, and by scan, after git checkouts, sed -i,
// random edits, deletes and renames, each time once the changed files are indexed again,
// and finds no difference.
func TestOverlayMatchesScan(t *testing.T) {
	tinyBlocks(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	rng := rand.New(rand.NewPCG(21, 22))
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
	steps := []struct {
		name string
		do   func()
	}{
		{"checkout other", func() { git(t, root, "checkout", "-q", "-f", "other") }},
		{"checkout main", func() { git(t, root, "checkout", "-q", "-f", "main") }},
		{"sed -i", func() {
			var files []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") && !strings.Contains(p, "/.git/") {
					files = append(files, p)
				}
				return nil
			})
			cmd := exec.Command("sed", append([]string{"-i", "s/the/rareIdent/"}, files...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sed: %v\n%s", err, out)
			}
		}},
	}
	for i := range 12 {
		steps = append(steps, struct {
			name string
			do   func()
		}{fmt.Sprintf("random %d", i), func() { mutateFiles(t, rng, root) }})
	}
	grew := false
	for _, s := range steps {
		s.do()
		compareAll(t, ix, root, s.name)
		caughtUp(t, ix, root)
		before := ix.liveAnswers.Load()
		compareAll(t, ix, root, s.name+", once indexed again")
		if ix.liveAnswers.Load() == before {
			t.Fatalf("%s: no search answered from the live list", s.name)
		}
		if overlaySize(ix, root) > 0 {
			grew = true
		}
	}
	if !grew {
		t.Fatal("the overlay never held a file")
	}
}

// mutateFiles edits, deletes, renames and adds files at random (not ignore files, which
// break the live list).
func mutateFiles(t *testing.T, rng *rand.Rand, root string) {
	t.Helper()
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".git") {
			files = append(files, p)
		}
		return nil
	})
	for range 1 + rng.IntN(8) {
		f := files[rng.IntN(len(files))]
		switch rng.IntN(5) {
		case 0:
			os.Remove(f)
		case 1:
			os.Rename(f, randomPath(rng, root))
		case 2:
			writeRandomFile(t, rng, randomPath(rng, root))
		case 3: // same size, new content
			data, err := os.ReadFile(f)
			if err == nil && len(data) > 0 {
				data[rng.IntN(len(data))] = "xRn"[rng.IntN(3)]
				os.WriteFile(f, data, 0o644)
			}
		default:
			writeRandomFile(t, rng, f)
		}
	}
}

// countReads counts the files under root that searches read, until the test ends.
func countReads(t *testing.T, root string) func() map[string]int {
	var mu sync.Mutex
	reads := map[string]int{}
	readHook = func(p string) {
		if strings.HasPrefix(p, root+"/") {
			mu.Lock()
			reads[p]++
			mu.Unlock()
		}
	}
	t.Cleanup(func() { readHook = nil })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		r := reads
		reads = map[string]int{}
		return r
	}
}

// TestOverlayPrunesChangedFile: a file changed after the build is read by the next search,
// and once indexed again, it is not read by a search it cannot match, nor is a new file;
// a file that can match still is.
func TestOverlayPrunesChangedFile(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	reads := countReads(t, root)
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	ix := &Indexes{MinFiles: 20, heldReindex: func() { <-release }}
	defer let()
	indexed(t, ix, root, &q)
	changed, added := filepath.Join(root, "d1/f01.txt"), filepath.Join(root, "d2/new.txt")
	if err := os.WriteFile(changed, []byte("something else entirely\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(added, []byte("no match\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	matching := filepath.Join(root, "d3/f03.txt")
	if err := os.WriteFile(matching, []byte("now a rareIdent too\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent"})
	if err != nil || want.MatchedFiles != 2 {
		t.Fatalf("scan: %+v, %v", want, err)
	}
	reads()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "changed", got, want)
	if r := reads(); r[changed] != 1 || r[added] != 1 || !got.Live || got.Index != PartlyIndexed {
		t.Fatalf("before the files are indexed again: %+v, read %v; want %s and %s read from the live list", got, r, changed, added)
	}
	let()
	caughtUp(t, ix, root)
	got, err = Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "indexed again", got, want)
	r := reads()
	if r[changed] != 0 || r[added] != 0 || r[matching] != 1 || got.Index != Indexed || !got.Live {
		t.Fatalf("once indexed again: %+v, read %v; want only the candidates read", got, r)
	}
	// A walk (here from a broken list) uses the overlay as well, each entry checked
	// against the file.
	l := ix.liveOf(root)
	l.mu.Lock()
	l.broken = errOverflow
	l.mu.Unlock()
	got, err = Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "walked", got, want)
	if r := reads(); r[changed] != 0 || r[added] != 0 || got.Live || got.Index != Indexed {
		t.Fatalf("walked: %+v, read %v; want the overlay used", got, r)
	}
}

// TestOverlayHeldSearchesRead holds the goroutine that indexes changed files and sees
// searches answer meanwhile, by reading them, and use the overlay once it is let go.
func TestOverlayHeldSearchesRead(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	reads := countReads(t, root)
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	ix := &Indexes{MinFiles: 20, heldReindex: func() { <-release }}
	defer let()
	indexed(t, ix, root, &q)
	changed := filepath.Join(root, "d1/f01.txt")
	if err := os.WriteFile(changed, []byte("no match here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		reads()
		got, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		sameAs(t, "held", got, want)
		if r := reads(); r[changed] != 1 || got.Index != PartlyIndexed {
			t.Fatalf("search %d while held: %+v, read %v; want the changed file read", i, got, r)
		}
	}
	let()
	caughtUp(t, ix, root)
	reads()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "let go", got, want)
	if r := reads(); r[changed] != 0 || got.Index != Indexed {
		t.Fatalf("once let go: %+v, read %v; want the changed file ruled out", got, r)
	}
}

// TestOverlayWaitsForSearches: changed files are not indexed again while a search is under
// way (it reads them itself), and are once none is.
func TestOverlayWaitsForSearches(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	paused := make(chan struct{})
	var once sync.Once
	ix := &Indexes{MinFiles: 20, paused: func() { once.Do(func() { close(paused) }) }}
	indexed(t, ix, root, &q)
	caughtUp(t, ix, root)
	end := ix.begin()
	if err := os.WriteFile(filepath.Join(root, "d1/f01.txt"), []byte("rareIdent again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused:
	case <-time.After(time.Minute):
		t.Fatal("the changed file was indexed again while a search was under way")
	}
	if n := overlaySize(ix, root); n != 0 {
		t.Fatalf("the overlay holds %d files while a search is under way, want 0", n)
	}
	end()
	caughtUp(t, ix, root)
	if n := overlaySize(ix, root); n != 1 {
		t.Fatalf("the overlay holds %d files once the search ended, want 1", n)
	}
}

// TestWroteIndexesAtOnce: a file Boris wrote is indexed in the overlay before Wrote
// returns, even while another search is under way and the background indexing is held,
// so that the next search need not read it.
func TestWroteIndexesAtOnce(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, _ := liveTree(t, q)
	reads := countReads(t, root)
	release := make(chan struct{})
	ix := &Indexes{MinFiles: 20, heldReindex: func() { <-release }}
	defer close(release)
	indexed(t, ix, root, &q)
	changed := filepath.Join(root, "d1/f01.txt")
	if err := os.WriteFile(changed, []byte("rareIdent, written\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	end := ix.begin() // another client's search, under way throughout
	wrote := make(chan struct{})
	go func() {
		ix.Wrote(changed)
		close(wrote)
	}()
	select {
	case <-wrote:
	case <-time.After(time.Minute):
		end()
		t.Fatal("Wrote waited for a search under way")
	}
	end()
	want, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent"})
	if err != nil {
		t.Fatal(err)
	}
	reads()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "after Wrote", got, want)
	if r := reads(); got.Index != Indexed || r[changed] != 1 {
		t.Fatalf("after Wrote: %+v, read %v; want the index, with the written file read as a candidate", got, r)
	}
}

// TestOverlayFullRebuilds: once the overlay takes no more, a new index is built.
func TestOverlayFullRebuilds(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	ix := &Indexes{MinFiles: 20}
	indexed(t, ix, root, &q)
	x, _, o := ix.lookup(root)
	o.mu.Lock()
	o.next = uint32(o.maxIDs()) // as if that many files had been indexed again
	o.mu.Unlock()
	if err := os.WriteFile(filepath.Join(root, "d1/f01.txt"), []byte("nothing there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "full", got, want)
	ix.liveOf(root).waitCaughtUp()
	ix.Wait()
	if x2, _, _ := ix.lookup(root); x2 == x {
		t.Fatal("no new index once the overlay was full")
	}
}

// TestOverlayRacyEntry: a file changed within the racy window before it was indexed again
// is ruled out by a search from the live list (its events vouch for it), but read by a
// walk, which could only trust its times.
func TestOverlayRacyEntry(t *testing.T) {
	q := GrepOptions{Pattern: "rareIdent"}
	root, want := liveTree(t, q)
	reads := countReads(t, root)
	ix := &Indexes{MinFiles: 20}
	w := racyWindow
	t.Cleanup(func() { racyWindow = w }) // after the indexes' goroutines end (indexed)
	indexed(t, ix, root, &q)
	l := caughtUp(t, ix, root)
	// The goroutine that indexes changed files reads racyWindow after taking l.mu.
	l.mu.Lock()
	racyWindow = time.Hour
	l.mu.Unlock()
	changed := filepath.Join(root, "d1/f01.txt")
	if err := os.WriteFile(changed, []byte("no match here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, ix, root)
	_, _, o := ix.lookup(root)
	o.mu.RLock()
	e, ok := o.files[changed]
	o.mu.RUnlock()
	if !ok || !e.racy {
		t.Fatalf("overlay entry of the changed file: %+v, %v; want a racy one", e, ok)
	}
	reads()
	got, err := Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "live", got, want)
	if r := reads(); r[changed] != 0 || !got.Live || got.Index != Indexed {
		t.Fatalf("from the live list: %+v, read %v; want the racy file ruled out", got, r)
	}
	l.mu.Lock()
	l.broken = errOverflow
	l.mu.Unlock()
	got, err = Grep(t.Context(), openScope{}, root, q)
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "walked", got, want)
	if r := reads(); r[changed] != 1 || got.Live {
		t.Fatalf("walked: %+v, read %v; want the racy file read", got, r)
	}
}
