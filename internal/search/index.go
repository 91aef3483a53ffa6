package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp/syntax"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// Limits on what an index holds; a file it does not hold is read by every search.
const (
	// DefaultIndexFiles is how many files a tree must have for its first search to start
	// an index; a tree a tenth that size gets one on its second search.
	DefaultIndexFiles = 50_000
	maxIndexedFile    = 4 << 20 // bytes
	// indexSegment is about how many bytes of postings a build keeps in memory before it
	// writes them out as a segment, to be merged with the others when the build ends.
	indexSegment = 16 << 20
)

// racyWindow: a file changed this recently is not indexed, since file times come from a
// coarse clock and a later write in the same tick might not change them. A build waits
// up to racyWait for the window to pass to read such files again.
var racyWindow = time.Second

const racyWait = 2 * time.Second

// IndexUse says how a search used an index.
type IndexUse int

// How a search used an index.
const (
	Scanned       IndexUse = iota // every file was read: no index yet, or a pattern it cannot narrow
	Indexed                       // the index held every file, fresh: only candidates were read
	PartlyIndexed                 // the index held some files; the others were read
)

// Indexes keeps trigram indexes of the trees searched, built in the background once a tree
// is big enough to pay for one. An index only spares reading files that cannot match and
// whose size, times and inode are what they were when indexed: every other file is read,
// so a search gives the same result with or without one. Safe for concurrent use.
type Indexes struct {
	// MinFiles is DefaultIndexFiles when 0.
	MinFiles int
	// Dir, if set, is where indexes are kept between processes (the cache directory): a
	// tree's first search loads its index from there, and each index built is saved there.
	Dir string
	// OnReady, if set, is told of each index once it serves searches (the live view shows
	// how big the indexes are). It is called from the goroutine that built the index.
	OnReady func(IndexInfo)

	mu     sync.Mutex
	trees  map[string]*tree // by root
	closed bool
	// held, when set, is called by each build before it starts (tests hold builds with it);
	// heldLive by each build of a live list.
	held, heldLive func()
	wg             sync.WaitGroup
	// liveAnswers counts the searches answered from a live list.
	liveAnswers atomic.Int64

	// heldReindex, when set, is called by the goroutine that indexes changed files before
	// each round (tests hold it).
	heldReindex func()

	// searching counts the searches under way; a build waits, between files, for none to
	// be (see yield), so that a search started while a tree is indexed takes the cores.
	searching   atomic.Int32
	searchMu    sync.Mutex
	searchEnded *sync.Cond
	// paused, when set, is called each time a build waits for searches (tests see it).
	paused func()
}

// begin counts a search under way until the function it returns is called.
func (s *Indexes) begin() (end func()) {
	if s == nil {
		return func() {}
	}
	s.searching.Add(1)
	return func() {
		if s.searching.Add(-1) == 0 {
			s.searchMu.Lock()
			if s.searchEnded != nil {
				s.searchEnded.Broadcast()
			}
			s.searchMu.Unlock()
		}
	}
}

// WaitForSearches waits while a grep or find through s is under way: other background
// work that reads the whole tree (the checkpoints' baseline) calls it between files, as
// the index builds do, so that a search started meanwhile takes the cores. It returns at
// once when s is nil.
func (s *Indexes) WaitForSearches() { s.yield() }

// yield waits while a search is under way: a build calls it between files. A search
// never waits for a build, so this cannot deadlock.
func (s *Indexes) yield() {
	if s == nil || s.searching.Load() == 0 {
		return
	}
	if s.paused != nil {
		s.paused()
	}
	s.searchMu.Lock()
	if s.searchEnded == nil {
		s.searchEnded = sync.NewCond(&s.searchMu)
	}
	for s.searching.Load() > 0 {
		s.searchEnded.Wait()
	}
	s.searchMu.Unlock()
}

// IndexInfo says how big an index is.
type IndexInfo struct {
	Root     string
	Files    int   // files held
	Postings int   // (trigram, block) pairs: a small file is one block
	Bytes    int64 // about what it takes in the heap
	Mapped   int64 // the size of its file, mapped read-only (in the page cache, not the heap)
	Loaded   bool  // read from the cache directory rather than built
	Took     time.Duration
}

// Info says how big x is.
func (x *Index) Info() IndexInfo {
	n := x.tri.HeapBytes()
	for p := range x.files {
		n += int64(len(p)) + 80 // the path, its map entry and the file's record
	}
	return IndexInfo{Root: x.root, Files: len(x.files), Postings: x.tri.Postings(),
		Bytes: n, Mapped: x.tri.MappedBytes()}
}

