package search

import (
	"context"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/glob"
)

// Scope decides which paths may appear in results; [pathscope.Resolver] implements it.
type Scope interface {
	// Hidden reports whether a path found while walking must be left out entirely.
	Hidden(abs string) bool
	// Check refuses a canonical path outside the allowed directories or denied.
	Check(real string) error
	// Open opens the canonical path real (flag as for os.OpenFile) so that it cannot lead
	// out of scope, and refuses when what it opened is not real (see
	// pathscope.Resolver.Open). Searches open their start this way, and linked files;
	// everything else is opened by name inside its open parent directory, without
	// following symlinks.
	Open(real string, flag int) (*os.File, error)
}

// Filter says which files a search looks at.
type Filter struct {
	Hidden bool // include dotfiles and dot-directories (.git is never entered)
	// NoIgnore does not apply .gitignore, .ignore and .git/info/exclude, and enters
	// node_modules directories, which are otherwise skipped as editors skip them
	// (unless the search starts inside one).
	NoIgnore bool
	Globs    []string // file globs; a leading '!' excludes (see [glob.Glob])
	Types    []string // file type names from [Types]
	// MaxFileSize is the largest file searched; 0 means no limit.
	MaxFileSize int64
	// Top is where ignore files in parent directories stop being read when the root is
	// not inside a git repository (normally the session's working directory).
	Top string
}

// depsDir is the dependency directory searches skip unless asked (see [Filter.NoIgnore]).
const depsDir = "node_modules"

// Skipped counts what a search did not look at, by reason. Paths the [Scope] hides are
// never counted. Ignored and hidden directories count once: they are not entered.
type Skipped struct {
	Ignored    int // matched .gitignore, .ignore or .git/info/exclude
	Hidden     int // dotfiles and dot-directories
	Binary     int // NUL byte in the first 8 KiB
	TooLarge   int // over Filter.MaxFileSize
	Special    int // FIFOs, sockets, devices: never opened
	Symlinks   int // links to directories, dangling links and links out of scope: not followed
	Unreadable int // permission denied or vanished
	Deps       int // node_modules directories: not entered
}

// counters is Skipped updated from many goroutines.
type counters struct {
	ignored, hidden, binary, tooLarge, special, symlinks, unreadable, deps atomic.Int64
}

func (c *counters) set(s Skipped) {
	c.ignored.Store(int64(s.Ignored))
	c.hidden.Store(int64(s.Hidden))
	c.binary.Store(int64(s.Binary))
	c.tooLarge.Store(int64(s.TooLarge))
	c.special.Store(int64(s.Special))
	c.symlinks.Store(int64(s.Symlinks))
	c.unreadable.Store(int64(s.Unreadable))
	c.deps.Store(int64(s.Deps))
}

func (c *counters) snapshot() Skipped {
	return Skipped{
		Ignored:    int(c.ignored.Load()),
		Hidden:     int(c.hidden.Load()),
		Binary:     int(c.binary.Load()),
		TooLarge:   int(c.tooLarge.Load()),
		Special:    int(c.special.Load()),
		Symlinks:   int(c.symlinks.Load()),
		Unreadable: int(c.unreadable.Load()),
		Deps:       int(c.deps.Load()),
	}
}

// job is a directory to read or a file to visit.
type job struct {
	path  string       // absolute path as shown (under the root)
	open  string       // path to open, when it differs (a symlink's in-scope target)
	dir   bool         //
	ign   *ignoreChain // rules in force in the directory (for dir jobs: its parent's)
	entry fs.DirEntry  // for files found in a directory listing
	// parent is the open directory the job was found in; it is opened by name there. Nil
	// for the start and for linked files (opened through the Scope at open).
	parent *dirHandle
	// at, for a file found in a live list, is the open directory it is opened below, at
	// rel: its path below at.dir, NUL-terminated, in the reading worker's buffer. Its path
	// is then made only when asked for (see shown), from lf.
	at  *beneath
	rel []byte
	lf  *liveFile
}

// shown returns the path results show for j.
func (j *job) shown() string {
	if j.path == "" && j.lf != nil {
		j.path = j.lf.path()
	}
	return j.path
}

