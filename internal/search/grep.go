package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Mode is what [Grep] reports.
type Mode int

// Grep output modes.
const (
	FilesWithMatches Mode = iota // paths of matching files, newest first
	Content                      // matching lines, with context
	Count                        // matching lines per file
)

// binaryProbe is how much of a file's start is checked for a NUL byte.
const binaryProbe = 8 << 10

// DefaultMaxLine is the default longest line shown; longer lines are cut.
const DefaultMaxLine = 500

// GrepOptions configure [Grep].
type GrepOptions struct {
	Filter
	Pattern    string // RE2 syntax
	IgnoreCase bool
	Multiline  bool // matches may span lines and '.' matches '\n'
	Mode       Mode
	Before     int // context lines before each match (Content)
	After      int // context lines after each match (Content)
	// Keep is how many entries (files, or output lines in Content mode) in sort order the
	// result must hold; later ones are dropped as they are found. 0 means 10,000.
	Keep int
	// MaxLine is the longest line shown, in bytes; 0 means DefaultMaxLine.
	MaxLine int
	// OnlyMatching fills the Matches of each matching line cut short (Content, without
	// Multiline).
	OnlyMatching bool
	// Indexes, if not nil, spares reading files its index shows cannot match, and starts
	// indexing trees big enough to pay for it; the result is the same.
	Indexes *Indexes
}

// GrepResult is what [Grep] found.
type GrepResult struct {
	// Files holds matching files in order: newest first for FilesWithMatches (ties by
	// path), by path otherwise. It may stop once it holds Keep entries.
	Files        []FileMatch
	MatchedFiles int // in all
	MatchedLines int // in all
	Searched     int // files read
	Skipped      Skipped
	Index        IndexUse
	// Unindexed is how many files were read because the index did not hold them as
	// they are now (with Index PartlyIndexed).
	Unindexed int
	// Live says the files were listed from the index's live list, kept by file events,
	// without walking the tree.
	Live bool
}

// FileMatch is one matching file.
type FileMatch struct {
	Path    string // absolute, under the root
	ModTime time.Time
	Lines   int    // matching lines
	Output  []Line // Content mode: matching lines and their context, possibly cut short
}

// Line is one output line in Content mode.
type Line struct {
	Num   int
	Text  string
	Match bool // a matching line, not context
	Cut   int  // bytes cut from the end of a long line
	// CutBefore is the bytes cut from the start of a long matching line, whose first
	// match lies beyond the part a line shows: the part around the match is shown.
	CutBefore int
	// Matches are the matched parts of a matching line too long to show whole, each cut
	// to MaxLine, from all of the line: with OnlyMatching. A shorter line's are in Text.
	Matches []string
	Gap     bool // lines were left out before this one
}