type tree struct {
	searches int
	building bool
	idx      atomic.Pointer[Index]
	top      string
	// live is the tree's live list, once built for idx; nil while one is built
	// (liveBuilding) or when file events cannot be had (liveErr).
	live         *live
	liveBuilding bool
	liveErr      error
	// over indexes the files changed since idx was built; scope and filter are the
	// first search's, for a rebuild the overlay asks for and the list made with a live
	// list.
	over   *overlay
	scope  Scope
	filter *Filter
}

// Index is an immutable trigram index of the files under one root. Its posting lists are
// in a file mapped read-only, which stays mapped while the Index is reachable: a search
// holds the Index it plans with, so replacing a tree's index never unmaps one in use.
type Index struct {
	root  string
	files map[string]indexedFile
	tri   *trigram.Index

	saveMu sync.Mutex
	tmp    string // the temporary file the index was built in, until Save renames it
}

// indexedFile is what an index knows of one file.
type indexedFile struct {
	size, mtime, ctime int64
	ino                uint64
	blk                *blockTable // nil: one block, one id
	id                 uint32
	binary             bool
}

// Files returns how many files the index holds; Postings how many (trigram, block) pairs.
func (x *Index) Files() int    { return len(x.files) }
func (x *Index) Postings() int { return x.tri.Postings() }

// Wait waits for the builds under way; for tests and benchmarks.
func (s *Indexes) Wait() { s.wg.Wait() }

// Close stops following file events and starts no more builds; a build under way ends
// on its own (see Wait). Safe to call more than once.
func (s *Indexes) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	var lives []*live
	for _, t := range s.trees {
		if t.live != nil {
			lives = append(lives, t.live)
			t.live = nil
		}
	}
	s.mu.Unlock()
	for _, l := range lives {
		l.close()
		<-l.reindexEnd
	}
}