// dirHandle is an open directory shared by the jobs found in it; the last to finish closes it.
type dirHandle struct {
	f    *os.File
	fd   int
	refs atomic.Int32
}

func (d *dirHandle) hold() *dirHandle {
	d.refs.Add(1)
	return d
}

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		d.f.Close()
	}
}

// openIn opens the job's file or directory: by name inside its open parent, never
// following a symlink (one swapped in since the listing is refused by the kernel), or
// through the Scope when it has no parent. The caller closes the descriptor.
func openJob(scope Scope, j *job, flag int) (int, error) {
	if j.at != nil {
		return openBeneathC(j.at.fd, j.rel, flag)
	}
	if j.parent != nil && j.open == "" {
		for {
			fd, err := unix.Openat(j.parent.fd, j.entry.Name(), flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
			if err != unix.EINTR {
				return fd, err
			}
		}
	}
	name := j.path
	if j.open != "" {
		name = j.open
	}
	f, err := scope.Open(name, flag|unix.O_NONBLOCK)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return unix.Dup(int(f.Fd()))
}

// visitFunc is called for every file (and, for find, directory) that passes the filters.
// worker identifies the calling goroutine, for per-worker buffers.
type visitFunc func(worker int, j *job)

// walker walks a tree with a pool of goroutines sharing one LIFO stack of jobs.
type walker struct {
	ctx      context.Context
	root     string // the search root, for relative paths
	scope    Scope
	filter   *Filter
	include  []*glob.Glob
	exclude  []*glob.Glob
	visit    visitFunc
	dirs     bool // visit directories too
	inline   bool // visit files while reading their directory instead of queueing them
	repoTop  string
	exclude0 *ignoreSet // .git/info/exclude, applied at repoTop
	skipDeps bool       // skip node_modules directories
	// recordRules, if set, is fed the ignore files parentRules reads.
	recordRules *maphash.Hash
	counters

	mu     sync.Mutex
	cond   *sync.Cond
	stack  []job
	active int
	done   bool
}

func newWalker(ctx context.Context, root string, scope Scope, f *Filter, visit visitFunc) (*walker, error) {
	w := &walker{ctx: ctx, root: root, scope: scope, filter: f, visit: visit}
	w.skipDeps = !f.NoIgnore && !slices.Contains(strings.Split(filepath.ToSlash(root), "/"), depsDir)
	w.cond = sync.NewCond(&w.mu)
	for _, g := range f.Globs {
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		g = strings.TrimPrefix(g, "./")
		if g == "" {
			continue
		}
		cg, err := glob.Compile(g, glob.Extended)
		if err != nil {
			return nil, fmt.Errorf("%w: glob %q: %v", ErrFilter, g, err)
		}
		if neg {
			w.exclude = append(w.exclude, cg)
		} else {
			w.include = append(w.include, cg)
		}
	}
	for _, t := range f.Types {
		globs, ok := typeGlobs(t)
		if !ok {
			return nil, fmt.Errorf("%w: unknown type %q; known types: %s", ErrFilter, t, strings.Join(TypeNames(), ", "))
		}
		for _, g := range globs {
			cg, err := glob.Compile(g, glob.Extended)
			if err != nil {
				return nil, err
			}
			w.include = append(w.include, cg)
		}
	}
	return w, nil
}

// run walks the directory start (the root or a directory under it) and returns when every
// job is done or ctx ends.
func (w *walker) run(start string) error {
	var chain *ignoreChain
	if !w.filter.NoIgnore {
		chain = w.parentRules(start)
	}
	w.stack = append(w.stack, job{path: start, dir: true, ign: chain})
	stop := context.AfterFunc(w.ctx, func() {
		w.mu.Lock()
		w.done = true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for i := range workerCount() {
		wg.Go(func() { w.work(i) })
	}
	wg.Wait()
	// Jobs left when the walk was cancelled still hold their directories open.
	for _, j := range w.stack {
		if j.parent != nil {
			j.parent.release()
		}
	}
	w.stack = nil
	return w.ctx.Err()
}

func (w *walker) work(id int) {
	for {
		j, ok := w.pop()
		if !ok {
			return
		}
		if j.dir {
			w.readDir(id, &j)
		} else {
			w.visit(id, &j)
		}
		if j.parent != nil {
			j.parent.release()
		}
		w.finish()
	}
}

func (w *walker) pop() (job, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && w.active > 0 && !w.done {
		w.cond.Wait()
	}
	if w.done || len(w.stack) == 0 {
		w.done = true
		w.cond.Broadcast()
		return job{}, false
	}
	j := w.stack[len(w.stack)-1]
	w.stack[len(w.stack)-1] = job{}
	w.stack = w.stack[:len(w.stack)-1]
	w.active++
	return j, true
}

func (w *walker) finish() {
	w.mu.Lock()
	w.active--
	if w.active == 0 && len(w.stack) == 0 {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *walker) push(batch []job) {
	if len(batch) == 0 {
		return
	}
	w.mu.Lock()
	w.stack = append(w.stack, batch...)
	w.cond.Broadcast()
	w.mu.Unlock()
}

const specialTypes = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice | fs.ModeIrregular

// readDir lists one directory, queueing its subdirectories and handing its files to the
// workers. The directory handle's reference count stays visible here: each job queued
// with the handle as its parent holds a reference, released when that job is done.
func (w *walker) readDir(id int, j *job) {
	fd, err := openJob(w.scope, j, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		w.unreadable.Add(1)
		return
	}
	d := &dirHandle{f: os.NewFile(uintptr(fd), j.path), fd: fd}
	d.refs.Store(1)
	defer d.release()
	entries, err := d.f.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		w.unreadable.Add(1)
		return
	}
	ign := w.dirIgnore(j, d, entries)
	batch := make([]job, 0, len(entries))
	for _, e := range entries {
		nj, ok := w.entryJob(d, j.path, e, ign)
		switch {
		case !ok:
		case nj.dir:
			if w.dirs {
				w.visit(id, &nj)
			}
			if nj.open != "" {
				w.symlinks.Add(1) // a linked directory is listed, not entered
				continue
			}
			nj.ign = ign
			nj.parent = d.hold()
			batch = append(batch, nj)
		case w.inline:
			w.visit(id, &nj)
		default:
			nj.parent = nil
			if nj.open == "" {
				nj.parent = d.hold() // read through the directory's handle
			}
			batch = append(batch, nj)
		}
	}
	w.push(batch)
}

// dirIgnore returns the ignore rules that apply in the directory of j: its parent's, with
// the directory's own ignore files (read through d) added.
func (w *walker) dirIgnore(j *job, d *dirHandle, entries []fs.DirEntry) *ignoreChain {
	if w.filter.NoIgnore {
		return j.ign
	}
	var extra *ignoreSet
	if j.path == w.repoTop {
		extra = w.exclude0
	}
	return loadIgnore(j.ign, j.path, func(name string) ([]byte, bool) {
		for _, e := range entries {
			if e.Name() == name && e.Type().IsRegular() {
				return readSmallAt(d.fd, name, maxIgnoreFile)
			}
		}
		return nil, false
	}, extra)
}

// entryJob returns the job for entry e of the directory dir, whose handle d is its parent
// (not yet held), or false when the search
// skips it: a denied, hidden, special, ignored or unwanted entry, a dependency directory
// or a link that leads nowhere it may go. What it skips it counts, except denied names.
func (w *walker) entryJob(d *dirHandle, dir string, e fs.DirEntry, ign *ignoreChain) (job, bool) {
	name := e.Name()
	abs := joinPath(dir, name)
	if w.scope.Hidden(abs) {
		return job{}, false // a denied name is not even counted
	}
	if name[0] == '.' && !w.filter.Hidden || name == ".git" {
		if !w.filter.Hidden {
			w.hidden.Add(1)
		}
		return job{}, false
	}
	t := e.Type()
	nj := job{path: abs, entry: e, dir: t.IsDir(), parent: d}
	switch {
	case t&fs.ModeSymlink != 0:
		real, isDir, ok := w.followLink(abs)
		if !ok {
			return job{}, false
		}
		nj.open, nj.dir = real, isDir
	case t&specialTypes != 0:
		w.special.Add(1)
		return job{}, false
	}
	if ign != nil && ign.ignored(abs, nj.dir) {
		w.ignored.Add(1)
		return job{}, false
	}
	if nj.dir && w.skipDeps && name == depsDir {
		w.deps.Add(1)
		return job{}, false
	}
	return nj, w.wanted(abs, nj.dir)
}

// followLink resolves the symlink at abs. It reports ok only for links whose target is in
// scope and is a regular file or a directory; the others are counted and dropped.
func (w *walker) followLink(abs string) (real string, isDir, ok bool) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil || w.scope.Check(real) != nil {
		w.symlinks.Add(1)
		return "", false, false
	}
	info, err := os.Stat(real)
	switch {
	case err != nil:
		w.symlinks.Add(1)
		return "", false, false
	case info.IsDir():
		return real, true, true
	case info.Mode().IsRegular():
		return real, false, true
	}
	w.special.Add(1)
	return "", false, false
}

// wanted applies the glob and type filters: exclusions prune directories too, inclusions
// apply to files only.
func (w *walker) wanted(abs string, isDir bool) bool {
	if len(w.exclude) == 0 && len(w.include) == 0 {
		return true
	}
	rel := relUnder(abs, w.root)
	for _, g := range w.exclude {
		if g.Match(rel) {
			return false
		}
	}
	if isDir || len(w.include) == 0 {
		return true
	}
	for _, g := range w.include {
		if g.Match(rel) {
			return true
		}
	}
	return false
}

// parentRules loads the ignore files of the directories above start, from the top of its
// git repository (or Filter.Top, or the root) down, so a search of a subdirectory obeys
// the same rules as a search of the whole project.
func (w *walker) parentRules(start string) *ignoreChain {
	for d := start; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			w.repoTop = d
			break
		}
		if d == "/" || d == "." {
			break
		}
	}
	top := w.root
	switch {
	case w.repoTop != "":
		top = w.repoTop
		if data, err := readSmall(filepath.Join(w.repoTop, ".git", "info", "exclude"), maxIgnoreFile); err == nil {
			w.exclude0 = parseIgnore(data)
			w.record("exclude", data)
		}
	case w.filter.Top != "":
		if t, err := filepath.EvalSymlinks(w.filter.Top); err == nil && isUnder(w.root, t) {
			top = t
		}
	}
	var dirs []string
	for d := filepath.Dir(start); isUnder(d, top) && d != start; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || d == "/" {
			break
		}
	}
	var chain *ignoreChain
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if w.scope.Hidden(d) {
			continue
		}
		var extra *ignoreSet
		if d == w.repoTop {
			extra = w.exclude0
		}
		chain = loadIgnore(chain, d, func(name string) ([]byte, bool) {
			data, err := readSmall(filepath.Join(d, name), maxIgnoreFile)
			if err == nil {
				w.record(filepath.Join(d, name), data)
			}
			return data, err == nil
		}, extra)
	}
	return chain
}