// Grep searches the file or directory root (a real path the scope allows).
func Grep(ctx context.Context, scope Scope, root string, opts GrepOptions) (*GrepResult, error) {
	defer opts.Indexes.begin()()
	m, err := compileMatcher(opts.Pattern, opts.IgnoreCase, opts.Multiline)
	if err != nil {
		return nil, err
	}
	if opts.Keep <= 0 {
		opts.Keep = 10_000
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	g := &grep{scope: scope, m: m, opts: &opts}
	defer g.releaseWorkers() // every reader has ended by the time Grep returns
	switch opts.Mode {
	case FilesWithMatches:
		g.top = newTopN(opts.Keep, newestFirst, one)
	case Count:
		g.top = newTopN(opts.Keep, byPath, one)
	default:
		g.top = newTopN(opts.Keep, byPath, func(f FileMatch) int { return max(len(f.Output), 1) })
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	var sk Skipped
	use, n, live := Scanned, 0, false
	switch {
	case info.Mode().IsRegular():
		g.counters = &counters{}
		g.newWorkers(1)
		g.file(0, &job{path: root})
		sk.Binary, sk.TooLarge, sk.Special, sk.Unreadable = int(g.binary.Load()), int(g.tooLarge.Load()), int(g.special.Load()), int(g.unreadable.Load())
	case info.IsDir():
		w, err := newWalker(ctx, root, scope, &opts.Filter, func(id int, j *job) {
			g.file(id, j)
		})
		if err != nil {
			return nil, err
		}
		g.newWorkers(workerCount())
		g.counters = &w.counters
		x, l, over := opts.Indexes.lookup(root)
		if l != nil && !opts.NoIgnore {
			ll, dirty, view, err := l.list(mustWalker(ctx, root, scope, &opts.Filter), root, scope)
			if err == nil {
				g.counters = &counters{}
				g.counters.set(ll.sk)
				plan := planIndex(l.x, opts.Pattern, opts.IgnoreCase, opts.Multiline)
				if plan != nil {
					view.plan(plan.q)
				}
				unindexed, err := g.grepLive(ctx, root, ll, dirty, view, plan)
				if err != nil {
					return nil, err
				}
				sk = g.counters.snapshot()
				if plan != nil {
					use, n = Indexed, unindexed
					if n > 0 {
						use = PartlyIndexed
					}
				}
				live = true
				opts.Indexes.liveAnswers.Add(1)
				// The changed files are indexed in the overlay, in the background, and a
				// new index is built once it is full; then the rule of a walk holds.
				if !view.o.isFull() {
					unindexed = 0
				}
				opts.Indexes.searched(scope, root, &opts.Filter, l.x, len(ll.files), unindexed)
				break
			}
			if !errors.Is(err, errNotListed) {
				opts.Indexes.dropLive(l, err)
			}
		}
		g.plan = planIndex(x, opts.Pattern, opts.IgnoreCase, opts.Multiline)
		if g.plan != nil && over != nil {
			g.plan.over = over.view()
			g.plan.over.plan(g.plan.q)
		}
		if err := w.run(root); err != nil {
			return nil, err
		}
		sk = w.snapshot()
		unindexed := int(g.visited.Load())
		switch {
		case g.plan != nil:
			unindexed = int(g.plan.unindexed.Load())
			use, n = Indexed, unindexed
			if n > 0 {
				use = PartlyIndexed
			}
		case x != nil:
			unindexed = 0 // not known
		}
		if x != nil && opts.NoIgnore {
			unindexed = 0 // ignored files are never indexed: no reason to index again
		}
		opts.Indexes.searched(scope, root, &opts.Filter, x, int(g.visited.Load()), unindexed)
	default:
		return nil, &RootError{Path: root, Special: true}
	}
	return &GrepResult{
		Files:        g.top.sorted(),
		MatchedFiles: int(g.files.Load()),
		MatchedLines: int(g.lines.Load()),
		Searched:     int(g.searched.Load()),
		Skipped:      sk,
		Index:        use,
		Unindexed:    n,
		Live:         live,
	}, nil
}

func one(FileMatch) int { return 1 }

func newestFirst(a, b FileMatch) bool {
	if !a.ModTime.Equal(b.ModTime) {
		return a.ModTime.After(b.ModTime)
	}
	return a.Path < b.Path
}

func byPath(a, b FileMatch) bool { return a.Path < b.Path }

type grep struct {
	scope   Scope
	m       *matcher
	opts    *GrepOptions
	top     *topN[FileMatch]
	workers []grepWorker
	*counters
	files, lines, searched atomic.Int64
	visited                atomic.Int64
	plan                   *indexPlan // nil: read every file
}

// grepWorker is one goroutine's reusable state.
type grepWorker struct {
	buf  []byte
	find finder
	hits []span
	rel  []byte // the path of the file of a live list it opens (see job.rel)
}

// readBufs keeps the workers' read buffers from one search to the next, which would
// otherwise grow each from nothing (0.7 MB allocated by a search of 27,000 candidates).
var readBufs sync.Pool // of *[]byte

// newWorkers makes the search's n workers, with buffers of earlier searches.
func (g *grep) newWorkers(n int) {
	g.workers = make([]grepWorker, n)
	for i := range g.workers {
		g.workers[i].find = newFinder(g.m.lits)
		if b, ok := readBufs.Get().(*[]byte); ok {
			g.workers[i].buf = *b
		}
	}
}

// releaseWorkers gives the workers' buffers back, once nothing reads into them.
func (g *grep) releaseWorkers() {
	for i := range g.workers {
		if b := g.workers[i].buf; cap(b) > 0 {
			readBufs.Put(&b)
		}
		g.workers[i].buf = nil
	}
}

// span is one matching line: its bounds (end excludes '\n') and number.
type span struct {
	start, end, num int
}

// file searches the file of job j: j.shown() is what results show.
func (g *grep) file(id int, j *job) {
	g.visited.Add(1)
	var br blockRead
	if g.plan != nil && g.skip(j, &br) {
		return
	}
	g.read1(id, j, &br)
}

// read1 reads the file of job j and searches it: only its candidate blocks when br says
// which they are and they suffice.
func (g *grep) read1(id int, j *job, br *blockRead) {
	w := &g.workers[id]
	if br != nil && br.f.blk != nil && g.readBlocks(w, j, br) {
		return
	}
	var known *indexedFile
	if br != nil && br.fresh {
		known = &br.f
		if knownReadHook != nil {
			knownReadHook(j.shown())
		}
	}
	data, mtime, ok := g.read(w, j, known)
	if !ok {
		return
	}
	g.searched.Add(1)
	if bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
		g.binary.Add(1)
		return
	}
	switch g.opts.Mode {
	case FilesWithMatches:
		found := false
		g.m.matchLines(data, w.find, func(_, _ int) bool {
			found = true
			return false
		})
		if found {
			g.files.Add(1)
			g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: 1})
		}
	case Count:
		n := 0
		g.m.matchLines(data, w.find, func(_, _ int) bool {
			n++
			return true
		})
		if n > 0 {
			g.files.Add(1)
			g.lines.Add(int64(n))
			g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: n})
		}
	default:
		w.hits = w.hits[:0]
		n := 0
		ln := lineCounter{}
		g.m.matchLines(data, w.find, func(s, e int) bool {
			n++
			if len(w.hits) < g.opts.Keep {
				w.hits = append(w.hits, span{s, e, ln.at(data, s)})
			}
			return true
		})
		if n > 0 {
			g.files.Add(1)
			g.lines.Add(int64(n))
			out := contextLines(data, w.hits, g.opts.Before, g.opts.After, g.opts.Keep, g.opts.MaxLine, g.m, g.opts.OnlyMatching)
			g.top.add(FileMatch{Path: j.shown(), ModTime: mtime, Lines: n, Output: out})
		}
	}
}

