package search

import (
	"context"
	"errors"
	"hash/maphash"
	"io/fs"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/search/trigram"
)

var (
	errNoEvents   = errors.New("no file events on this system or filesystem")
	errWatchLimit = errors.New("out of inotify watches (fs.inotify.max_user_watches)")
	errOverflow   = errors.New("file events overflowed")
	errClosed     = errors.New("closed")
)

// maxWatches, when above 0, is a limit on one watcher's watches below the system's; for
// tests.
var maxWatches = 0

// event is one file event, as [watcher.drain] reports it.
type event struct {
	wd       int
	name     string // the entry of the watched directory it concerns; "" for the directory
	overflow bool   // events were lost
	gone     bool   // the watch was removed
	entries  bool   // the directory's entries changed (created, deleted, moved, a subdirectory's mode)
	self     bool   // the directory itself was changed, moved or deleted
}

// live is the list of the directories of an indexed tree, kept as they are by file events,
// so that a search learns which files to read without walking the tree. It holds what a
// walk with hidden files and the ignore files read at build time would enter (not .git,
// not node_modules), and which files changed since their index entry was made: those are
// read by every search until a background goroutine has indexed them again in the
// overlay (or the next build).
//
// The events queued are applied by a goroutine as they come and by every search before
// it starts, so a search sees every change made before it started. A directory one of
// whose ignore files changed is listed again with all below it. An event it cannot
// follow (a lost event, no watch left) breaks the list: searches walk again until a new
// list is built in the background.
type live struct {
	root string
	x    *Index
	w    *watcher
	walk *walker // decides, as the build did, which directories are entered

	mu     sync.Mutex
	dirs   map[string]*liveDir
	byWD   map[int]*liveDir
	dirty  map[string]struct{} // files whose index entry (base or overlay) may be stale
	shared bool                // dirty is held by a search: copy before writing
	// marks holds, for each file of dirty, the event count when it was last marked: a file
	// read in the background is indexed only if no event marked it since.
	marks    map[string]uint64
	seq      uint64
	tried    map[string]uint64 // files that cannot be indexed, as of their mark
	caughtUp uint64            // seq when the background goroutine last found nothing to do
	idle     *sync.Cond        // on mu: broadcast when caughtUp grows or the list ends
	over     *overlay
	kick     chan struct{}
	full     func() // called when the overlay takes no more
	// pause is called before each changed file is read again in the background: it waits
	// while a search is under way, which reads the changed files itself.
	pause func()
	gen   uint64 // bumped whenever a directory's entries change
	lists map[listKey]*liveList
	sizes map[listKey]int // how many files each list last held, to size the next
	// relist holds the directories events named, to be listed again by the next search:
	// not as the events come, which would see a command's temporary files come and go
	// (sed -i, git checkout) and make every list again for nothing.
	relist     []*liveDir
	drained    func() // if set, called after each drain that took events, l.mu held
	started    bool   // the first listing is done
	broken     error  // set once the list cannot be trusted
	closed     bool
	done       chan struct{} // closed when the event goroutine has ended
	reindexEnd chan struct{} // closed when the goroutine that indexes changed files has ended
}

// liveDir is one directory as last listed.
type liveDir struct {
	path    string
	wd      int
	entries []liveEntry // sorted by name
	// refs says, for each of entries, what the index holds of it, so that listing the
	// tree again after a change looks up only the directories that changed.
	refs       []fileRef
	unreadable bool
	ign        *ignoreChain      // the build's rules in force in it
	ignData    map[string][]byte // its ignore files
	// rulesChanged says an ignore file of it changed: it is listed again with all below.
	rulesChanged bool
	queued       bool // in live.relist
	// touched says a file of it may have changed since the base index was built (one was
	// marked, or the overlay may hold one): a search looks up only such a directory's
	// files among the changed ones and in the overlay.
	touched atomic.Bool
}