// record feeds an ignore file read to recordRules, if set.
func (w *walker) record(name string, data []byte) {
	if w.recordRules != nil {
		w.recordRules.WriteString(name)
		w.recordRules.WriteByte(0)
		w.recordRules.Write(data)
		w.recordRules.WriteByte(0)
	}
}

func isUnder(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// appendPath appends joinPath(dir, name) to b.
func appendPath(b []byte, dir, name string) []byte {
	if dir != "/" {
		b = append(b, dir...)
	}
	b = append(b, '/')
	return append(b, name...)
}

// appendBelow appends to b the path of name in dir (top or a directory below it) relative
// to top, NUL-terminated.
func appendBelow(b []byte, top, dir, name string) []byte {
	if dir != top {
		b = append(b, relUnder(dir, top)...)
		b = append(b, '/')
	}
	b = append(b, name...)
	return append(b, 0)
}

// openNoBlock opens name for reading without blocking, so that a FIFO swapped in after the
// type check cannot hang the search, and bounds how long a read may wait on a pseudo-file
// that waits for data (such as /proc/kmsg).
func openNoBlock(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		_ = f.SetReadDeadline(time.Now().Add(time.Second))
	}
	return f, err
}

// workerCount is how many goroutines walk and search at once.
func workerCount() int { return max(runtime.GOMAXPROCS(0), 2) }
