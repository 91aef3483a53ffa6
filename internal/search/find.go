package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mjkoo/boris/internal/glob"
)

// EntryType selects what [Find] lists.
type EntryType int

// Entry types.
const (
	Files EntryType = iota
	Dirs
	FilesAndDirs
)

// FindOptions configure [Find].
type FindOptions struct {
	Filter
	// Pattern is a glob (see [glob.Glob]) matched against paths relative to the root; braces
	// list alternatives. A pattern without a slash matches names at any depth.
	Pattern string
	Type    EntryType
	// Keep is how many entries, newest first, the result must hold; 0 means 10,000.
	Keep int
	// Indexes, if not nil, lists the entries from the live list of an index of the tree,
	// without a walk, when it has one ready; the result is the same.
	Indexes *Indexes
}

// FindResult is what [Find] found.
type FindResult struct {
	Entries []Entry // newest first, ties by path; at most about Keep
	Matched int     // in all
	Skipped Skipped
	// Live says the entries came from an index's live list, kept by file events, without
	// walking the tree.
	Live bool
}

// Entry is one path found.
type Entry struct {
	Path    string // absolute, under the root
	ModTime time.Time
	Dir     bool
}

// Find lists the paths under the directory root (a real path the scope allows) that
// match opts.Pattern.
func Find(ctx context.Context, scope Scope, root string, opts FindOptions) (*FindResult, error) {
	defer opts.Indexes.begin()()
	pattern := cleanPattern(opts.Pattern)
	if pattern == "" {
		return nil, fmt.Errorf("%w: %v", ErrPattern, errEmptyPattern)
	}
	g, err := glob.Compile(pattern, glob.Extended)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPattern, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &RootError{Path: root}
	}
	if opts.Keep <= 0 {
		opts.Keep = 10_000
	}
	top := newTopN(opts.Keep, func(a, b Entry) bool {
		if !a.ModTime.Equal(b.ModTime) {
			return a.ModTime.After(b.ModTime)
		}
		return a.Path < b.Path
	}, func(Entry) int { return 1 })
	var matched atomic.Int64
	wanted := func(j *job) bool {
		return (!j.dir || opts.Type != Files) && (j.dir || opts.Type != Dirs) && g.Match(relUnder(j.path, root))
	}
	add := func(j *job, mtime time.Time) {
		matched.Add(1)
		top.add(Entry{Path: j.path, ModTime: mtime, Dir: j.dir})
	}
	visit := func(_ int, j *job) {
		if wanted(j) {
			add(j, modTime(j))
		}
	}
	w, err := newWalker(ctx, root, scope, &opts.Filter, visit)
	if err != nil {
		return nil, err
	}
	w.inline = true
	w.dirs = opts.Type != Files
	start := startDir(scope, root, pattern)
	if _, l, _ := opts.Indexes.lookup(root); l != nil && !opts.NoIgnore {
		// The live list of an index of the tree says what is in it without a walk.
		lw := mustWalker(ctx, root, scope, &opts.Filter)
		lw.dirs = w.dirs
		// Only the entries that match are kept. A file the base index holds as it is
		// comes with its modification time; the others are looked at once the list is
		// unlocked.
		found, err := l.find(lw, start, wanted)
		if err == nil {
			for i := range found {
				if i%1024 == 0 && ctx.Err() != nil {
					return nil, ctx.Err()
				}
				f := &found[i]
				mtime := time.Unix(0, f.mtime)
				if !f.known {
					mtime = modTime(&f.job)
				}
				add(&f.job, mtime)
			}
			opts.Indexes.liveAnswers.Add(1)
			return &FindResult{Entries: top.sorted(), Matched: int(matched.Load()), Skipped: lw.snapshot(), Live: true}, nil
		}
		if !errors.Is(err, errNotListed) {
			opts.Indexes.dropLive(l, err)
		}
	}
	if err := w.run(start); err != nil {
		return nil, err
	}
	return &FindResult{Entries: top.sorted(), Matched: int(matched.Load()), Skipped: w.snapshot()}, nil
}

// modTime returns the modification time of the entry of job j, or the zero time when it
// cannot be had.
func modTime(j *job) time.Time {
	var fi fs.FileInfo
	var err error
	if j.open != "" {
		fi, err = os.Stat(j.open)
	} else {
		fi, err = j.entry.Info()
	}
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// ErrRoot is what a [RootError] is.
var ErrRoot = errors.New("cannot search this path")

// RootError is a path a search cannot start from: not a directory, for [Find], or a FIFO,
// socket or device, for [Grep].
type RootError struct {
	Path    string
	Special bool // not a regular file or directory
}

func (e *RootError) Error() string {
	if e.Special {
		return e.Path + " is not a regular file or directory"
	}
	return e.Path + " is not a directory"
}

// Is reports that a RootError is an [ErrRoot].
func (e *RootError) Is(target error) bool { return target == ErrRoot }

// ErrUpward is returned by [SplitPattern] for a pattern with a '..' segment: patterns
// match only below the directory searched.
var ErrUpward = errors.New("the pattern goes through '..'")

var errEmptyPattern = errors.New("pattern is empty")

// SplitPattern returns the directory a find with pattern searches, given the directory
// dir asked for, and the pattern to match below it. An absolute pattern carries its own
// directory, the segments before its first glob character, in place of dir; a relative
// one is returned as it is. A pattern that climbs with '..' is refused with [ErrUpward].
func SplitPattern(dir, pattern string) (string, string, error) {
	if filepath.IsAbs(pattern) {
		prefix, rest := glob.LiteralPrefix(strings.TrimPrefix(pattern, "/"))
		dir, pattern = "/"+prefix, rest
		if !strings.Contains(rest, "/") {
			pattern = "./" + rest // the name is at the top of dir, not at any depth
		}
	}
	if slices.Contains(strings.Split(pattern, "/"), "..") {
		return "", "", ErrUpward
	}
	return dir, pattern, nil
}

// cleanPattern turns separators into slashes and collapses a repeated leading "./".
func cleanPattern(p string) string {
	p = filepath.ToSlash(strings.TrimSpace(p))
	for strings.HasPrefix(p, "././") {
		p = p[2:]
	}
	return p
}

// startDir is where the walk can begin: the deepest directory named literally at the
// start of pattern ("src/pkg" in "src/pkg/**/*.go"), when it is a real directory in
// scope; otherwise root. Naming a directory this way searches it as if it were the root
// given, even when it is hidden or ignored.
func startDir(scope Scope, root, pattern string) string {
	prefix, _ := glob.LiteralPrefix(pattern)
	if prefix == "" {
		return root
	}
	dir := root
	for _, part := range strings.Split(prefix, "/") {
		if part == "." {
			continue
		}
		if part == ".." || part == ".git" {
			return root
		}
		next := joinPath(dir, part)
		fi, err := os.Lstat(next)
		if err != nil || !fi.IsDir() || scope.Hidden(next) {
			return root
		}
		dir = next
	}
	return dir
}
