package checkpoint

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// listing is the names of a directory as a walk read them, and what fstat said of the
// directory just before: a later walk that finds the same device, inode and times reads
// the names from here instead of the directory. A name made, removed or renamed in a
// directory sets its modification and change times to the time of day, so unchanged times
// mean unchanged names, but for one thing: a change made in the same tick of the file
// system's clock as the one before it leaves the times as they were. Such a change can
// come after the names were read only if the directory's times were that close to the
// moment they were read; so a listing read less than racy after its directory's last
// change is not used (the idea of git's racily clean index entries), and the directory is
// read again.
type listing struct {
	dev, ino     uint64
	mtime, ctime int64
	read         int64  // the time of day (ns) before the names were read
	names        []byte // each entry's d_type, name and a NUL, as read
	// nodes are the entries' nodes in the baseline, in the order of names (nil: none, or
	// not known), as the last walk found them: one gone since is looked up again.
	nodes []*node
}

// racyTime is how long after a directory's last change its names must have been read for
// a walk to use them again: over the coarsest clock of the file systems listings trusts
// (a second, on ext4 with small inodes) and its tick.
const racyTime = 2 * time.Second

// listings says where a walk may keep and use listings: in directories on the root's file
// system (by device), when that is one whose directories' times follow their names.
type listings struct {
	dev  uint64
	ok   bool
	racy int64 // ns
}

// keeps reports whether a listing of the directory whose fstat is m is worth keeping.
func (ls listings) keeps(m meta) bool { return ls.ok && m.dev == ls.dev }

// holds reports whether l still holds the names of the directory whose fstat is m.
func (ls listings) holds(l *listing, m meta) bool {
	return l != nil && ls.keeps(m) && l.dev == m.dev && l.ino == m.ino && l.mtime == m.mtime &&
		l.ctime == m.ctime && max(l.mtime, l.ctime) < l.read-ls.racy
}

// appendPath appends the path of the entry name of dir to b.
func appendPath(b []byte, dir string, name []byte) []byte {
	if dir != "" {
		b = append(append(b, dir...), '/')
	}
	return append(b, name...)
}

// scanned is a path a scan found new or changed, and what the baseline should now know of
// it.
type scanned struct {
	rel string
	m   meta
	n   *node
}

