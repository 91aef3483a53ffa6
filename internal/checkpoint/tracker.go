package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configure a [Tracker].
type Options struct {
	Root string // the workspace root, absolute and real
	Dir  string // the tracker's own directory, outside the workspace
	// MaxFileSize bounds the files whose content is kept; a larger file's changes are
	// listed, as not restorable.
	MaxFileSize int64
	// MaxStore bounds the bytes of content kept; past it new contents are not kept, and
	// the changes that needed them are listed as not restorable.
	MaxStore int64
	// MaxFiles bounds the paths of the workspace (0: 1,000,000): past it, checkpoints of
	// this workspace are off, rather than the whole of a home directory copied.
	MaxFiles int
	// Keep names ignored paths (slash-separated, relative to Root; globs as
	// path.Match takes them, matched against the path and each of its names) whose
	// changes are kept all the same.
	Keep   []string
	Logger *slog.Logger
	// Yield, if set, is called by the workers building the baseline between files and
	// directories, and may wait: Boris waits there while a search is under way, so that
	// reading a big workspace at startup does not slow the searches made meanwhile.
	Yield func()
}

// CallInfo says which call a checkpoint is for.
type CallInfo struct {
	Tool    string // "" for changes made between calls
	Call    string // the call in one line
	Session string
	Turn    string
	Label   string
}

// node is what the baseline knows of a path: its state, and what stat says of it, so
// that a path whose size, times, inode and mode are unchanged is not read again.
type node struct {
	st           State
	ino          uint64
	mtime, ctime int64
	seen         uint32 // the last walk that found the path (Tracker.walks)
	// gone is set once the node is no longer the baseline's (see baseline.set).
	gone bool
	// list is a directory's names as the last walk that read it found them: a cache, not
	// what the node says of the path; a walk sets it in place.
	list *listing
}

// baseline is what the tracker knows of every path under the root, by slash-separated
// relative path. It is written only with set and del, which mark the node a path had as
// gone: a listing holds the nodes of its directory's entries, and uses one only while it
// is not gone.
type baseline map[string]*node

func (b baseline) set(p string, n *node) {
	if old := b[p]; old != nil && old != n {
		old.gone = true
	}
	b[p] = n
}

func (b baseline) del(p string) {
	if old := b[p]; old != nil {
		old.gone = true
		delete(b, p)
	}
}

