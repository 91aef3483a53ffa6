package search

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mjkoo/boris/internal/glob"
)

// maxIgnoreFile bounds how much of one .gitignore or .ignore file is read.
const maxIgnoreFile = 1 << 20

// ignoreFiles are read in each directory, lowest precedence first: a rule in .ignore
// overrides one in .gitignore, as in ripgrep.
var ignoreFiles = []string{".gitignore", ".ignore"}

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	pattern *glob.Glob
	negate  bool // '!pattern' re-includes
	dirOnly bool // 'pattern/' matches directories only
}

// ignoreSet is the rules of one directory's ignore files, in file order.
type ignoreSet struct {
	rules []ignoreRule
}

// parseIgnore reads gitignore syntax: blank lines and '#' comments are skipped, '\#' and
// '\!' escape, trailing unescaped spaces are dropped, '!' negates, a trailing '/' matches
// only directories, and a pattern with a slash anywhere but at the end is anchored to the
// file's directory.
func parseIgnore(data []byte) *ignoreSet {
	set := &ignoreSet{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			set.rules = append(set.rules, r)
		}
	}
	return set
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	// A slash at the start or in the middle anchors the pattern; without one it
	// matches a name at any depth, which is what a glob does for slash-free patterns.
	g, err := glob.Compile(line, glob.Gitignore)
	if err != nil {
		return ignoreRule{}, false // git ignores patterns it cannot parse, too
	}
	r.pattern = g
	return r, true
}

func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// match reports whether the set decides about rel (relative to the set's directory):
// decided is true when some rule matched, and ignored says which way the last one went.
func (s *ignoreSet) match(rel string, isDir bool) (ignored, decided bool) {
	for i := len(s.rules) - 1; i >= 0; i-- {
		r := &s.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.pattern.Match(rel) {
			return !r.negate, true
		}
	}
	return false, false
}

// ignoreChain is the ignore rules in force in one directory: its own and its ancestors'.
// Deeper directories take precedence, as in git.
type ignoreChain struct {
	parent *ignoreChain
	dir    string // absolute directory the rules are relative to
	set    *ignoreSet
}

// ignored reports whether the entry at abs, a path under every directory in the chain, is
// excluded.
func (c *ignoreChain) ignored(abs string, isDir bool) bool {
	for l := c; l != nil; l = l.parent {
		rel := relUnder(abs, l.dir)
		if ig, ok := l.set.match(rel, isDir); ok {
			return ig
		}
	}
	return false
}

// relUnder returns abs relative to dir, which must be a proper ancestor of abs.
func relUnder(abs, dir string) string {
	if dir == "/" {
		return abs[1:]
	}
	return abs[len(dir)+1:]
}

// loadIgnore returns the chain for dir given its parent's chain, reading dir's ignore files
// if names says they exist. extra rules (such as .git/info/exclude) go below them.
func loadIgnore(parent *ignoreChain, dir string, read func(name string) ([]byte, bool), extra *ignoreSet) *ignoreChain {
	var set *ignoreSet
	if extra != nil {
		set = &ignoreSet{rules: append([]ignoreRule(nil), extra.rules...)}
	}
	for _, name := range ignoreFiles {
		data, ok := read(name)
		if !ok {
			continue
		}
		s := parseIgnore(data)
		if set == nil {
			set = s
			continue
		}
		set.rules = append(set.rules, s.rules...)
	}
	if set == nil || len(set.rules) == 0 {
		return parent
	}
	return &ignoreChain{parent: parent, dir: dir, set: set}
}

// readSmall reads at most limit bytes of a regular file, never opening anything else.
func readSmall(name string, limit int64) ([]byte, error) {
	info, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, os.ErrInvalid
	}
	f, err := openNoBlock(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, min(info.Size(), limit))
	n, err := f.Read(buf)
	if err != nil && n == 0 && len(buf) > 0 {
		return nil, err
	}
	return buf[:n], nil
}

// readSmallAt reads at most limit bytes of the regular file name in the open directory
// dirfd, never following a symlink or opening anything but a regular file.
func readSmallAt(dirfd int, name string, limit int64) ([]byte, bool) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	buf := make([]byte, min(info.Size(), limit))
	n, err := io.ReadFull(f, buf)
	if err != nil && n == 0 && len(buf) > 0 {
		return nil, false
	}
	return buf[:n], true
}