// fileRef is what an index holds of a directory entry: held is false when it holds
// nothing (a new file, a directory, a link).
type fileRef struct {
	id     uint32
	held   bool
	binary bool
	size   int64
	mtime  int64
	blk    *blockTable
}

// refsOf returns what the index holds of each of the entries of the directory at path.
func (l *live) refsOf(path string, entries []liveEntry) []fileRef {
	refs := make([]fileRef, len(entries))
	for i, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if x, ok := l.x.files[joinPath(path, e.Name())]; ok {
			refs[i] = fileRef{id: x.id, held: true, binary: x.binary, size: x.size, mtime: x.mtime, blk: x.blk}
		}
	}
	return refs
}

// liveFile is a file a search with given filters visits: its entry, and what the index
// holds of it, as its directory was listed. Neither is changed in place (a directory
// listed again gets new ones), so a list keeps them as they were, at 24 bytes a file.
type liveFile struct {
	e   *liveEntry
	dir *liveDir
	ref *fileRef // nil: the index holds nothing of it, or it is a link
}

func (f *liveFile) path() string { return joinPath(f.e.dir, f.e.name) }

// indexed returns what the index holds of f; f.ref is not nil.
func (f *liveFile) indexed() indexedFile {
	r := f.ref
	return indexedFile{id: r.id, size: r.size, binary: r.binary, blk: r.blk, mtime: r.mtime}
}

// liveList is what a walk of a live tree with given filters found.
type liveList struct {
	scope Scope
	files []liveFile
	links map[int]string // the targets of the linked files, by their place in files
	sk    Skipped

	quietOnce sync.Once
	quiet     *quietIndex
}

// listKey identifies the filters of a walk.
type listKey struct {
	start  string
	hidden bool
	globs  string
	rules  uint64 // the ignore files above start, as read
}

var listSeed = maphash.MakeSeed()

// allScope hides nothing: a live list holds every directory, and each search applies
// its own scope to it.
type allScope struct{}

func (allScope) Hidden(string) bool                           { return false }
func (allScope) Check(string) error                           { return nil }
func (allScope) Open(name string, flag int) (*os.File, error) { return os.OpenFile(name, flag, 0) }

// buildLive lists and watches every directory of the tree x indexes, and marks the files
// whose size, times or inode differ from their index entry. Each directory is watched
// before it is listed, so no change after the listing goes unseen.
func buildLive(ctx context.Context, x *Index, over *overlay, top string, full, pause, held func()) (*live, error) {
	w, err := newWatcher(x.root)
	if err != nil {
		return nil, err
	}
	l := &live{root: x.root, x: x, w: w, dirs: map[string]*liveDir{}, byWD: map[int]*liveDir{},
		dirty: map[string]struct{}{}, lists: map[listKey]*liveList{}, sizes: map[listKey]int{}, done: make(chan struct{}),
		reindexEnd: make(chan struct{}),
		marks:      map[string]uint64{}, tried: map[string]uint64{},
		over: over, kick: make(chan struct{}, 1), full: full, pause: pause}
	l.idle = sync.NewCond(&l.mu)
	l.walk, err = newWalker(ctx, x.root, allScope{}, &Filter{Hidden: true, Top: top}, nil)
	if err == nil {
		err = l.addDir(x.root, l.walk.parentRules(x.root))
		l.started = true
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		w.close()
		return nil, err
	}
	go l.follow()
	go l.reindexLoop(held)
	l.kickReindex()
	return l, nil
}

// follow takes events as they are queued, until the list is closed or broken: it marks
// the files they name as changed; the directories they name are listed again by the
// next search.
func (l *live) follow() {
	defer close(l.done)
	defer l.w.close()
	for l.w.wait() {
		l.mu.Lock()
		if !l.closed {
			l.drainLocked()
		}
		stop := l.closed || l.broken != nil
		l.closed = stop // no one uses the watcher once this goroutine ends
		if stop {
			l.idle.Broadcast()
		}
		more := len(l.dirty) > 0
		l.mu.Unlock()
		if stop {
			return
		}
		if more {
			l.kickReindex()
		}
	}
	l.mu.Lock()
	l.closed = true
	l.idle.Broadcast()
	l.mu.Unlock()
}

