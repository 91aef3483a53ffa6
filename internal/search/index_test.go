package search

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// indexQueries are the query classes: a rare identifier, the same ignoring case, a
// regular expression with a literal, one without, and a common word with a result cap.
var indexQueries = []GrepOptions{
	{Pattern: "rareIdent"},
	{Pattern: "RAREident", IgnoreCase: true},
	{Pattern: `func \w+Handler`, Mode: Content},
	{Pattern: `\w+\(\)`, Mode: Count},
	{Pattern: "the", Mode: Content, Keep: 5},
	{Pattern: "kelvin", IgnoreCase: true, Mode: Content, Before: 1},
	{Pattern: "Handler\n", Multiline: true, Mode: Content},
	{Pattern: "rare|common", Mode: Count, Filter: Filter{NoIgnore: true}},
	{Pattern: "Handler", Filter: Filter{Hidden: true, Globs: []string{"*.go"}}},
	{Pattern: "Handler", Filter: Filter{MaxFileSize: 60}, Mode: Count},
	{Pattern: "rareIdent", Mode: Content, OnlyMatching: true, MaxLine: 20},
	{Pattern: `rare\w+`, Mode: Content, OnlyMatching: true, IgnoreCase: true},
	{Pattern: "Handler", Mode: Content, Before: 2, After: 3},
	{Pattern: `^the\b|common$`, Mode: Content},
	{Pattern: `(?i)kelvin\s+x`, Mode: Count},
	{Pattern: `common\s+the`, Multiline: true, Mode: Count},
}

var indexWords = []string{"the", "rareIdent", "rareident", "func fooHandler", "barHandler()", "common", "\u212aelvin", "kelvin", "x()", "\n", "\n", " ",
	"\r\n", "\n", strings.Repeat("long ", 120) + "rareIdent common", "the common\n"}

// tinyBlocks makes the blocks of lines files are indexed as tiny, so that most files of
// a test have many, until the test and its cleanups end.
func tinyBlocks(t *testing.T) {
	old := blockSize
	blockSize = 24
	t.Cleanup(func() { blockSize = old })
}

func writeRandomFile(t *testing.T, rng *rand.Rand, path string) {
	t.Helper()
	var b strings.Builder
	for range rng.IntN(50) {
		b.WriteString(indexWords[rng.IntN(len(indexWords))])
	}
	if rng.IntN(15) == 0 {
		b.WriteString("\x00binary")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomPath(rng *rand.Rand, root string) string {
	dirs := []string{"", "a", "a/b", "c", ".hid", "gen", "node_modules"}
	return filepath.Join(root, dirs[rng.IntN(len(dirs))], fmt.Sprintf("f%d.%s", rng.IntN(60), []string{"go", "txt", "md"}[rng.IntN(3)]))
}

// mutate edits, deletes, renames, adds files and rewrites ignore files at random.
func mutate(t *testing.T, rng *rand.Rand, root string) {
	t.Helper()
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".git/") {
			files = append(files, p)
		}
		return nil
	})
	for range 1 + rng.IntN(8) {
		f := files[rng.IntN(len(files))]
		switch rng.IntN(6) {
		case 0:
			os.Remove(f)
		case 1:
			os.Rename(f, randomPath(rng, root))
		case 2:
			writeRandomFile(t, rng, randomPath(rng, root))
		case 3:
			os.WriteFile(filepath.Join(root, ".gitignore"), []byte([]string{"gen/\n", "*.md\n", ""}[rng.IntN(3)]), 0o644)
		case 4: // same size, new content
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

// TestIndexMatchesScan runs every query class through a scan and through an index, fresh
// and after random edits, deletes, renames and ignore-file changes, and finds no difference.
func TestIndexMatchesScan(t *testing.T) {
	tinyBlocks(t)
	rng := rand.New(rand.NewPCG(7, 8))
	used := map[IndexUse]int{}
	for round := range 6 {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".git"), 0o755)
		os.WriteFile(filepath.Join(root, ".gitignore"), []byte("gen/\n"), 0o644)
		for range 80 {
			writeRandomFile(t, rng, randomPath(rng, root))
		}
		x, err := BuildIndex(t.Context(), openScope{}, root, "")
		if err != nil {
			t.Fatal(err)
		}
		ix := &Indexes{}
		ix.install(root, x)
		defer ix.Wait()
		defer ix.Close()
		for state := range 4 {
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
				used[idx.Index]++
				if state == 0 && idx.Index == PartlyIndexed && q.Filter.NoIgnore == false {
					t.Errorf("round %d: a fresh index left %d files unindexed for %q", round, idx.Unindexed, q.Pattern)
				}
				idx.Index, idx.Unindexed, idx.Live = Scanned, 0, false
				if !reflect.DeepEqual(scan, idx) {
					t.Fatalf("round %d state %d %q: index gave\n%+v\nscan gave\n%+v", round, state, q.Pattern, idx, scan)
				}
			}
			mutate(t, rng, root)
		}
	}
	if used[Indexed] == 0 || used[PartlyIndexed] == 0 || used[Scanned] == 0 {
		t.Fatalf("not every way was taken: %v", used)
	}
}