// lookup returns the ready index of root or of a directory above it, or nil, with its
// live list if it has one and its overlay.
func (s *Indexes) lookup(root string) (*Index, *live, *overlay) {
	if s == nil {
		return nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := root; ; {
		if t := s.trees[d]; t != nil {
			if x := t.idx.Load(); x != nil {
				if t.over != nil && t.over.base != x {
					t.over = nil
				}
				return x, t.live, t.over
			}
		}
		if d == "/" {
			return nil, nil, nil
		}
		d = parentDir(d)
	}
}

// startLive builds a live list of x in the background. s.mu is held.
func (s *Indexes) startLive(t *tree, x *Index) {
	if s.closed || t.liveBuilding || t.liveErr != nil {
		return
	}
	t.liveBuilding = true
	if t.over == nil || t.over.base != x {
		t.over = newOverlay(x)
	}
	held, top, over, heldRe, scope, filter := s.heldLive, t.top, t.over, s.heldReindex, t.scope, t.filter
	full := func() { s.rebuild(t, x) }
	s.wg.Go(func() {
		if held != nil {
			held()
		}
		// The thread ends with this goroutine, which never unlocks it.
		runtime.LockOSThread()
		idleThread()
		l, err := buildLive(context.Background(), x, over, top, full, s.yield, heldRe)
		if err == nil && scope != nil && filter != nil && !filter.NoIgnore {
			// The list the first search's filters give is made now, so that the next
			// search finds it made.
			if w, err := newWalker(context.Background(), x.root, scope, filter, nil); err == nil {
				l.list(w, x.root, scope)
			}
		}
		s.mu.Lock()
		t.liveBuilding = false
		if s.closed || t.idx.Load() != x {
			if cur := t.idx.Load(); cur != nil && !s.closed {
				s.startLive(t, cur) // the index was built again meanwhile
			}
			s.mu.Unlock()
			if l != nil {
				l.close()
				<-l.reindexEnd
			}
			return
		}
		old := t.live
		if err != nil {
			t.liveErr = err // tried again with the next index
		} else {
			t.live = l
		}
		s.mu.Unlock()
		if old != nil {
			old.close()
			<-old.reindexEnd
		}
	})
}

// dropLive stops using l, which could not answer for err: searches walk until a new live
// list is built, in the background, unless err says file events cannot be had.
func (s *Indexes) dropLive(l *live, err error) {
	s.mu.Lock()
	for _, t := range s.trees {
		if t.live == l {
			t.live = nil
			if errors.Is(err, errWatchLimit) || errors.Is(err, errNoEvents) {
				t.liveErr = err
			}
		}
	}
	s.mu.Unlock()
	l.close()
	s.wg.Go(func() { <-l.reindexEnd }) // it ends after the batch it reads
}

func parentDir(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// searched records a search of the tree at root that visited files files, unindexed of
// them not fresh in used, the index it searched with (nil for none), and starts a build
// when the tree is worth one.
func (s *Indexes) searched(scope Scope, root string, f *Filter, used *Index, files, unindexed int) {
	if s == nil {
		return
	}
	minFiles := s.MinFiles
	if minFiles <= 0 {
		minFiles = DefaultIndexFiles
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees == nil {
		s.trees = map[string]*tree{}
	}
	for d := root; d != "/"; {
		d = parentDir(d)
		if t := s.trees[d]; t != nil && t.idx.Load() != nil {
			// The index of a directory above serves this search; it has its own
			// list of files.
			if t.live == nil && !t.building {
				s.startLive(t, t.idx.Load())
			}
			return
		}
	}
	t := s.trees[root]
	if t == nil {
		t = &tree{}
		s.trees[root] = t
	}
	t.searches++
	if t.top == "" {
		t.top = f.Top
	}
	if t.scope == nil {
		t.scope = scope
		ff := *f
		t.filter = &ff
	}
	if x := t.idx.Load(); x != nil && t.live == nil && !t.building {
		s.startLive(t, x)
	}
	load := t.searches == 1 && s.Dir != ""
	worth := files >= minFiles || t.searches >= 2 && files >= minFiles/10
	if cur := t.idx.Load(); cur != nil {
		// Rebuild once a tenth of the files changed since the index was built. A search
		// that began before it was ready says nothing of it: one that read every file
		// by scan while the build ended must not start another.
		worth = worth && used == cur && unindexed > files/10
	}
	if !load && !worth || t.building || s.closed {
		return
	}
	t.building = true
	held, dir, top, onReady := s.held, s.Dir, f.Top, s.OnReady
	s.wg.Go(func() {
		var x *Index
		start := time.Now()
		err := os.ErrNotExist
		if load {
			// A saved index need not be fresh: it is checked file by file as used.
			x, err = loadIndex(dir, root)
		}
		loaded := err == nil
		if err != nil && worth {
			if held != nil {
				held()
			}
			x, err = buildSaved(scope, root, top, dir, s.yield)
		}
		s.built(t, x, err, loaded, start, onReady)
	})
}

// buildSaved builds the index of root, in dir when set, and saves it there; pause is
// called between files.
func buildSaved(scope Scope, root, top, dir string, pause func()) (*Index, error) {
	x, err := buildIndex(context.Background(), scope, root, top, dir, pause)
	if err == nil && dir != "" {
		_ = x.Save(dir) // a cache: without it, the next process builds again
	}
	return x, err
}

// built makes x, loaded or built since start, t's index, unless err says there is none,
// and tells onReady.
func (s *Indexes) built(t *tree, x *Index, err error, loaded bool, start time.Time, onReady func(IndexInfo)) {
	s.mu.Lock()
	t.building = false
	if err == nil {
		t.idx.Store(x)
		t.liveErr = nil
		s.startLive(t, x)
	}
	s.mu.Unlock()
	if err == nil && onReady != nil {
		info := x.Info()
		info.Loaded, info.Took = loaded, time.Since(start)
		onReady(info)
	}
}

// BuildIndex indexes the files under root a search with default filters and hidden files
// would read, on threads at the lowest CPU priority. Its postings are in an unlinked
// temporary file, mapped.
func BuildIndex(ctx context.Context, scope Scope, root, top string) (*Index, error) {
	return buildIndex(ctx, scope, root, top, "", nil)
}

// buildIndex is BuildIndex writing the index file in the cache directory dir, if set, to
// be renamed into place by Save, and calling pause, if set, before each file.
func buildIndex(ctx context.Context, scope Scope, root, top, dir string, pause func()) (_ *Index, err error) {
	file, tmp, err := indexFile(dir)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	defer func() {
		if err != nil && tmp != "" {
			os.Remove(tmp)
		}
	}()
	x := &Index{root: root, files: map[string]indexedFile{}, tmp: tmp}
	tw := trigram.NewWriter(file, indexSegment)
	defer tw.Close()
	tw.Pause = pause
	var paths []string
	var next uint32 // the next id
	var mu sync.Mutex
	var werr error
	type worker struct {
		buf   []byte
		tris  [][]trigram.Trigram
		seen  trigram.Seen
		niced bool
	}
	workers := make([]worker, workerCount())
	var racy []string  // files changed within racyWindow before they were read
	var lastRacy int64 // the latest change time among them
	// add indexes the file open as fd, found at path, unless it changed within racyWindow
	// before it was read: then it returns that change time (else 0), to be read again
	// once the window has passed.
	add := func(wk *worker, path string, fd int) (changed int64) {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxIndexedFile {
			return 0
		}
		if cap(wk.buf) < int(st.Size) {
			wk.buf = make([]byte, st.Size+st.Size/8+512)
		}
		data := wk.buf[:st.Size]
		n := 0
		for n < len(data) {
			m, err := unix.Read(fd, data[n:])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return 0
			}
			if m == 0 {
				return 0 // the file shrank: leave it to be read
			}
			n += m
		}
		if time.Now().UnixNano()-st.Ctim.Nano() < racyWindow.Nanoseconds() {
			// A write in the same clock tick as this read would leave the times as they
			// are: such a file is not indexed as it is now.
			return st.Ctim.Nano()
		}
		f := indexedFile{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
		f.binary = bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
		var tris [][]trigram.Trigram
		if !f.binary {
			f.blk = splitBlocks(data)
			wk.tris = blockTris(f.blk, data, &wk.seen, wk.tris)
			tris = wk.tris
		}
		mu.Lock()
		defer mu.Unlock()
		if werr != nil {
			return 0
		}
		f.id = next
		next += uint32(f.blocks())
		x.files[path] = f
		paths = append(paths, path)
		if tris == nil {
			werr = tw.Add(f.id, nil)
		}
		for i, t := range tris {
			if werr == nil {
				werr = tw.Add(f.id+uint32(i), t)
			}
		}
		return 0
	}
	filter := &Filter{Hidden: true, Top: top}
	w, err := newWalker(ctx, root, scope, filter, func(id int, j *job) {
		wk := &workers[id]
		if !wk.niced {
			// The thread ends with the walk's goroutine, which never unlocks it.
			runtime.LockOSThread()
			idleThread()
			wk.niced = true
		}
		if j.parent == nil || j.open != "" {
			return // linked files are always read
		}
		if pause != nil {
			pause()
		}
		fd, err := openJob(scope, j, unix.O_RDONLY)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		if changed := add(wk, j.path, fd); changed != 0 {
			mu.Lock()
			racy = append(racy, j.path)
			lastRacy = max(lastRacy, changed)
			mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	if err := w.run(root); err != nil {
		return nil, err
	}
	// A tree just written (a clone, a checkout, an unpacked archive) has files changed
	// within racyWindow before the build read them: they are read again once the window
	// has passed for the last of them, when that is soon, rather than left to every
	// search until the next build (which a search counting them would start at once).
	// A file still changing then is left out.
	if wait := time.Until(time.Unix(0, lastRacy).Add(racyWindow)); len(racy) > 0 && wait <= racyWait {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			idleThread()
			rootFD, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return
			}
			defer unix.Close(rootFD)
			for _, path := range racy {
				if pause != nil {
					pause()
				}
				fd, err := openBeneath(rootFD, relUnder(path, root), unix.O_RDONLY)
				if err != nil {
					continue
				}
				add(&workers[0], path, fd)
				unix.Close(fd)
			}
		}()
		<-done
	}
	if werr != nil {
		return nil, werr
	}
	// The segments are merged at the lowest CPU priority too, on a thread that ends with
	// its goroutine.
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		idleThread()
		x.tri, err = tw.Finish(encodeFiles(root, paths, x.files))
	}()
	<-done
	if err != nil {
		return nil, err
	}
	return x, nil
}

// indexPlan is a search's use of an index: the candidate files of its pattern, in the
// base index and in the overlay.
type indexPlan struct {
	x         *Index
	cand      trigram.Bits
	q         *trigram.Query
	multiline bool
	over      overView
	pruned    atomic.Int64 // files not read
	unindexed atomic.Int64 // files read because the index did not hold them fresh
}

// planIndex returns the plan for pattern under x, or nil when x is nil or the pattern
// does not narrow.
func planIndex(x *Index, pattern string, ignoreCase, multiline bool) *indexPlan {
	if x == nil {
		return nil
	}
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil
	}
	q := trigram.Plan(re)
	cand := x.tri.Candidates(q)
	if cand == nil {
		return nil
	}
	return &indexPlan{x: x, cand: cand, q: q, multiline: multiline}
}

// skip reports whether the file of j need not be read: the index holds it as it is now
// and it cannot match. It then counts the file as reading it would have. A candidate the
// index holds is described in br, to read only its candidate blocks if it is as indexed.
func (g *grep) skip(j *job, br *blockRead) bool {
	p := g.plan
	if j.parent == nil || j.open != "" {
		p.unindexed.Add(1)
		return false
	}
	// An overlay entry is newer than the base's; each is checked against the file.
	o, seen := p.over.entry(j.path)
	f, cand := o.indexedFile, p.over.cand
	if seen != entrySeen || o.racy {
		var ok bool
		if f, ok = p.x.files[j.path]; !ok {
			p.unindexed.Add(1)
			return false
		}
		cand = p.cand
	}
	if candidate(cand, &f, p.multiline) {
		*br = blockRead{f: f, cand: cand, check: true}
		return false
	}
	var st unix.Stat_t
	if unix.Fstatat(j.parent.fd, j.entry.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !sameStat(&st, f) {
		p.unindexed.Add(1)
		return false
	}
	p.pruned.Add(1)
	if g.opts.MaxFileSize > 0 && f.size > g.opts.MaxFileSize {
		g.tooLarge.Add(1)
		return true
	}
	g.searched.Add(1)
	if f.binary {
		g.binary.Add(1)
	}
	return true
}