// read loads a regular file into the worker's buffer; see readFile. known, if set, is
// the file as the index holds it, fresh (see readKnown).
func (g *grep) read(w *grepWorker, j *job, known *indexedFile) ([]byte, time.Time, bool) {
	if readHook != nil {
		readHook(j.shown())
	}
	fd, err := openJob(g.scope, j, os.O_RDONLY)
	var data []byte
	var mtime time.Time
	switch {
	case err == nil && known != nil:
		data, mtime, err = readKnown(fd, &w.buf, known.size, known.mtime, g.opts.MaxFileSize)
	case err == nil:
		data, mtime, err = readFile(fd, &w.buf, g.opts.MaxFileSize)
	}
	switch {
	case err == nil:
	case errors.Is(err, errNotRegular):
		g.special.Add(1)
		return nil, time.Time{}, false
	case errors.Is(err, errTooLarge):
		g.tooLarge.Add(1)
		return nil, time.Time{}, false
	default:
		g.unreadable.Add(1)
		return nil, time.Time{}, false
	}
	// Do not keep a huge buffer alive for the rest of the walk.
	if cap(w.buf) > 4<<20 {
		w.buf = nil
	}
	return data, mtime, true
}

// readHook, when set, is told of each file a search reads; for tests. knownReadHook is
// told of each read with what the index knows of the file (see readKnown).
var readHook, knownReadHook func(path string)

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large")
)

// lineCounter numbers lines for increasing offsets without rescanning.
type lineCounter struct {
	pos, line int
}

func (c *lineCounter) at(buf []byte, off int) int {
	if c.line == 0 {
		c.line = 1
	}
	c.line += bytes.Count(buf[c.pos:off], []byte{'\n'})
	c.pos = off
	return c.line
}

// firstIn returns where the first match in the line b lies, or nil. A multiline
// pattern's match is not looked for in one line, nor any with a nil m.
func (m *matcher) firstIn(b []byte) []int {
	if m == nil || m.multiline {
		return nil
	}
	return m.line.FindIndex(b)
}

// Bounds on the matched parts [matcher.allIn] keeps of one line: how many, and how many
// bytes in all, more than one result's output budget, so that a grep of many long lines
// holds a bounded share of them in memory.
const (
	maxMatches     = 1000
	maxMatchesSize = 32 << 10
)

// allIn returns the matched parts of the line b that are not empty, each cut to maxLine
// bytes, within the bounds above; nil for a multiline pattern.
func (m *matcher) allIn(b []byte, maxLine int) []string {
	if m.multiline {
		return nil
	}
	out, size := []string{}, 0
	for _, loc := range m.line.FindAllIndex(b, maxMatches) {
		if loc[1] > loc[0] {
			part := b[loc[0]:loc[1]]
			if len(part) > maxLine {
				part = part[:runeStart(part, maxLine)]
			}
			if size += len(part); size > maxMatchesSize {
				break
			}
			out = append(out, strings.ToValidUTF8(string(part), "\uFFFD"))
		}
	}
	return out
}

