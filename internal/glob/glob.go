package glob

import (
	"fmt"
	"path"
	"strings"
)

// maxBraceExpansions bounds how many alternatives a pattern with {a,b} groups may expand to.
const maxBraceExpansions = 256

// Glob is a compiled glob: '*' and '?' match within one path segment, '**' as a whole
// segment matches any number of segments, '[...]' is a character class ('!' or '^'
// negates), '\' escapes, and '{a,b}' lists alternatives. A pattern without a slash matches
// the last path segment (a file name at any depth), as .gitignore and ripgrep's --glob do;
// a pattern with a slash matches the whole relative path.
type Glob struct {
	alts []globPath
}

type globPath struct {
	segs     []segment
	basename bool // no slash in the pattern: match the last segment only
	// strictTail makes a trailing '**' match one or more segments, as in .gitignore,
	// where "dir/**" matches what is inside dir but not dir itself.
	strictTail bool
	anys       int // how many '**' segments
}

// segment is one slash-separated part of a pattern.
type segment struct {
	kind segKind
	lit  string // literal text, suffix or prefix, depending on kind
	pat  string // path.Match pattern for segGlob
}

type segKind uint8

const (
	segLiteral segKind = iota
	segStar            // '*': any non-empty... any segment
	segSuffix          // '*lit'
	segPrefix          // 'lit*'
	segGlob            // anything else, via path.Match
	segAny             // '**'
)

// Syntax is a dialect of glob patterns.
type Syntax uint8

const (
	// Extended is the glob of ripgrep's --glob and of find: '{a,b}' lists alternatives,
	// and a trailing '**' matches zero or more segments ("a/**" matches a too).
	Extended Syntax = iota
	// Gitignore is a .gitignore line's glob (without its '!' or trailing '/'): braces are
	// literal, and a trailing '**' matches one or more segments ("a/**" is what is
	// inside a, not a itself).
	Gitignore
)

// Compile compiles pattern in the syntax given.
func Compile(pattern string, syntax Syntax) (*Glob, error) {
	alts := []string{pattern}
	if syntax == Extended {
		var err error
		if alts, err = expandBraces(pattern); err != nil {
			return nil, err
		}
	}
	// Whether the pattern is a name or a path is the pattern's, not each alternative's:
	// "a/{b,}" is the path a/b or a, never a name at any depth.
	anchored := strings.Contains(strings.TrimSuffix(pattern, "/"), "/")
	g := &Glob{}
	for _, a := range alts {
		gp, err := compilePath(a)
		if err != nil {
			return nil, err
		}
		if anchored {
			gp.basename = false
		}
		gp.strictTail = syntax == Gitignore
		g.alts = append(g.alts, gp)
	}
	return g, nil
}

func compilePath(p string) (globPath, error) {
	gp := globPath{basename: !strings.Contains(strings.TrimSuffix(p, "/"), "/")}
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	for _, s := range strings.Split(p, "/") {
		if s == "." && len(gp.segs) == 0 {
			continue // "./name" anchors name at the root
		}
		if s == "**" {
			if n := len(gp.segs); n > 0 && gp.segs[n-1].kind == segAny {
				continue
			}
			gp.segs = append(gp.segs, segment{kind: segAny})
			gp.anys++
			continue
		}
		seg, err := compileSegment(s)
		if err != nil {
			return globPath{}, err
		}
		gp.segs = append(gp.segs, seg)
	}
	if len(gp.segs) == 0 {
		return globPath{}, fmt.Errorf("pattern %q names no file", p)
	}
	return gp, nil
}