// install makes x the index of root, used by walking (no live list); for tests.
func (s *Indexes) install(root string, x *Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees == nil {
		s.trees = map[string]*tree{}
	}
	t := &tree{liveErr: errNoEvents}
	t.idx.Store(x)
	s.trees[root] = t
}

// TestIndexBuildIsOffTheRequestPath holds the background build and sees grep answer by
// scan meanwhile, then by the index once the build is let go.
func TestIndexBuildIsOffTheRequestPath(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		body := "nothing here\n"
		if i == 7 {
			body = "a rareIdent here\n"
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started, release := make(chan struct{}), make(chan struct{})
	ix := &Indexes{MinFiles: 20, held: func() {
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
	opts := GrepOptions{Pattern: "rareIdent", Indexes: ix}
	first, err := Grep(t.Context(), openScope{}, root, opts)
	if err != nil {
		t.Fatal(err)
	}
	<-started // the tree was big enough: a build began, and is held
	second, err := Grep(t.Context(), openScope{}, root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Index != Scanned || second.Index != Scanned || second.MatchedFiles != 1 || second.Searched != 40 {
		t.Fatalf("while the build is held: %+v then %+v, want scans finding 1 file of 40", first, second)
	}
	close(release)
	ix.Wait()
	third, err := Grep(t.Context(), openScope{}, root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.Index != Indexed || third.MatchedFiles != 1 || third.Searched != 40 {
		t.Fatalf("after the build: %+v, want the index finding 1 file of 40", third)
	}
	second.Index, third.Index, third.Live = 0, 0, false
	if !reflect.DeepEqual(second, third) {
		t.Fatalf("index gave %+v, scan %+v", third, second)
	}
}

// TestIndexRebuiltForItsOwnCountOnly: a search that read every file by scan because it
// began before the index was ready, and ended after, does not start another build; one
// through the index that found over a tenth of the files changed does.
func TestIndexRebuiltForItsOwnCountOnly(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), []byte("some text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var builds atomic.Int32
	ix := &Indexes{MinFiles: 20, held: func() { builds.Add(1) }}
	defer ix.Wait()
	defer ix.Close()
	opts := GrepOptions{Pattern: "text", Indexes: ix}
	if _, err := Grep(t.Context(), openScope{}, root, opts); err != nil {
		t.Fatal(err)
	}
	ix.Wait()
	x, _, _ := ix.lookup(root)
	if x == nil || builds.Load() != 1 {
		t.Fatalf("after the first search: index %v, %d builds; want one", x, builds.Load())
	}
	// What such a scan says as it ends: every file read, none fresh in an index.
	ix.searched(openScope{}, root, &opts.Filter, nil, 40, 40)
	ix.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("a scan that began before the index was ready started %d more builds", n-1)
	}
	ix.searched(openScope{}, root, &opts.Filter, x, 40, 40)
	ix.Wait()
	if n := builds.Load(); n != 2 {
		t.Fatalf("a search through the index that found every file changed started %d builds, want one", n-1)
	}
}

// TestIndexBuildWaitsForSearches: a build does not compete with a search for the cores: it
// waits, between files, while one is under way, and goes on once none is.
func TestIndexBuildWaitsForSearches(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)), []byte("some text\n"), 0o644)
	}
	paused := make(chan struct{})
	var once sync.Once
	ix := &Indexes{MinFiles: 20, paused: func() { once.Do(func() { close(paused) }) }}
	defer ix.Close()
	end := ix.begin() // a search under way throughout
	if _, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "text", Indexes: ix}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused:
	case <-time.After(time.Minute):
		t.Fatal("the build did not wait for the search under way")
	}
	if x, _, _ := ix.lookup(root); x != nil {
		t.Fatal("the index was built while a search was under way")
	}
	end()
	ix.Wait()
	if x, _, _ := ix.lookup(root); x == nil || x.Files() != 40 {
		t.Fatalf("after the search: index %v, want one of 40 files", x)
	}
}