// matchLines calls fn with the bounds of each line holding a match, in order; fn returns
// false to stop.
func (m *matcher) matchLines(buf []byte, f finder, fn func(start, end int) bool) {
	if f != nil {
		f.reset(buf)
	}
	if m.multiline {
		m.multiLines(buf, f, fn)
		return
	}
	if f == nil {
		// No literal to look for: Go's regexp is faster on many short lines (where it
		// can backtrack) than on one long buffer (where it runs its NFA).
		for start := 0; start < len(buf); {
			end := bytes.IndexByte(buf[start:], '\n')
			if end < 0 {
				end = len(buf)
			} else {
				end += start
			}
			if m.matchLine(buf[start:end]) && !fn(start, end) {
				return
			}
			start = end + 1
		}
		return
	}
	pos := 0
	for pos < len(buf) {
		var c int
		if c = f.next(buf, pos); c < 0 {
			return
		}
		start := bytes.LastIndexByte(buf[:c], '\n') + 1
		end := bytes.IndexByte(buf[c:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += c
		}
		if m.exact || m.matchLine(buf[start:end]) {
			if !fn(start, end) {
				return
			}
		}
		pos = end + 1
	}
}

// multiLines reports every line a multiline match touches.
func (m *matcher) multiLines(buf []byte, f finder, fn func(start, end int) bool) {
	if len(buf) == 0 || f != nil && f.next(buf, 0) < 0 {
		return
	}
	pos, last := 0, -1 // last: start of the last line reported
	for pos <= len(buf) {
		loc := m.buf.FindIndex(buf[pos:])
		if loc == nil {
			return
		}
		s, e := pos+loc[0], pos+loc[1]
		if s == len(buf) && buf[s-1] == '\n' {
			return
		}
		ls := bytes.LastIndexByte(buf[:s], '\n') + 1
		stop := max(s, e-1)
		for ls <= stop && ls <= len(buf) {
			le := bytes.IndexByte(buf[ls:], '\n')
			if le < 0 {
				le = len(buf)
			} else {
				le += ls
			}
			if ls > last {
				last = ls
				if !fn(ls, le) {
					return
				}
			}
			if le >= len(buf) {
				break
			}
			ls = le + 1
		}
		if e > s {
			pos = e
		} else {
			pos = e + 1
		}
	}
}

// contextLines turns matching lines into output lines with up to before and after lines
// of context, merged where they overlap, at most keep of them. m, if not nil, finds the
// first match in a long line, so that it can be shown, and with only its matches.
func contextLines(buf []byte, hits []span, before, after, keep, maxLine int, m *matcher, only bool) []Line {
	var out []Line
	lastNum := 0
	for i, h := range hits {
		first := max(h.num-before, lastNum+1, 1)
		var pre []span
		s := h.start
		for n := h.num - 1; n >= first; n-- {
			e := s - 1
			ps := bytes.LastIndexByte(buf[:e], '\n') + 1
			pre = append(pre, span{ps, e, n})
			s = ps
		}
		gap := lastNum > 0 && first > lastNum+1
		for k := len(pre) - 1; k >= 0; k-- {
			out = append(out, makeLine(buf, pre[k], false, gap, maxLine, nil))
			gap = false
		}
		l := makeLine(buf, h, true, gap, maxLine, m)
		if only && m != nil && l.CutBefore+l.Cut > 0 {
			l.Matches = m.allIn(buf[h.start:h.end], maxLine)
		}
		out = append(out, l)
		lastNum = h.num
		limit := h.num + after
		if i+1 < len(hits) {
			limit = min(limit, hits[i+1].num-1)
		}
		e := h.end
		for n := h.num + 1; n <= limit && e+1 < len(buf); n++ {
			s := e + 1
			ne := bytes.IndexByte(buf[s:], '\n')
			if ne < 0 {
				ne = len(buf)
			} else {
				ne += s
			}
			out = append(out, makeLine(buf, span{s, ne, n}, false, false, maxLine, nil))
			lastNum, e = n, ne
		}
		if len(out) >= keep {
			break
		}
	}
	return out
}

// makeLine makes the output line of span s: at most maxLine bytes of it, from its start,
// or, when m finds a match that ends beyond them, from a little before that match.
func makeLine(buf []byte, s span, match, gap bool, maxLine int, m *matcher) Line {
	b := buf[s.start:s.end]
	b = bytes.TrimSuffix(b, []byte{'\r'})
	l := Line{Num: s.num, Match: match, Gap: gap}
	if len(b) > maxLine {
		from := 0
		if loc := m.firstIn(b); loc != nil && loc[1] > maxLine {
			from = runeStart(b, max(loc[0]-maxLine/4, 0))
		}
		to := min(from+maxLine, len(b))
		if to < len(b) {
			to = runeStart(b, to)
		}
		l.CutBefore, l.Cut = from, len(b)-to
		b = b[from:to]
	}
	l.Text = strings.ToValidUTF8(string(b), "\uFFFD")
	return l
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(b []byte, i int) int {
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
