package search

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/search/trigram"
)

// overlay is a small trigram index of the files changed (or new) since their base index
// was built, with ids of its own: a file the live list saw change is read again in the
// background and indexed here, so that it is ruled out like any indexed file once its
// entry is made. An entry only grows: a file indexed again gets a new id, and the old
// one is left unused. Once it holds more than half as many ids as the base index, or an
// eighth of its (trigram, file) pairs bound, it takes no more, and a new base index is
// built. Safe for concurrent use.
type overlay struct {
	base *Index

	mu    sync.RWMutex
	files map[string]indexedFile
	tri   *trigram.Index
	next  uint32 // ids given
	full  bool
}

func newOverlay(base *Index) *overlay {
	return &overlay{base: base, files: map[string]indexedFile{}, tri: trigram.New()}
}

// maxIDs is how many entries o takes before it is full.
func (o *overlay) maxIDs() int { return max(len(o.base.files)/2, 1024) }

// add indexes the file at path; false when o is full.
func (o *overlay) add(path string, f indexedFile, tris []trigram.Trigram) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.full || int(o.next) >= o.maxIDs() || o.tri.Postings()+len(tris) > maxPostings/8 {
		o.full = true
		return false
	}
	f.id = o.next
	o.next++
	o.files[path] = f
	o.tri.Add(f.id, tris)
	return true
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
func (v *overView) entry(path string) (indexedFile, int) {
	if v.ids == 0 {
		return indexedFile{}, entryNone
	}
	v.o.mu.RLock()
	f, ok := v.o.files[path]
	v.o.mu.RUnlock()
	switch {
	case !ok:
		return f, entryNone
	case f.id >= v.ids:
		return f, entryTooNew
	}
	return f, entrySeen
}

// sameStat reports whether st is what f recorded.
func sameStat(st *unix.Stat_t, f indexedFile) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == f.size && st.Mtim.Nano() == f.mtime &&
		st.Ctim.Nano() == f.ctime && st.Ino == f.ino
}

// reindexBatch is how many changed files the background goroutine reads between two
// looks at the events.
const reindexBatch = 256

// reindexed is one file read by the background goroutine.
type reindexed struct {
	path string
	seq  uint64 // its mark when read
	f    indexedFile
	tris []trigram.Trigram
	ok   bool // indexable; otherwise left to be read (racy: tried again later)
	racy bool
}

// kickReindex wakes the background goroutine that indexes changed files.
func (l *live) kickReindex() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// reindexLoop indexes the changed files into the overlay, off the request path and at
// the lowest CPU priority, until the list is closed.
func (l *live) reindexLoop(held func()) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	idleThread()
	var buf []byte
	for {
		select {
		case <-l.kick:
		case <-l.done:
			return
		}
		if held != nil {
			held()
		}
		for l.reindexOnce(&buf) {
		}
	}
}