// scan walks the tree under the root, watching its directories, and returns the paths
// that prev (the baseline; nil to build one) does not already know as they are, with
// their new nodes: a file whose size, times, inode and mode are unchanged is not read
// again, nor listed. Each path prev knows and the walk found is marked seen with walk,
// so that what is not marked is gone. Directories are read by a few goroutines at once
// (the walk is mostly system calls), then the files to read are read by a few at once.
// Past Options.MaxFiles paths it stops, reads nothing, and reports tooMany. The names of
// each directory read are kept in its node (see listing); a directory whose times show
// no change since is not read again, only its entries looked up.
func (t *Tracker) scan(prev map[string]*node, walk uint32) (found []scanned, tooMany bool) {
	limit := int64(cmpOrInt(t.opts.MaxFiles, 1_000_000))
	var (
		count atomic.Int64
		over  atomic.Bool
		wmu   sync.Mutex // guards t.w, which a failed watch closes
	)
	watch := func(rel string) {
		wmu.Lock()
		defer wmu.Unlock()
		if t.w == nil {
			return
		}
		if err := t.w.add(t.abs(rel), rel); err != nil {
			t.opts.Logger.Info("checkpoints: cannot watch a directory; walking the workspace instead", "dir", t.abs(rel), "err", err)
			t.w.close()
			t.w = nil
		}
	}
	// The directories to read: a stack shared by the workers, each of whom pushes the
	// directories it finds. The walk ends when the stack is empty and no worker is reading
	// a directory, which could push more. A directory is pushed open (opened from its
	// parent's descriptor as the parent was read) while fewer than maxHeld are, else by
	// name.
	type pending struct {
		rel  string
		fd   int       // -1: not open
		m    meta      // the directory's fstat, when it is open
		list **listing // where its names are kept (in its node)
	}
	const maxHeld = 256
	var (
		mu     sync.Mutex
		cond   = sync.NewCond(&mu)
		dirs   = []pending{{rel: "", fd: -1, list: &t.rootList}}
		active int
		held   atomic.Int64 // directories pushed open
		listed atomic.Int64 // directories whose names were read
	)
	openSub := func(name []byte) bool {
		// An ignored directory is not read: it needs no descriptor.
		return held.Load() < maxHeld && string(name) != ".git" && !slices.Contains(defaultIgnored, string(name))
	}
	ls := listingsOf(t.opts.Root, t.racy)
	// The baseline, built in the background, pauses between directories and files when
	// Options.Yield asks it to, and stops when the tracker closes; a capture, which a call
	// waits for, does neither. (It keeps the process's priority: the first call that
	// changes the workspace waits for it.)
	baseline := prev == nil
	pause := func() {}
	if baseline && t.opts.Yield != nil {
		pause = t.opts.Yield
	}
	quit := func() bool { return baseline && t.stopping() }
	watch("")
	workers := min(max(runtime.GOMAXPROCS(0), 2), 8)
	results := make([][]scanned, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]byte, 32<<10)
			var mine []scanned
			var subdirs []pending
			var relBuf []byte // the path visited, built without allocating
			var visited int64 // in the directory being read
			// visit looks at an entry of dir; sub is the entry opened, if it was, which
			// visit keeps or closes. p is the entry's node in the baseline as the listing
			// of dir holds it, if it does; visit returns the node the baseline has.
			visit := func(dir string, name []byte, m meta, sub int, p *node) *node {
				visited++
				relBuf = relBuf[:0]
				if p == nil || p.gone {
					relBuf = appendPath(relBuf, dir, name)
					p = prev[string(relBuf)]
				}
				if p != nil {
					p.seen = walk // only this worker visits rel
				}
				isDir := m.mode.IsDir()
				same := p.unchanged(m) && p.st.Lost != "ignored"
				if !isDir && same && string(name) != ".git" {
					return p // what most paths are: nothing allocated, nothing looked up
				}
				if len(relBuf) == 0 {
					relBuf = appendPath(relBuf, dir, name)
				}
				rel := string(relBuf)
				if sub >= 0 && (!isDir || t.ignored(rel, isDir)) {
					closeDir(sub)
					sub = -1
				}
				if t.ignored(rel, isDir) {
					if p == nil || p.st.Lost != "ignored" || p.st.Kind != kindOf(m.mode) || p.mtime != m.mtime || p.ino != m.ino {
						mine = append(mine, scanned{rel: rel, m: m, n: ignoredNode(m)})
					}
					return p
				}
				var n *node
				switch {
				case same:
					n = p
				case isDir || !m.mode.IsRegular() && m.mode&os.ModeSymlink == 0:
					n = t.evaluate(rel, m, nil) // nothing to read
				}
				if isDir {
					// A directory known as it is is watched already: lost events leave the
					// watches as they were. One made or moved in meanwhile is not, nor one
					// whose old watch went with an event lost (a directory removed and made
					// again can have the same inode), and its times tell so.
					if p == nil || p.st.Kind != Dir || !p.unchanged(m) {
						watch(rel)
					}
					if sub >= 0 {
						held.Add(1)
					}
					// Its names are kept in its node, the one the baseline has or the
					// new one.
					subdirs = append(subdirs, pending{rel: rel, fd: sub, m: m, list: &n.list})
				}
				if !same {
					mine = append(mine, scanned{rel: rel, m: m, n: n})
				}
				return p
			}
			mu.Lock()
			for {
				for len(dirs) == 0 && active > 0 {
					cond.Wait()
				}
				if len(dirs) == 0 || over.Load() || quit() {
					break
				}
				dir := dirs[len(dirs)-1]
				dirs = dirs[:len(dirs)-1]
				active++
				mu.Unlock()
				pause()
				if dir.fd >= 0 {
					held.Add(-1)
				}
				subdirs, visited = subdirs[:0], 0
				abs := ""
				if dir.fd < 0 {
					abs = t.abs(dir.rel)
				}
				old := *dir.list
				l, _ := readDir(dir.fd, abs, dir.m, buf, old, ls, openSub, func(name []byte, m meta, sub int, p *node) *node {
					return visit(dir.rel, name, m, sub, p)
				})
				*dir.list = l // only this worker reads dir
				if l == nil || l != old {
					listed.Add(1)
				}
				if count.Add(visited) > limit {
					over.Store(true)
				}
				mu.Lock()
				dirs = append(dirs, subdirs...)
				active--
				cond.Broadcast()
			}
			mu.Unlock()
			cond.Broadcast()
			results[w] = mine
		})
	}
	wg.Wait()
	t.listed = int(listed.Load())
	for _, d := range dirs { // left when the walk stopped
		if d.fd >= 0 {
			closeDir(d.fd)
		}
	}
	if over.Load() {
		return nil, true // nothing read
	}
	n := 0
	for _, r := range results {
		n += len(r)
	}
	found = make([]scanned, 0, n)
	var files []int
	for _, r := range results {
		for _, f := range r {
			if f.n == nil {
				files = append(files, len(found))
			}
			found = append(found, f)
		}
	}
	// Files and symlinks are read by a few goroutines at once.
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0)*2, 8) {
		wg.Go(func() {
			for i := range next {
				if quit() {
					continue
				}
				pause()
				f := &found[i]
				f.n = t.evaluate(f.rel, f.m, prev[f.rel])
			}
		})
	}
	for _, i := range files {
		if quit() {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return found, false
}