// meta is what lstat says of a path that the baseline keeps.
type meta struct {
	mode         fs.FileMode
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// nodeOf is a node with m's inode and times, and no state yet.
func nodeOf(m meta) *node {
	return &node{ino: m.ino, mtime: m.mtime, ctime: m.ctime}
}

// unchanged reports whether a path whose lstat is m still holds what p says: the same
// kind, mode, size, inode and times. Nothing is read to say so.
func (p *node) unchanged(m meta) bool {
	return p != nil && p.st.Kind == kindOf(m.mode) && p.ino == m.ino && p.mtime == m.mtime &&
		p.ctime == m.ctime && (p.st.Kind != File || p.st.Size == m.size) &&
		(p.st.Kind == Symlink || p.st.Mode == m.mode&modeBits)
}

// Tracker keeps the checkpoints of one workspace root. Its methods are safe for
// concurrent use; captures and rewinds happen one at a time.
type Tracker struct {
	opts  Options
	store *Store
	j     journal
	lock  *os.File // an exclusive lock on Dir, for this process's lifetime

	ready   chan struct{} // closed once the baseline is built
	stopped chan struct{} // closed by Close, before it waits: a baseline being built stops
	stop    sync.Once
	wg      sync.WaitGroup

	// mu is held across the reads of a capture or a rewind: two at once would each
	// record part of the same change.
	mu       sync.Mutex
	base     baseline        // every path under Root
	w        *watcher        // nil: every capture walks the tree
	dirty    map[string]bool // paths events named since the last capture
	walkAll  bool            // events were lost: the next capture walks the tree
	walks    uint32          // the walks of the tree made
	rootList *listing        // the root's names, as node.list
	racy     time.Duration   // racyTime, or what a test sets
	listed   int             // the directories whose names the last walk read
	batch    *batch          // the new contents of the capture under way, packed with its record
	list     []*Checkpoint
	seq      int
	closed   bool
	off      error // why checkpoints of this workspace are off, if they are
}

// ErrTooManyFiles is why checkpoints are off in a workspace of more than Options.MaxFiles
// paths.
var ErrTooManyFiles = errors.New("the workspace has too many files for checkpoints")

// ErrLocked is returned by [Open] when another process keeps checkpoints of the same root
// in the same directory.
var ErrLocked = errors.New("another Boris keeps the checkpoints of this workspace")

// Open opens the tracker's store and journal in opts.Dir (made with mode 0700), finishes a
// rewind a killed process left half done, and starts building the baseline in the
// background; captures wait for it ([Tracker.Ready]).
func Open(opts Options) (*Tracker, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(opts.Dir, "lock"), os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(lock); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%s: %w", opts.Dir, ErrLocked)
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "root"), []byte(opts.Root+"\n"), 0o600); err != nil {
		lock.Close()
		return nil, err
	}
	store, err := OpenStore(filepath.Join(opts.Dir, "objects"), opts.MaxStore)
	if err != nil {
		lock.Close()
		return nil, err
	}
	t := &Tracker{
		opts: opts, store: store, lock: lock,
		ready: make(chan struct{}), stopped: make(chan struct{}),
		base: baseline{}, dirty: map[string]bool{}, racy: racyTime,
	}
	jdir := filepath.Join(opts.Dir, "journal")
	t.j = journal{dir: jdir, store: store, spare: newSpareFile(jdir)}
	var torn []string
	if t.list, torn, err = t.j.load(); err != nil {
		lock.Close()
		return nil, err
	}
	if len(torn) > 0 {
		opts.Logger.Warn("checkpoints: removed records left torn by a crash", "files", torn)
	}
	if n := len(t.list); n > 0 {
		t.seq = t.list[n-1].Seq
	}
	for _, c := range t.list {
		if c.Pending {
			if err := t.finishRewind(c); err != nil {
				lock.Close()
				return nil, fmt.Errorf("finishing the rewind of %s: %w", c.ID, err)
			}
		}
	}
	if w, err := newWatcher(); err == nil {
		t.w = w
	} else {
		opts.Logger.Info("checkpoints: no file events, every call will walk the workspace", "err", err)
	}
	t.wg.Go(t.buildBaseline)
	return t, nil
}

// Ready is closed once the baseline is built: captures before then wait for it.
func (t *Tracker) Ready() <-chan struct{} { return t.ready }

// Root returns the workspace root.
func (t *Tracker) Root() string { return t.opts.Root }

// Store returns the tracker's content store.
func (t *Tracker) Store() *Store { return t.store }

// Off returns why checkpoints of this workspace are off, or nil; it waits for the baseline.
func (t *Tracker) Off(ctx context.Context) error {
	if err := t.WaitReady(ctx); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.off
}

// Close stops the tracker; it is safe to call twice.
func (t *Tracker) Close() error {
	// The baseline holds mu while it reads the workspace, which takes seconds in a big
	// one: it is told to stop first, so that closing never waits for it.
	t.stop.Do(func() { close(t.stopped) })
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		t.w.close()
	}
	t.j.spare.close()
	return t.lock.Close()
}

// buildBaseline reads every file of the workspace into the store, watching each directory
// before reading it, so that a change made meanwhile is either read or named by an event.
func (t *Tracker) buildBaseline() {
	defer close(t.ready)
	t.mu.Lock()
	defer t.mu.Unlock()
	found, tooMany := t.scan(nil, 0)
	if t.stopping() {
		t.off = errors.New("checkpoints are closed")
		return
	}
	if tooMany {
		t.off = fmt.Errorf("%w: over %d under %s; start Boris in a smaller directory, or with --allow-dir naming one", ErrTooManyFiles, cmpOrInt(t.opts.MaxFiles, 1_000_000), t.opts.Root)
		t.opts.Logger.Warn("checkpoints are off", "err", t.off)
		if t.w != nil {
			t.w.close()
			t.w = nil
		}
		return
	}
	t.base = make(baseline, len(found))
	for _, f := range found {
		t.base.set(f.rel, f.n)
	}
	// What events named during the build was read already, or is newer than what the
	// baseline holds; the first capture looks at it again.
}

// stopping reports whether Close has been called.
func (t *Tracker) stopping() bool {
	select {
	case <-t.stopped:
		return true
	default:
		return false
	}
}

// abs returns the absolute path of rel.
func (t *Tracker) abs(rel string) string {
	if rel == "" {
		return t.opts.Root
	}
	return filepath.Join(t.opts.Root, filepath.FromSlash(rel))
}

