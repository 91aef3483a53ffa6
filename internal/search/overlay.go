package search

import (
	"bytes"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// overlay is a small trigram index of the files changed (or new) since their base index
// was built, with ids of its own (one per block of lines, as in the base index): a file
// the live list saw change is read again in the background (or at once, for Boris's own
// writes) and indexed here, so that it is ruled out like any indexed file once its entry
// is made. An entry only grows: a file indexed again gets new ids, and the old ones are
// left unused. Once it has given as many ids as the base index holds (at least 1,024),
// or holds a twelfth as many (trigram, file) pairs (at least 1 Mi), it takes no more, and a
// new base index is built. Safe for concurrent use.
//
// The bound on pairs is the bound on memory: the base index's lists are in a mapped file,
// the overlay's in the heap, at about 1.2-1.5 bytes a pair (with its table of trigrams).
// A twelfth of the base index is about 17 MB per GB of source, which keeps Boris's heap
// with the index, its live list and a full overlay under 50 MB per GB.
//
// An entry is trusted because no file event has named its file since it was read: that
// holds for a search that takes its files from the live list. A file changed within the
// racy window before it was read (file times come from a coarse clock, and a later write
// in the same tick might leave them as they were) is marked racy: a walk, which trusts an
// entry only when the file's size, times and inode are as recorded, does not use it.
type overlay struct {
	base *Index

	mu    sync.RWMutex
	files map[string]overFile
	dirs  map[string]int // how many of files each directory holds
	tri   *trigram.Index
	next  uint32 // ids given
	full  bool
}

// overFile is an overlay entry.
type overFile struct {
	indexedFile
	racy bool // changed within racyWindow before it was read: its times are not proof
}

func newOverlay(base *Index) *overlay {
	return &overlay{base: base, files: map[string]overFile{}, dirs: map[string]int{}, tri: trigram.New()}
}

// maxPostings is how many (trigram, file) pairs o holds before it is full.
func (o *overlay) maxPostings() int { return max(o.base.tri.Postings()/12, 1<<20) }

// maxIDs is how many ids (a file's blocks each take one) o gives before it is full.
func (o *overlay) maxIDs() int { return max(o.base.tri.IDs(), 1024) }

// add indexes the file at path; false when o is full.
func (o *overlay) add(path string, f overFile, tris [][]trigram.Trigram) bool {
	n := 0
	for _, t := range tris {
		n += len(t)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.full || int(o.next)+len(tris) > o.maxIDs() || o.tri.Postings()+n > o.maxPostings() {
		o.full = true
		return false
	}
	f.id = o.next
	o.next += uint32(len(tris))
	if _, ok := o.files[path]; !ok {
		o.dirs[parentDir(path)]++
	}
	o.files[path] = f
	for i, t := range tris {
		o.tri.Add(f.id+uint32(i), t)
	}
	return true
}

// holdsDir reports whether o holds a file of the directory at path.
func (o *overlay) holdsDir(path string) bool {
	if o == nil {
		return false
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.dirs[path] > 0
}

// isFull reports whether o takes no more entries.
func (o *overlay) isFull() bool {
	if o == nil {
		return false
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.full
}

// overView is what one search uses of an overlay: the entries made before it started,
// and their candidates.
type overView struct {
	o    *overlay
	ids  uint32 // entries with smaller ids are seen
	cand trigram.Bits
}

// view returns the entries of o made so far.
func (o *overlay) view() overView {
	if o == nil {
		return overView{}
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	return overView{o: o, ids: o.next}
}

// plan sets the candidates of q among the entries of v; false when q does not narrow.
func (v *overView) plan(q *trigram.Query) {
	if v.ids == 0 {
		return
	}
	v.o.mu.RLock()
	defer v.o.mu.RUnlock()
	v.cand = v.o.tri.Candidates(q)
}

// What a view knows of a file.
const (
	entryNone   = iota
	entrySeen   // an entry made before the view
	entryTooNew // only an entry made after it
)

// entry returns the entry of path the view sees.
func (v *overView) entry(path string) (overFile, int) {
	if v.ids == 0 {
		return overFile{}, entryNone
	}
	v.o.mu.RLock()
	defer v.o.mu.RUnlock()
	f, ok := v.o.files[path]
	return v.sees(f, ok)
}

// sees says how the view sees an entry found (ok) in the overlay.
func (v *overView) sees(f overFile, ok bool) (overFile, int) {
	switch {
	case !ok:
		return f, entryNone
	case f.id >= v.ids:
		return f, entryTooNew
	}
	return f, entrySeen
}

// dirMemo remembers whether the overlay holds a file of the directory last asked about.
type dirMemo struct {
	dir       string
	has, used bool
}

// entryIn is entry with v.o.mu read-locked and v.ids > 0, for a file of the directory dir
// whose path is in path, a buffer of the caller's (looked up without making a string of
// it); memo spares a lookup for each file of a directory the overlay holds nothing of.
func (v *overView) entryIn(dir string, path []byte, memo *dirMemo) (overFile, int) {
	if !memo.used || dir != memo.dir {
		memo.dir, memo.has, memo.used = dir, v.o.dirs[dir] > 0, true
	}
	if !memo.has {
		return overFile{}, entryNone
	}
	f, ok := v.o.files[string(path)]
	return v.sees(f, ok)
}

// sameStat reports whether st is what f recorded.
func sameStat(st *unix.Stat_t, f indexedFile) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == f.size && st.Mtim.Nano() == f.mtime &&
		st.Ctim.Nano() == f.ctime && st.Ino == f.ino
}

var seenPool = sync.Pool{New: func() any { return new(trigram.Seen) }}

// reindexBatch is how many changed files the background goroutine reads between two
// looks at the events.
const reindexBatch = 256

// reindexed is one file read to be indexed.
type reindexed struct {
	path string
	seq  uint64 // its mark when read
	f    overFile
	tris [][]trigram.Trigram // by block; one empty block for a binary file
	ok   bool                // indexable; otherwise left to be read
}

// kickReindex wakes the background goroutine that indexes changed files.
func (l *live) kickReindex() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// reindexLoop indexes the changed files into the overlay, off the request path and at
// the lowest CPU priority, and never while a search is under way, until the list ends.
func (l *live) reindexLoop(held func()) {
	defer close(l.reindexEnd)
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	idleThread()
	var bufs reindexBufs
	for {
		select {
		case <-l.kick:
		case <-l.done:
			return
		}
		if held != nil {
			held()
		}
		for l.reindexOnce(&bufs) {
		}
	}
}

// reindexOnce reads a batch of changed files and indexes those no event named meanwhile;
// it reports whether more may be left.
func (l *live) reindexOnce(bufs *reindexBufs) bool {
	l.mu.Lock()
	if l.closed || l.broken != nil || l.over.isFull() {
		l.mu.Unlock()
		return false
	}
	l.drainLocked()
	var batch []reindexed
	for p := range l.dirty {
		seq := l.marks[p]
		if t, ok := l.tried[p]; ok && t == seq {
			continue
		}
		batch = append(batch, reindexed{path: p, seq: seq})
		if len(batch) == reindexBatch {
			break
		}
	}
	if len(batch) == 0 {
		l.caughtUp = l.seq
		l.idle.Broadcast()
		l.mu.Unlock()
		return false
	}
	l.mu.Unlock()
	l.readAll(batch, bufs, l.pause)
	return l.commit(batch)
}

// reindexBufs is what reading batch after batch of files reuses: the file's bytes, and
// the trigrams of each file of a batch, by block (the overlay copies them).
type reindexBufs struct {
	data []byte
	tris [][][]trigram.Trigram
}

// readAll reads and indexes the files of batch, calling pause, if set, before each.
func (l *live) readAll(batch []reindexed, bufs *reindexBufs, pause func()) {
	root, err := unix.Open(l.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(root)
	for i := range batch {
		if pause != nil {
			pause()
		}
		for len(bufs.tris) <= i {
			bufs.tris = append(bufs.tris, nil)
		}
		l.readOne(root, &batch[i], &bufs.data, &bufs.tris[i])
	}
}

// commit puts the files of batch that no event named since they were read in the
// overlay; false when it is full or the list ended.
func (l *live) commit(batch []reindexed) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.broken != nil {
		return false
	}
	l.drainLocked() // a change during or after the read has marked its file again
	for i := range batch {
		r := &batch[i]
		switch {
		case l.marks[r.path] != r.seq:
		case !r.ok:
			l.tried[r.path] = r.seq
		case !l.over.add(r.path, r.f, r.tris):
			if l.full != nil {
				l.full() // takes only the indexes' lock, never held when l.mu is taken
			}
			l.idle.Broadcast()
			return false
		default:
			l.clean(r.path)
		}
	}
	return true
}

// readOne reads and indexes the file of r, below the open directory root, into *buf and
// *tris.
func (l *live) readOne(root int, r *reindexed, buf *[]byte, tris *[][]trigram.Trigram) {
	fd, err := openBeneath(root, relUnder(r.path, l.root), unix.O_RDONLY)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxIndexedFile {
		return
	}
	if cap(*buf) < int(st.Size) {
		*buf = make([]byte, st.Size+st.Size/8+512)
	}
	data := (*buf)[:st.Size]
	for n := 0; n < len(data); {
		m, err := unix.Read(fd, data[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m == 0 {
			return
		}
		n += m
	}
	r.f = overFile{indexedFile: indexedFile{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}}
	r.f.racy = time.Now().UnixNano()-st.Ctim.Nano() < racyWindow.Nanoseconds()
	r.f.binary = bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
	if r.f.binary {
		r.tris, r.ok = [][]trigram.Trigram{nil}, true
		return
	}
	r.f.blk = splitBlocks(data)
	seen := seenPool.Get().(*trigram.Seen)
	r.tris = blockTris(r.f.blk, data, seen, (*tris)[:0])
	*tris = r.tris
	seenPool.Put(seen)
	for _, t := range r.tris {
		slices.Sort(t)
	}
	r.ok = true
}

// clean forgets that the file at path changed: its overlay entry is fresh. l.mu is held.
func (l *live) clean(path string) {
	if _, ok := l.dirty[path]; !ok {
		return
	}
	if l.shared {
		l.dirty = maps.Clone(l.dirty)
		l.shared = false
	}
	delete(l.dirty, path)
	delete(l.marks, path)
	delete(l.tried, path)
}

// waitCaughtUp waits until the background goroutine has indexed, or given up on, every
// file changed before the call; false if the list ended meanwhile. For tests and
// benchmarks.
func (l *live) waitCaughtUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applyLocked()
	target := l.seq
	l.kickReindex()
	for l.caughtUp < target && !l.closed && l.broken == nil && !l.over.isFull() {
		l.idle.Wait()
	}
	return !l.closed && l.broken == nil
}

// Wrote tells the indexes that Boris has just written the file at path (a real path):
// when a live list holds it, it is read and indexed in the overlay at once, so that the
// next search need not read it.
func (s *Indexes) Wrote(path string) {
	_, l, _ := s.lookup(parentDir(path))
	if l == nil || !strings.HasPrefix(path, l.root+"/") {
		return
	}
	l.mu.Lock()
	if l.closed || l.broken != nil {
		l.mu.Unlock()
		return
	}
	l.applyLocked()
	seq, ok := l.marks[path]
	l.mu.Unlock()
	if !ok {
		return // not changed as far as the list knows
	}
	// Read at once, even while a search is under way: an edit waits for no search.
	batch := []reindexed{{path: path, seq: seq}}
	l.readAll(batch, &reindexBufs{}, nil)
	l.commit(batch)
}

// rebuild builds a new base index of t, whose overlay is full, in the background.
func (s *Indexes) rebuild(t *tree, x *Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || t.building || t.idx.Load() != x || t.scope == nil {
		return
	}
	t.building = true
	held, dir, onReady, scope, top := s.held, s.Dir, s.OnReady, t.scope, t.top
	s.wg.Go(func() {
		if held != nil {
			held()
		}
		start := time.Now()
		nx, err := buildSaved(scope, x.root, top, dir, s.yield)
		s.built(t, nx, err, false, start, onReady)
	})
}