// TestIndexSmallTreeNotBuilt: a tree under a tenth of MinFiles is never indexed.
func TestIndexSmallTreeNotBuilt(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("rareIdent\n"), 0o644)
	ix := &Indexes{MinFiles: 100, held: func() { t.Error("a build started for a tree of one file") }}
	for range 3 {
		if _, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "rareIdent", Indexes: ix}); err != nil {
			t.Fatal(err)
		}
	}
	ix.Wait()
}

// TestIndexKeptInCacheDir: an index built by one set of indexes is saved in the cache
// directory and used by the next without a build, checked file by file: after changes it
// still answers as a scan does.
func TestIndexKeptInCacheDir(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	root, cache := t.TempDir(), t.TempDir()
	for range 60 {
		writeRandomFile(t, rng, randomPath(rng, root))
	}
	q := GrepOptions{Pattern: "rareIdent", Mode: Count}
	first := &Indexes{MinFiles: 1, Dir: cache}
	defer first.Close()
	if _, err := Grep(t.Context(), openScope{}, root, GrepOptions{Pattern: "x", Indexes: first}); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	next := &Indexes{MinFiles: 1 << 30, Dir: cache, held: func() { t.Error("the saved index was built again") }}
	defer next.Close()
	q.Indexes = next
	if res, err := Grep(t.Context(), openScope{}, root, q); err != nil || res.Index != Scanned {
		t.Fatalf("first search of a new process: %+v %v, want a scan while the index loads", res, err)
	}
	next.Wait()
	for state := range 3 {
		got, err := Grep(t.Context(), openScope{}, root, q)
		if err != nil {
			t.Fatal(err)
		}
		if state == 0 && got.Index != Indexed {
			t.Fatalf("after loading: %v, want the index", got.Index)
		}
		scan := q
		scan.Indexes = nil
		want, err := Grep(t.Context(), openScope{}, root, scan)
		if err != nil {
			t.Fatal(err)
		}
		got.Index, got.Unindexed, got.Live = Scanned, 0, false
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("state %d: loaded index gave %+v, scan %+v", state, got, want)
		}
		mutate(t, rng, root)
	}
}

func init() {
	// The tests build indexes of files just written; each change they make comes many
	// clock ticks after the build.
	racyWindow = 0
}

// TestJustWrittenFilesIndexed: files written right before a build (a clone, a checkout)
// are read again once racyWindow has passed for them, and indexed: a tree just written
// is not left to be read by every search until another build.
func TestJustWrittenFilesIndexed(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		sub := filepath.Join(root, fmt.Sprintf("d%d", i%3))
		os.MkdirAll(sub, 0o755)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("file %d\nword%02d\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 300 * time.Millisecond
	x, err := BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil || x.Files() != 30 {
		t.Fatalf("BuildIndex = %d files, %v; want all 30", x.Files(), err)
	}
	p := planIndex(x, "word17", false, false)
	for path, f := range x.files {
		if want := strings.HasSuffix(path, "/f17.txt"); candidate(p.cand, &f, false) != want {
			t.Errorf("%s a candidate for word17: %v, want %v", path, !want, want)
		}
	}
}

// TestRacyFileNotIndexed: a file changed within racyWindow of the build, when the window
// does not pass soon, is left to be read.
func TestRacyFileNotIndexed(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("x\n"), 0o644)
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = time.Hour
	x, err := BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil || x.Files() != 0 {
		t.Fatalf("BuildIndex = %d files, %v; want none", x.Files(), err)
	}
}