// close stops the event goroutine and waits for it to release the watcher. The goroutine
// that indexes changed files ends after the batch it reads (see l.reindexEnd).
func (l *live) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.w.stop()
	<-l.done
}

// addDir watches and lists the directory at path, in which parent's rules hold, and the
// directories below it a walk would enter.
func (l *live) addDir(path string, parent *ignoreChain) error {
	if l.dirs[path] != nil {
		return nil
	}
	d := &liveDir{path: path, wd: -1}
	// A directory listed after the first listing may be one whose files were marked, or
	// are in the overlay, under an earlier listing of it.
	d.touched.Store(l.started || l.over.holdsDir(path))
	l.dirs[path] = d
	wd, err := l.w.add(path)
	switch {
	case errors.Is(err, errWatchLimit):
		return err
	case err == nil:
		if o := l.byWD[wd]; o != nil && o != d {
			// The directory is watched under another name: it moved, and the
			// event that says so is yet to come.
			return errOverflow
		}
		d.wd = wd
		l.byWD[wd] = d
	}
	entries, fd := listDir(path)
	if fd < 0 {
		d.unreadable = true
		return nil
	}
	defer unix.Close(fd)
	d.entries = entries
	d.refs = l.refsOf(path, entries)
	d.ignData = map[string][]byte{}
	var extra *ignoreSet
	if path == l.walk.repoTop {
		extra = l.walk.exclude0
	}
	d.ign = loadIgnore(parent, path, func(name string) ([]byte, bool) {
		for _, e := range entries {
			if e.Name() == name && e.Type().IsRegular() {
				data, ok := readSmallAt(fd, name, maxIgnoreFile)
				if ok {
					d.ignData[name] = data
				}
				return data, ok
			}
		}
		return nil, false
	}, extra)
	for i := range entries {
		e := &entries[i]
		nj, ok := l.walk.entryJob(nil, path, e, d.ign)
		switch {
		case !ok || nj.open != "":
		case nj.dir:
			if err := l.addDir(nj.path, d.ign); err != nil {
				return err
			}
		default:
			l.check(fd, nj.path, e.Name(), &d.refs[i])
		}
	}
	return nil
}

// check marks the file name of the open directory dirfd dirty unless it is as indexed,
// in the overlay or else in the base index (ref). A file neither holds (new, or changed
// too recently when the index was built) is marked too, to be indexed in the overlay.
func (l *live) check(dirfd int, path, name string, ref *fileRef) {
	v := l.over.view()
	o, seen := v.entry(path)
	f := o.indexedFile
	if seen != entrySeen || o.racy {
		if !ref.held {
			l.markDirty(path)
			return
		}
		f = l.x.files[path]
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !sameStat(&st, f) {
		l.markDirty(path)
	}
}

func (l *live) markDirty(path string) {
	if d := l.dirs[parentDir(path)]; d != nil {
		d.touched.Store(true)
	}
	l.seq++
	l.marks[path] = l.seq
	if _, ok := l.dirty[path]; ok {
		return
	}
	if l.shared {
		l.dirty = maps.Clone(l.dirty)
		l.shared = false
	}
	l.dirty[path] = struct{}{}
}

// liveEntry is a directory entry as a live list keeps it: its name and type, in a slice,
// without the heap object and interface os.ReadDir makes of each entry (about 40 bytes
// less an entry, and an object fewer for the collector to trace: at 400,000 files, 16 MB
// and 400,000 objects). *liveEntry is an fs.DirEntry.
type liveEntry struct {
	dir  string // the path of the directory it is in
	name string
	typ  fs.FileMode
}

func (e *liveEntry) Name() string               { return e.name }
func (e *liveEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *liveEntry) Type() fs.FileMode          { return e.typ }
func (e *liveEntry) Info() (fs.FileInfo, error) { return os.Lstat(joinPath(e.dir, e.name)) }
func (e *liveEntry) String() string             { return fs.FormatDirEntry(e) }

// listDir lists the directory at path, sorted by name, and returns it open, or -1.
func listDir(path string) ([]liveEntry, int) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, -1
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		unix.Close(fd)
		return nil, -1
	}
	f := os.NewFile(uintptr(dup), path)
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(entries) == 0 {
		unix.Close(fd)
		return nil, -1
	}
	list := make([]liveEntry, len(entries))
	for i, e := range entries {
		list[i] = liveEntry{dir: path, name: e.Name(), typ: e.Type()}
	}
	slices.SortFunc(list, func(a, b liveEntry) int { return strings.Compare(a.name, b.name) })
	return list, fd
}