// ignoredNode is what the baseline knows of an ignored path: its kind, never its content.
func ignoredNode(m meta) *node {
	n := nodeOf(m)
	n.st = State{Kind: kindOf(m.mode), Lost: "ignored"}
	return n
}

func kindOf(m fs.FileMode) Kind {
	switch {
	case m.IsDir():
		return Dir
	case m&fs.ModeSymlink != 0:
		return Symlink
	}
	return File
}

// modeBits are the bits of a mode a checkpoint keeps.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// evaluate returns what the baseline should know of rel, whose lstat is m, reading a
// file only when prev (if any) does not already know its content.
func (t *Tracker) evaluate(rel string, m meta, prev *node) *node {
	if m.mode.IsRegular() && prev.unchanged(m) {
		return prev // unchanged: nodes are never modified, only replaced
	}
	n := nodeOf(m)
	mode := m.mode
	switch {
	case mode.IsDir():
		n.st = State{Kind: Dir, Mode: mode & modeBits}
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(t.abs(rel))
		n.st = State{Kind: Symlink, Link: target}
		if err != nil {
			n.st.Lost = "unreadable: " + reason(err)
		}
	case mode.IsRegular():
		n.st = State{Kind: File, Mode: mode & modeBits, Size: m.size}
		n.st.Blob, n.st.Lost = t.keep(rel, m.size)
	default:
		n.st = State{Kind: File, Mode: mode & modeBits, Lost: "not a regular file"}
	}
	return n
}

// keep reads the file at rel into the store.
func (t *Tracker) keep(rel string, size int64) (digest, lost string) {
	if t.opts.MaxFileSize > 0 && size > t.opts.MaxFileSize {
		return "", fmt.Sprintf("larger than %d bytes", t.opts.MaxFileSize)
	}
	f, err := openRead(t.abs(rel))
	if err != nil {
		return "", "unreadable: " + reason(err)
	}
	defer f.Close()
	// Read in one buffer of the size stat gave, and one byte more to see it did not grow.
	data := make([]byte, size+1)
	n, err := io.ReadFull(f, data)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		data = data[:n]
	case err != nil:
		return "", "unreadable: " + reason(err)
	default: // it grew since stat
		limit := t.opts.MaxFileSize
		if limit <= 0 {
			limit = 1 << 40
		}
		rest, err := io.ReadAll(io.LimitReader(f, limit))
		if err != nil {
			return "", "unreadable: " + reason(err)
		}
		data = append(data, rest...)
		if t.opts.MaxFileSize > 0 && int64(len(data)) > t.opts.MaxFileSize {
			return "", fmt.Sprintf("larger than %d bytes", t.opts.MaxFileSize)
		}
	}
	d, err := t.store.put(data, t.batch)
	if errors.Is(err, ErrStoreFull) {
		return "", fmt.Sprintf("the checkpoint store is full (%d bytes)", t.opts.MaxStore)
	}
	if err != nil {
		return "", reason(err)
	}
	return d, ""
}

func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// defaultIgnored are the directories whose files are not kept unless Keep names them:
// dependencies and caches that a tool rebuilds. A repository's own .git is never kept.
var defaultIgnored = []string{"node_modules", "__pycache__", ".venv", ".tox", ".gradle", ".next", ".cache"}

// ignored reports whether rel is not kept. A repository's .git never is; Keep cannot
// bring it in.
func (t *Tracker) ignored(rel string, isDir bool) bool {
	base := path.Base(rel)
	if base == ".git" {
		return true
	}
	if !isDir || !slices.Contains(defaultIgnored, base) {
		return false
	}
	for _, k := range t.opts.Keep {
		if ok, _ := path.Match(k, rel); ok {
			return false
		}
		if ok, _ := path.Match(k, base); ok {
			return false
		}
	}
	return true
}

// underIgnored reports whether rel lies inside an ignored directory, which is never
// watched: then only a walk sees its changes.
func (t *Tracker) underIgnored(rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if n, ok := t.base[d]; ok && n.st.Lost == "ignored" {
			return true
		}
	}
	return false
}