func compileSegment(s string) (segment, error) {
	s = collapseStars(s)
	if !strings.ContainsAny(s, `*?[\`) {
		return segment{kind: segLiteral, lit: s}, nil
	}
	if s == "*" {
		return segment{kind: segStar}, nil
	}
	if rest := s[1:]; s[0] == '*' && !strings.ContainsAny(rest, `*?[\`) {
		return segment{kind: segSuffix, lit: rest}, nil
	}
	if head := s[:len(s)-1]; s[len(s)-1] == '*' && !strings.ContainsAny(head, `*?[\`) {
		return segment{kind: segPrefix, lit: head}, nil
	}
	pat := translateClasses(s)
	if _, err := path.Match(pat, ""); err != nil {
		return segment{}, fmt.Errorf("bad glob segment %q: %w", s, err)
	}
	return segment{kind: segGlob, pat: pat}, nil
}

// collapseStars makes each run of unescaped '*' one: a '**' inside a segment ("a**b")
// means the same as '*'.
func collapseStars(s string) string {
	if !strings.Contains(s, "**") {
		return s
	}
	var b strings.Builder
	star := false // the last character written is an unescaped '*'
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
			star = false
		case c == '*' && star:
			continue
		default:
			star = c == '*'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// translateClasses turns gitignore's '[!...]' negation into path.Match's '[^...]'; a '!'
// elsewhere, inside a class too ("[[!]"), stays a '!'.
func translateClasses(s string) string {
	if !strings.Contains(s, "[!") {
		return s
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		case !inClass && c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(s) && s[i+1] == '!' {
				b.WriteByte('^')
				i++
			}
			continue
		case inClass && c == ']':
			inClass = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (s *segment) match(name string) bool {
	switch s.kind {
	case segLiteral:
		return name == s.lit
	case segStar:
		return true
	case segSuffix:
		return strings.HasSuffix(name, s.lit)
	case segPrefix:
		return strings.HasPrefix(name, s.lit)
	case segAny:
		return true
	}
	ok, _ := path.Match(s.pat, name)
	return ok
}

// Match reports whether the slash-separated relative path rel matches.
func (g *Glob) Match(rel string) bool {
	for i := range g.alts {
		if g.alts[i].match(rel) {
			return true
		}
	}
	return false
}

func (gp *globPath) match(rel string) bool {
	if gp.basename {
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			rel = rel[i+1:]
		}
		return gp.segs[0].match(rel)
	}
	// A common shape, '**/name', needs only the last segment.
	if len(gp.segs) == 2 && gp.segs[0].kind == segAny {
		base := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			base = rel[i+1:]
		}
		return gp.segs[1].match(base)
	}
	return gp.matcher(rel).at(0, 0)
}

// matcher returns a matcher of gp's segments against rel. Only a pattern with several '**'
// needs to remember failures: with one, each split is tried once anyway.
func (gp *globPath) matcher(rel string) *segMatcher {
	m := &segMatcher{segs: gp.segs, p: rel, strictTail: gp.strictTail}
	if gp.anys > 1 {
		m.failed = make([]bool, len(gp.segs)*(len(rel)+1))
	}
	return m
}

// segMatcher matches a pattern's segments against a slash-separated path. Each '**' may
// take any number of path segments; with several of them, trying every split is
// exponential, so the pairs (pattern segment, path offset) that failed are remembered and
// never tried again: the work is then bounded by the pattern's segments times the path's.
type segMatcher struct {
	segs       []segment
	p          string
	strictTail bool
	failed     []bool // [segment*(len(p)+1)+offset]; nil when the pattern has at most one '**'
	steps      int    // pairs tried, for tests
}

// at reports whether segs[si:] match p[off:], where off starts a path segment.
func (m *segMatcher) at(si, off int) bool {
	m.steps++
	if m.failed == nil {
		return m.try(si, off)
	}
	k := si*(len(m.p)+1) + off
	if m.failed[k] {
		return false
	}
	ok := m.try(si, off)
	m.failed[k] = !ok
	return ok
}

func (m *segMatcher) try(si, off int) bool {
	s := &m.segs[si]
	head, _, more := strings.Cut(m.p[off:], "/")
	next := off + len(head) + 1
	if s.kind == segAny {
		if si == len(m.segs)-1 {
			return true
		}
		// '**' takes no more segments, or this one and perhaps more.
		return m.at(si+1, off) || more && m.at(si, next)
	}
	if !s.match(head) {
		return false
	}
	if !more {
		// Nothing left of the path: only a trailing '**' may remain.
		rest := m.segs[si+1:]
		return len(rest) == 0 || len(rest) == 1 && rest[0].kind == segAny && !m.strictTail
	}
	return si+1 < len(m.segs) && m.at(si+1, next)
}

// LiteralPrefix returns the leading segments of a slash-containing pattern that have no
// glob characters, such as "src/pkg" for "src/pkg/**/*.go", and the rest of the pattern.
// Walking can start at the prefix instead of the root.
func LiteralPrefix(pattern string) (prefix, rest string) {
	if !strings.Contains(pattern, "/") {
		return "", pattern
	}
	segs := strings.Split(pattern, "/")
	n, skip := 0, 0
	for n < len(segs)-1 && segs[n] == "." {
		n++
		skip++
	}
	for n < len(segs)-1 && segs[n] != "" && segs[n] != ".." && !strings.ContainsAny(segs[n], `*?[]{}\`) {
		n++
	}
	if n == skip {
		return "", pattern
	}
	return strings.Join(segs[skip:n], "/"), strings.Join(segs[n:], "/")
}

// expandBraces expands '{a,b}' alternatives, nested or not, into plain patterns.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("unmatched '}' in pattern %q", p)
			}
			depth--
			if depth > 0 {
				continue
			}
			head, body, tail := p[:open], p[open+1:i], p[i+1:]
			var out []string
			for _, alt := range splitTopLevel(body) {
				more, err := expandBraces(head + alt + tail)
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
				if len(out) > maxBraceExpansions {
					return nil, fmt.Errorf("pattern %q expands to more than %d alternatives", p, maxBraceExpansions)
				}
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("unmatched '{' in pattern %q", p)
	}
	return []string{p}, nil
}

// splitTopLevel splits s on commas outside nested braces.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