// removeDir forgets d and the directories below it.
func (l *live) removeDir(d *liveDir) {
	for _, e := range d.entries {
		if e.IsDir() {
			if c := l.dirs[joinPath(d.path, e.Name())]; c != nil {
				l.removeDir(c)
			}
		}
	}
	if l.dirs[d.path] == d {
		delete(l.dirs, d.path)
	}
	if d.wd >= 0 && l.byWD[d.wd] == d {
		delete(l.byWD, d.wd)
		l.w.remove(d.wd)
	}
}

// drainLocked takes the events queued: the files they name are marked changed, the
// directories put in l.relist. l.mu is held.
func (l *live) drainLocked() {
	if l.broken != nil {
		return
	}
	took := false
	err := l.w.drain(func(ev event) {
		l.handle(ev, &l.relist)
		took = true
	})
	if err != nil && l.broken == nil {
		l.broken = err
	}
	if took && l.drained != nil {
		l.drained()
	}
}

// applyLocked applies the events queued: it drains them and lists again the directories
// they named. l.mu is held.
func (l *live) applyLocked() {
	l.drainLocked()
	pending := l.relist
	l.relist = nil
	for _, d := range pending {
		d.queued = false
	}
	if l.broken != nil || len(pending) == 0 {
		return
	}
	// Forget what went away everywhere before adding what came, so that a directory
	// moved within the tree is watched under its new name only.
	var grown, again []*liveDir
	for _, d := range pending {
		if l.dirs[d.path] != d {
			continue // removed meanwhile
		}
		if d.rulesChanged {
			// What is ignored below it changed: list it again whole, with its rules.
			d.rulesChanged = false
			l.gen++
			clear(l.lists)
			l.removeDir(d)
			again = append(again, d)
			continue
		}
		entries, fd := listDir(d.path)
		if fd >= 0 {
			unix.Close(fd)
		}
		if (fd < 0) == d.unreadable && sameEntries(d.entries, entries) && (d.wd >= 0 || fd < 0) {
			continue
		}
		l.gen++
		clear(l.lists)
		if fd < 0 || d.unreadable || d.wd < 0 {
			// Its mode changed: list it again whole, with its ignore files.
			l.removeDir(d)
			again = append(again, d)
			continue
		}
		for _, e := range d.entries {
			if e.typ.IsDir() && !slices.ContainsFunc(entries, func(n liveEntry) bool { return n.name == e.name && n.typ.IsDir() }) {
				if c := l.dirs[joinPath(d.path, e.Name())]; c != nil {
					l.removeDir(c)
				}
			}
		}
		d.entries = entries
		d.refs = l.refsOf(d.path, entries)
		grown = append(grown, d)
	}
	for _, d := range again {
		if l.dirs[d.path] == nil && l.listed(d.path) {
			if err := l.addDir(d.path, l.parentRules(d.path)); err != nil {
				l.broken = err
				return
			}
		}
	}
	for _, d := range grown {
		if l.dirs[d.path] != d {
			continue
		}
		for i := range d.entries {
			nj, ok := l.walk.entryJob(nil, d.path, &d.entries[i], d.ign)
			if ok && nj.dir && nj.open == "" && l.dirs[nj.path] == nil {
				if err := l.addDir(nj.path, d.ign); err != nil {
					l.broken = err
					return
				}
			}
		}
	}
}