// reindexOnce reads a batch of changed files and indexes those unchanged meanwhile; it
// reports whether more are left.
func (l *live) reindexOnce(buf *[]byte) bool {
	l.mu.Lock()
	if l.closed || l.broken != nil || l.over.full {
		l.mu.Unlock()
		return false
	}
	l.applyLocked()
	var batch []reindexed
	waiting := false
	for p := range l.dirty {
		seq := l.marks[p]
		if r, ok := l.racy[p]; ok && r == seq {
			waiting = true
			continue
		}
		if t, ok := l.tried[p]; ok && t == seq {
			continue
		}
		batch = append(batch, reindexed{path: p, seq: seq})
		if len(batch) == reindexBatch {
			break
		}
	}
	if len(batch) == 0 {
		if !waiting {
			l.caughtUp = l.seq
			l.idle.Broadcast()
		}
		l.mu.Unlock()
		return false
	}
	l.mu.Unlock()

	root, err := unix.Open(l.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for i := range batch {
		l.readOne(root, &batch[i], buf)
	}
	unix.Close(root)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.applyLocked() // a change after the read has marked its file again
	racy := false
	for i := range batch {
		r := &batch[i]
		if l.marks[r.path] != r.seq || l.closed {
			continue
		}
		switch {
		case r.racy:
			racy = true
			l.racy[r.path] = r.seq
		case !r.ok:
			l.tried[r.path] = r.seq
		case !l.over.add(r.path, r.f, r.tris):
			l.idle.Broadcast()
			if l.full != nil {
				go l.full()
			}
			return false
		default:
			l.clean(r.path)
		}
	}
	if racy {
		l.retryRacy()
	}
	return true
}

// readOne reads and indexes the file of r, below the open directory root.
func (l *live) readOne(root int, r *reindexed, buf *[]byte) {
	rel := strings.TrimPrefix(strings.TrimPrefix(r.path, l.root), "/")
	fd, err := openBeneath(root, rel, unix.O_RDONLY)
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
	r.ok, r.racy = indexData(data, &st, &r.f, &r.tris)
}

// indexData fills f and tris for a file of content data and status st; ok is false when
// it is not indexed, racy when only because it changed too recently.
func indexData(data []byte, st *unix.Stat_t, f *indexedFile, tris *[]trigram.Trigram) (ok, racy bool) {
	if time.Now().UnixNano()-st.Ctim.Nano() < racyWindow.Nanoseconds() {
		return false, true
	}
	*f = indexedFile{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
	f.binary = bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
	if f.binary {
		*tris = nil
		return true, false
	}
	*tris, ok = trigram.Of(data, nil, maxFileTrigrams)
	return ok, false
}

// clean forgets that the file at path changed: its overlay entry is fresh. l.mu is held.
func (l *live) clean(path string) {
	if _, ok := l.dirty[path]; !ok {
		return
	}
	if l.shared {
		l.dirty = cloneSet(l.dirty)
		l.shared = false
	}
	delete(l.dirty, path)
	delete(l.marks, path)
	delete(l.tried, path)
	delete(l.racy, path)
}

// retryRacy has the files changed too recently to be indexed read again once the racy
// window has passed. l.mu is held.
func (l *live) retryRacy() {
	if l.racyTimer {
		return
	}
	l.racyTimer = true
	time.AfterFunc(racyWindow+racyWindow/8, func() {
		l.mu.Lock()
		l.racyTimer = false
		clear(l.racy)
		l.mu.Unlock()
		l.kickReindex()
	})
}

func cloneSet(m map[string]struct{}) map[string]struct{} {
	c := make(map[string]struct{}, len(m))
	for k := range m {
		c[k] = struct{}{}
	}
	return c
}

// waitCaughtUp waits until the background goroutine has indexed, or given up on, every
// file changed before the call; false if the list closed or broke meanwhile. For tests
// and benchmarks.
func (l *live) waitCaughtUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applyLocked()
	target := l.seq
	l.kickReindex()
	for l.caughtUp < target && !l.closed && l.broken == nil && !l.over.full {
		l.idle.Wait()
	}
	return !l.closed && l.broken == nil
}

// Wrote tells the indexes that Boris wrote data to the file at path (a real path), by a
// new file renamed over it. A file written within the racy window (file times come from
// a coarse clock) cannot be trusted by its times yet: it stays changed, read by every
// search, and is indexed by the background goroutine once the window has passed.
func (s *Indexes) Wrote(path string, data []byte) {
	_, l, _ := s.lookup(path)
	if l == nil || !strings.HasPrefix(path, l.root+"/") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.applyLocked()
	seq, ok := l.marks[path]
	if !ok {
		return // not a file of the list, or already fresh
	}
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || st.Size != int64(len(data)) {
		return
	}
	var f indexedFile
	var tris []trigram.Trigram
	ok, racy := indexData(data, &st, &f, &tris)
	switch {
	case racy:
		l.racy[path] = seq
		l.retryRacy()
	case !ok:
		l.tried[path] = seq
	case l.over.add(path, f, tris):
		l.clean(path)
	}
}

// rebuild builds a new base index of t, whose overlay is full, in the background.
func (s *Indexes) rebuild(t *tree, x *Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || t.building || t.idx.Load() != x || t.scope == nil {
		return
	}
	t.building = true
	held, dir, onReady, scope := s.held, s.Dir, s.OnReady, t.scope
	s.wg.Go(func() {
		if held != nil {
			held()
		}
		start := time.Now()
		nx, err := BuildIndex(context.Background(), scope, x.root, t.top)
		if err == nil && dir != "" {
			_ = nx.Save(dir)
		}
		s.mu.Lock()
		t.building = false
		if err == nil {
			t.idx.Store(nx)
			t.liveErr = nil
			s.startLive(t, nx)
		}
		s.mu.Unlock()
		if err == nil && onReady != nil {
			info := nx.Info()
			info.Took = time.Since(start)
			onReady(info)
		}
	})
}