// WaitReady waits for the baseline, or for ctx.
func (t *Tracker) WaitReady(ctx context.Context) error {
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Capture records what changed in the workspace since the last capture as a checkpoint
// for the call info names, and returns it; nil if nothing changed (and no label was
// given). It waits for the baseline.
func (t *Tracker) Capture(ctx context.Context, info CallInfo) (*Checkpoint, error) {
	if err := t.WaitReady(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("checkpoints are closed")
	}
	if t.off != nil {
		if info.Label != "" {
			return nil, t.off
		}
		return nil, nil
	}
	changes := t.changes()
	if len(changes) == 0 && info.Label == "" {
		return nil, nil
	}
	return t.record(info, changes, false)
}

// record writes a new checkpoint to the journal.
func (t *Tracker) record(info CallInfo, changes []Change, pending bool) (*Checkpoint, error) {
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	c := &Checkpoint{
		ID: ID(t.seq + 1), Seq: t.seq + 1, Time: time.Now().UTC().Truncate(time.Millisecond),
		Tool: info.Tool, Call: info.Call, Session: info.Session, Turn: info.Turn, Label: info.Label,
		Changes: changes, Pending: pending,
	}
	b := t.batch
	t.batch = nil
	var err error
	if pending {
		err = t.store.unstage(b)
		if err == nil {
			err = t.j.write(c, true)
		}
	} else if err = t.j.writePack(c, b); err != nil {
		// Keep the contents loose, so that what the baseline now names is kept.
		if err = t.store.unstage(b); err == nil {
			err = t.j.write(c, false)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("writing checkpoint %s: %w", c.ID, err)
	}
	t.seq++
	t.list = append(t.list, c)
	return c, nil
}

// changes returns what changed since the last capture, and updates the baseline. The
// new contents it read are held in t.batch for the record that follows ([Tracker.record]);
// when nothing changed, they are kept loose.
func (t *Tracker) changes() []Change {
	t.batch = &batch{}
	out := t.findChanges()
	if len(out) == 0 {
		if err := t.store.unstage(t.batch); err != nil {
			t.opts.Logger.Warn("checkpoints: keeping a content", "err", err)
		}
		t.batch = nil
	}
	return out
}

func (t *Tracker) findChanges() []Change {
	if t.w != nil && t.w.drain(t.dirty) {
		t.walkAll = true
	}
	if t.w == nil || t.walkAll {
		// Lost events leave the watches as they were: only what changed meanwhile must be
		// found by looking at everything.
		t.walkAll = false
		clear(t.dirty)
		return t.walkChanges()
	}
	if len(t.dirty) == 0 {
		return nil
	}
	paths := make([]string, 0, len(t.dirty))
	for p := range t.dirty {
		paths = append(paths, p)
	}
	clear(t.dirty)
	slices.Sort(paths)
	fresh := t.readChanged(paths)
	var out []Change
	seen := map[string]bool{}
	for _, p := range paths {
		t.check(p, fresh, &out, seen)
	}
	return out
}

// readChanged reads into the store, a few at once, the files among paths whose size,
// times, inode or mode differ from the baseline's, and returns what the baseline should
// now know of them: check takes a node from it when the file's lstat still matches.
func (t *Tracker) readChanged(paths []string) map[string]*node {
	type file struct {
		rel  string
		m    meta
		prev *node
		n    *node
	}
	var files []file
	for _, p := range paths {
		prev := t.base[p]
		if prev != nil && prev.st.Kind != File {
			continue
		}
		info, err := os.Lstat(t.abs(p))
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if m := metaOf(info); !prev.unchanged(m) {
			files = append(files, file{rel: p, m: m, prev: prev})
		}
	}
	if len(files) < 2 {
		return nil // one file is read by check as soon
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0)*2, 8, len(files)) {
		wg.Go(func() {
			for i := range next {
				f := &files[i]
				if !t.underIgnored(f.rel) && !t.ignored(f.rel, false) {
					f.n = t.evaluate(f.rel, f.m, f.prev)
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	fresh := make(map[string]*node, len(files))
	for _, f := range files {
		if f.n != nil {
			fresh[f.rel] = f.n
		}
	}
	return fresh
}

func cmpOrInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// walkChanges compares the whole tree with the baseline: for when events were lost or
// cannot be had.
func (t *Tracker) walkChanges() []Change {
	t.walks++
	found, tooMany := t.scan(t.base, t.walks)
	if tooMany {
		t.off = fmt.Errorf("%w: over %d under %s", ErrTooManyFiles, cmpOrInt(t.opts.MaxFiles, 1_000_000), t.opts.Root)
		t.opts.Logger.Warn("checkpoints are off", "err", t.off)
		return nil
	}
	var out []Change
	for p, old := range t.base {
		if old.seen != t.walks {
			out = append(out, Change{Path: p, Before: old.st})
			t.base.del(p)
		}
	}
	for _, f := range found {
		n := f.n
		if old, ok := t.base[f.rel]; !ok {
			out = append(out, Change{Path: f.rel, After: n.st})
		} else if !old.st.Same(n.st) || old.st.Lost == "ignored" && (old.mtime != n.mtime || old.st.Kind != n.st.Kind) {
			out = append(out, Change{Path: f.rel, Before: old.st, After: n.st})
		}
		t.base.set(f.rel, n)
	}
	return out
}

// check compares the path an event named (and, for a directory that came or went, what
// is under it) with the baseline, appending what changed to out.
func (t *Tracker) check(rel string, fresh map[string]*node, out *[]Change, seen map[string]bool) {
	if seen[rel] || rel == "" {
		return
	}
	seen[rel] = true
	if t.underIgnored(rel) {
		return
	}
	prev := t.base[rel]
	info, err := os.Lstat(t.abs(rel))
	if err != nil {
		if prev == nil {
			return
		}
		t.removeUnder(rel, prev, out, seen)
		*out = append(*out, Change{Path: rel, Before: prev.st})
		t.base.del(rel)
		return
	}
	m := metaOf(info)
	if t.ignored(rel, info.IsDir()) {
		n := ignoredNode(m)
		if prev == nil || prev.st.Kind != n.st.Kind || prev.mtime != n.mtime {
			ch := Change{Path: rel, After: n.st}
			if prev != nil {
				ch.Before = prev.st
			}
			*out = append(*out, ch)
		}
		t.base.set(rel, n)
		return
	}
	n := fresh[rel]
	if !n.unchanged(m) {
		n = t.evaluate(rel, m, prev)
	}
	if prev != nil && prev.st.Kind == Dir && n.st.Kind != Dir {
		t.removeUnder(rel, prev, out, seen)
	}
	switch {
	case prev == nil:
		*out = append(*out, Change{Path: rel, After: n.st})
	case !prev.st.Same(n.st):
		*out = append(*out, Change{Path: rel, Before: prev.st, After: n.st})
	}
	t.base.set(rel, n)
	if n.st.Kind == Dir && (prev == nil || prev.st.Kind != Dir || prev.ino != n.ino) {
		// A directory made, or moved here: watch it and look at everything in it.
		if t.w != nil {
			if err := t.w.add(t.abs(rel), rel); err != nil {
				t.walkAll = true
			}
		}
		d, err := os.Open(t.abs(rel))
		if err != nil {
			return
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		slices.Sort(names)
		for _, name := range names {
			t.check(path.Join(rel, name), fresh, out, seen)
		}
	}
}

// removeUnder records as removed everything the baseline holds under the directory rel.
func (t *Tracker) removeUnder(rel string, prev *node, out *[]Change, seen map[string]bool) {
	if prev.st.Kind != Dir {
		return
	}
	prefix := rel + "/"
	for p, n := range t.base {
		if strings.HasPrefix(p, prefix) {
			seen[p] = true
			*out = append(*out, Change{Path: p, Before: n.st})
			t.base.del(p)
		}
	}
	if t.w != nil {
		t.w.removeUnder(rel)
	}
}

// List returns the checkpoints, newest first, at most limit of them (0: all).
func (t *Tracker) List(limit int) []*Checkpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.list)
	slices.Reverse(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Get returns the checkpoint with this id.
func (t *Tracker) Get(id string) (*Checkpoint, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(id)
}

func (t *Tracker) get(id string) (*Checkpoint, bool) {
	seq, ok := parseID(id)
	if !ok {
		return nil, false
	}
	i, found := slices.BinarySearchFunc(t.list, seq, func(c *Checkpoint, s int) int { return c.Seq - s })
	if !found {
		return nil, false
	}
	return t.list[i], true
}

// flock takes the lock on f. A lock this process let go of a moment ago can still be held
// by a command it was starting: between fork and exec the child shares every descriptor,
// close-on-exec or not. So a refusal is tried again for up to a second, which such a
// child's exec takes at most, before it counts as another Boris's lock.
func flock(f *os.File) error {
	var err error
	for range 100 {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