// handle applies one event, adding the directories to list again to pending.
func (l *live) handle(ev event, pending *[]*liveDir) {
	relist := func(d *liveDir) {
		if !d.queued {
			d.queued = true
			*pending = append(*pending, d)
		}
	}
	if ev.overflow {
		l.broken = errOverflow
	}
	d := l.byWD[ev.wd]
	if d == nil || l.broken != nil {
		return
	}
	switch {
	case ev.gone:
		delete(l.byWD, ev.wd)
		d.wd = -1
	case ev.name == "":
		if ev.self {
			relist(d)
		}
	default:
		p := joinPath(d.path, ev.name)
		l.markDirty(p)
		if slices.Contains(ignoreFiles, ev.name) {
			d.rulesChanged = true
			relist(d)
		}
		if ev.entries {
			relist(d)
			if c := l.dirs[p]; c != nil {
				relist(c) // its mode may have changed
			}
		}
	}
}

// listed reports whether the directory at path is the root or a directory its parent's
// listing holds.
func (l *live) listed(path string) bool {
	if path == l.root {
		return true
	}
	p := l.dirs[parentDir(path)]
	base := filepath.Base(path)
	return p != nil && slices.ContainsFunc(p.entries, func(e liveEntry) bool { return e.name == base && e.typ.IsDir() })
}

// parentRules returns the build's rules in force in the parent of the directory at path.
func (l *live) parentRules(path string) *ignoreChain {
	if path == l.root {
		return l.walk.parentRules(l.root)
	}
	if p := l.dirs[parentDir(path)]; p != nil {
		return p.ign
	}
	return nil
}

func sameEntries(a, b []liveEntry) bool {
	return slices.EqualFunc(a, b, func(x, y liveEntry) bool { return x.name == y.name && x.typ == y.typ })
}

// list returns the files a walk of the directory start with w's filters would visit,
// and the files that changed since they were indexed (not to be written to), after
// applying the events queued; false when the live tree cannot say.
func (l *live) list(w *walker, start string, scope Scope) (*liveList, map[string]struct{}, overView, error) {
	// The ignore files above start are read as a walk reads them; a change in them
	// makes a new list.
	var rules maphash.Hash
	rules.SetSeed(listSeed)
	w.recordRules = &rules
	chain := w.parentRules(start)
	w.recordRules = nil
	rules.WriteString(w.repoTop)
	key := listKey{start: start, hidden: w.filter.Hidden, globs: strings.Join(w.filter.Globs, "\x00") + "\x01" + strings.Join(w.filter.Types, "\x00"), rules: rules.Sum64()}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, overView{}, errClosed
	}
	l.applyLocked()
	if l.broken != nil {
		return nil, nil, overView{}, l.broken
	}
	if len(l.dirty) > 0 {
		l.kickReindex()
	}
	l.shared = true
	// The overlay's entries are taken with the changed files, so that an entry made
	// later is known to be for one of them.
	over := l.over.view()
	if ll := l.lists[key]; ll != nil && sameScope(ll.scope, scope) {
		return ll, l.dirty, over, nil
	}
	ll := &liveList{scope: scope, files: make([]liveFile, 0, l.sizes[key])}
	links, ok := l.visitLocked(w, start, chain, nil, func(nj *job, d *liveDir, ref *fileRef) {
		f := liveFile{e: nj.entry.(*liveEntry), dir: d}
		switch {
		case nj.open != "":
			if ll.links == nil {
				ll.links = map[int]string{}
			}
			ll.links[len(ll.files)] = nj.open
		case ref.held:
			f.ref = ref
		}
		ll.files = append(ll.files, f)
	})
	if !ok {
		return nil, nil, overView{}, errNotListed
	}
	ll.sk = w.snapshot()
	if !links && canCompare(scope) {
		if len(l.lists) >= 4 {
			clear(l.lists)
		}
		if len(l.sizes) >= 64 {
			clear(l.sizes)
		}
		l.lists[key] = ll
		l.sizes[key] = len(ll.files)
	}
	return ll, l.dirty, over, nil
}

// visitLocked calls file for each file and dir (if not nil) for each directory a walk of
// the directory start with w's filters, and chain the rules above start, would visit, and
// counts in w what the walk would count; links says whether the list held a symlink, ok
// false that a directory the walk enters is not in the list. l.mu is held.
func (l *live) visitLocked(w *walker, start string, chain *ignoreChain, dir func(nj *job), file func(nj *job, d *liveDir, ref *fileRef)) (links, ok bool) {
	var walk func(d *liveDir, ign *ignoreChain) bool
	walk = func(d *liveDir, ign *ignoreChain) bool {
		if d.unreadable {
			w.unreadable.Add(1)
			return true
		}
		if !w.filter.NoIgnore {
			var extra *ignoreSet
			if d.path == w.repoTop {
				extra = w.exclude0
			}
			ign = loadIgnore(ign, d.path, func(name string) ([]byte, bool) {
				data, ok := d.ignData[name]
				return data, ok
			}, extra)
		}
		for i := range d.entries {
			e := &d.entries[i]
			if e.typ&fs.ModeSymlink != 0 {
				links = true
			}
			nj, ok := w.entryJob(nil, d.path, e, ign)
			switch {
			case !ok:
			case nj.dir:
				if dir != nil {
					dir(&nj)
				}
				if nj.open != "" {
					w.symlinks.Add(1) // a linked directory is listed, not entered
					continue
				}
				c := l.dirs[nj.path]
				if c == nil || !walk(c, ign) {
					return false
				}
			default:
				file(&nj, d, &d.refs[i])
			}
		}
		return true
	}
	d := l.dirs[start]
	return links, d != nil && walk(d, chain)
}

// listed is an entry find returns: a job, and the file's modification time when known.
type listed struct {
	job
	known bool
	mtime int64 // ns since the epoch
}

// find returns the entries a walk of the directory start with w's filters would visit
// and keep accepts, in the order the walk may visit them, after applying the events
// queued; an error when the live list cannot say. keep runs with the list locked: it
// should only look at the job. A file the base index holds, in a directory no change has
// touched, is as the index holds it: its modification time comes with it.
func (l *live) find(w *walker, start string, keep func(*job) bool) ([]listed, error) {
	var chain *ignoreChain
	if !w.filter.NoIgnore {
		chain = w.parentRules(start)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errClosed
	}
	l.applyLocked()
	if l.broken != nil {
		return nil, l.broken
	}
	var found []listed
	dir := func(nj *job) {
		if keep(nj) {
			found = append(found, listed{job: *nj})
		}
	}
	file := func(nj *job, d *liveDir, ref *fileRef) {
		if keep(nj) {
			quiet := ref.held && nj.open == "" && !d.touched.Load()
			found = append(found, listed{job: *nj, known: quiet, mtime: ref.mtime})
		}
	}
	if _, ok := l.visitLocked(w, start, chain, dir, file); !ok {
		return nil, errNotListed
	}
	return found, nil
}

// mustWalker returns a walker for filters newWalker has already accepted.
func mustWalker(ctx context.Context, root string, scope Scope, f *Filter) *walker {
	w, err := newWalker(ctx, root, scope, f, nil)
	if err != nil {
		panic(err)
	}
	return w
}

var errNotListed = errors.New("a directory the search enters is not in the live list")

// canCompare reports whether scopes like s can be compared with ==.
func canCompare(s Scope) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s == s
}

func sameScope(a, b Scope) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// grepLive searches the files of list: those the index (its overlay, or else the base
// index) holds as they are and rules out are counted as read, the others are read. It
// returns how many were read because the index did not hold them. The files to read are
// handed to the readers in batches as the list is gone through, so that reading starts
// at once.
func (g *grep) grepLive(ctx context.Context, start string, ll *liveList, dirty map[string]struct{}, over overView, plan *indexPlan) (int, error) {
	dir, err := g.scope.Open(start, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	at := &beneath{fd: int(dir.Fd()), dir: start}
	// A file to read, and what the index knows of it when it holds it fresh (known).
	type toRead struct {
		i     int
		f     blockRead
		known bool
	}
	const batchLen = 32
	batches := make(chan []toRead, 2*len(g.workers))
	// Batches read are handed back to be filled again: a search of many candidates
	// allocates a few batches, not one (and a record) per 32 files.
	free := make(chan []toRead, cap(batches)+len(g.workers)+1)
	var wg sync.WaitGroup
	for id := range g.workers {
		wg.Go(func() {
			w := &g.workers[id]
			for batch := range batches {
				for k := range batch {
					r := &batch[k]
					if ctx.Err() != nil {
						break
					}
					f := &ll.files[r.i]
					j := job{open: ll.links[r.i], lf: f}
					if j.open == "" {
						w.rel = appendBelow(w.rel[:0], at.dir, f.e.dir, f.e.name)
						j.at, j.rel = at, w.rel
					}
					g.visited.Add(1)
					var known *blockRead
					if r.known {
						known = &r.f
					}
					g.read1(id, &j, known)
				}
				select {
				case free <- batch[:0]:
				default:
				}
			}
		})
	}
	unindexed := 0
	var cand trigram.Bits
	if plan != nil {
		cand = plan.cand
	}
	if over.ids > 0 {
		over.o.mu.RLock()
	}
	var memo dirMemo
	var key []byte
	var tooLarge, searched, binary int64
	batch := make([]toRead, 0, batchLen)
	send := func() {
		// The overlay is not held while the readers catch up: each entry looked up is
		// checked against the view on its own.
		if over.ids > 0 {
			over.o.mu.RUnlock()
		}
		batches <- batch
		select {
		case batch = <-free:
		default:
			batch = make([]toRead, 0, batchLen)
		}
		if over.ids > 0 {
			over.o.mu.RLock()
			memo = dirMemo{}
		}
	}
	// visit hands the file at i to the readers, or counts it as read when the index
	// holds it as it is and rules it out.
	visit := func(i int) {
		f := &ll.files[i]
		// Only a file of a touched directory can be among the changed files or in the
		// overlay: one marked was marked after its directory was touched.
		touched, stale := f.dir == nil || f.dir.touched.Load(), false
		if touched {
			key = appendPath(key[:0], f.e.dir, f.e.name) // looked up with no string made
		}
		if touched && len(dirty) > 0 {
			_, stale = dirty[string(key)]
		}
		var e indexedFile
		if f.ref != nil {
			e = f.indexed()
		}
		fresh, c := f.ref != nil && !stale, cand
		if touched && !stale && ll.links[i] == "" && over.ids > 0 {
			// An overlay entry is newer than the base's; one made after the list of
			// changed files was taken is for a file in it.
			switch o, seen := over.entryIn(f.e.dir, key, &memo); seen {
			case entrySeen:
				e, fresh, c = o.indexedFile, true, over.cand
			case entryTooNew:
				fresh = false
			}
		}
		if !fresh {
			unindexed++
		}
		if plan == nil || !fresh || candidate(c, &e, plan.multiline) {
			r := toRead{i: i}
			if plan != nil && fresh {
				r.f, r.known = blockRead{f: e, cand: c, fresh: true}, true
			}
			if batch = append(batch, r); len(batch) == batchLen {
				send()
			}
			return
		}
		if g.opts.MaxFileSize > 0 && e.size > g.opts.MaxFileSize {
			tooLarge++
			return
		}
		searched++
		if e.binary {
			binary++
		}
	}
	if plan == nil || plan.multiline {
		for i := range ll.files {
			visit(i)
		}
	} else {
		// The files of directories no change touched are as the base index holds them:
		// only their candidates are looked up, by id, and the others counted at once.
		q := ll.quietIndex()
		quiet := make([]bool, len(q.runs))
		for k := range q.runs {
			r := &q.runs[k]
			if r.dir == nil || r.dir.touched.Load() || g.opts.MaxFileSize > 0 && r.maxSize > g.opts.MaxFileSize {
				for i := r.lo; i < r.hi; i++ {
					visit(int(i))
				}
				continue
			}
			quiet[k] = true
			searched += int64(r.held)
			binary += int64(r.binary)
			if r.unheld {
				for i := r.lo; i < r.hi; i++ {
					if ll.files[i].ref == nil {
						visit(int(i))
					}
				}
			}
		}
		last, k := int32(-1), 0
		for w, word := range cand[:min(len(cand), (len(q.byID)+63)/64)] {
			for ; word != 0; word &= word - 1 {
				id := w*64 + bits.TrailingZeros64(word)
				if id >= len(q.byID) {
					break
				}
				i := q.byID[id] - 1
				if i < 0 || i == last {
					continue
				}
				last = i
				if k = q.run(i, k); !quiet[k] {
					continue
				}
				e := ll.files[i].indexed()
				searched--
				if e.binary {
					binary--
				}
				batch = append(batch, toRead{i: int(i), f: blockRead{f: e, cand: cand, fresh: true}, known: true})
				if len(batch) == batchLen {
					send()
				}
			}
		}
	}
	if over.ids > 0 {
		over.o.mu.RUnlock()
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	g.tooLarge.Add(tooLarge)
	g.searched.Add(searched)
	g.binary.Add(binary)
	g.visited.Add(int64(len(ll.files)))
	wg.Wait()
	return unindexed, ctx.Err()
}

// beneath is an open directory files below it are opened in, by relative path and
// without following symlinks.
type beneath struct {
	fd  int
	dir string
}

// quietIndex is what lets an indexed search go through a list by candidate: the list's
// runs of files of one directory, and which file holds each index id.
type quietIndex struct {
	runs []fileRun
	byID []int32 // 1 + the index in the list of the file an id is of; 0: none
}

// fileRun is a run of files of one directory, next to each other in a list.
type fileRun struct {
	dir          *liveDir
	lo, hi       int32 // the run is files[lo:hi]
	held, binary int32 // files the index holds, and binary ones among them
	maxSize      int64 // of the files held
	unheld       bool  // some file is not held
}

// quietIndex returns the list's quietIndex, made on first use.
func (ll *liveList) quietIndex() *quietIndex {
	ll.quietOnce.Do(func() {
		q := &quietIndex{}
		n := 0
		for i := range ll.files {
			if r := ll.files[i].ref; r != nil {
				n = max(n, int(r.id)+r.blk.count())
			}
		}
		q.byID = make([]int32, n)
		for i := range ll.files {
			f := &ll.files[i]
			if len(q.runs) == 0 || q.runs[len(q.runs)-1].dir != f.dir {
				q.runs = append(q.runs, fileRun{dir: f.dir, lo: int32(i)})
			}
			r := &q.runs[len(q.runs)-1]
			r.hi = int32(i) + 1
			ref := f.ref
			if ref == nil {
				r.unheld = true
				continue
			}
			r.held++
			if ref.binary {
				r.binary++
			}
			r.maxSize = max(r.maxSize, ref.size)
			for id := range uint32(ref.blk.count()) {
				q.byID[ref.id+id] = int32(i) + 1
			}
		}
		ll.quiet = q
	})
	return ll.quiet
}

// run returns the index of the run holding the file at i, looking first at run k and the
// one after it: the candidates of a directory come one after another.
func (q *quietIndex) run(i int32, k int) int {
	for end := min(k+2, len(q.runs)); k < end; k++ {
		if q.runs[k].lo <= i && i < q.runs[k].hi {
			return k
		}
	}
	k, _ = slices.BinarySearchFunc(q.runs, i, func(r fileRun, i int32) int {
		switch {
		case r.hi <= i:
			return -1
		case r.lo > i:
			return 1
		}
		return 0
	})
	return k
}
