package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrPattern is wrapped by errors about the search pattern itself.
var ErrPattern = errors.New("invalid pattern")

// ErrFilter is wrapped by errors about a glob or type filter.
var ErrFilter = errors.New("invalid filter")

// maxLits bounds the literal sets the prefilter works with; maxClass the character classes
// taken as sets of literals (ten: \d).
const (
	maxLits  = 64
	maxClass = 10
)

// matcher finds lines matching a regular expression. Without multiline, a match never
// crosses a line end (as in ripgrep: classes such as \s and [^a] do not match '\n'), so
// the matcher looks for a required literal first and runs the regexp only on the lines
// around its hits.
type matcher struct {
	line      *regexp.Regexp // for one line at a time (no (?m): the slice is the line)
	buf       *regexp.Regexp // for a whole buffer: (?m), and (?s) when multiline
	lits      []lit          // every match contains one of these; none: no prefilter
	exact     bool           // a hit of a literal is itself a match
	multiline bool
	// inner, when set, is a literal the pattern holds after a part of varying length
	// (the _ of \w+_\d{4}\b), and rest the pattern from inner on, anchored: a line
	// holds a match only if rest matches at one of inner's places in it. Checking that
	// first is much cheaper than the unanchored match of the whole line, which tries
	// every start, when the prefilter hits many lines that do not match.
	inner []byte
	rest  *regexp.Regexp
	// tries bounds how many places of inner are tried in one line when rest can match
	// without bound (0: no bound): each try may then read the rest of the line (rest can
	// hold .*), and a long line full of the literal would cost its length squared, where
	// the match of the whole line is linear.
	tries int
}

// lit is a literal a match must contain. fold literals are compared ignoring case and
// are stored in lower case.
type lit struct {
	s    string
	fold bool
}

// compileMatcher parses an RE2 pattern.
func compileMatcher(pattern string, ignoreCase, multiline bool) (*matcher, error) {
	flags := syntax.Perl
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not valid RE2 syntax: %v", ErrPattern, QuotePattern(pattern), explain(err))
	}
	m := &matcher{multiline: multiline}
	if !multiline {
		if containsNewline(tree) {
			return nil, fmt.Errorf("%w: %s contains a literal line break; set multiline: true to match across lines", ErrPattern, QuotePattern(pattern))
		}
		tree = noNewline(tree)
	}
	if m.line, err = regexp.Compile(tree.String()); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrPattern, QuotePattern(pattern), err)
	}
	if !multiline {
		m.inner, m.rest, m.tries = innerLiteral(tree)
	}
	info := extract(tree.Simplify())
	// On a whole buffer, ^ and $ (and \A, \z) mean the start and end of a line, as
	// they do when one line is matched on its own.
	tree, _ = syntax.Parse(pattern, flags)
	if !multiline {
		tree = noNewline(tree)
	}
	if m.buf, err = regexp.Compile(lineAnchors(tree).String()); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrPattern, QuotePattern(pattern), err)
	}
	m.lits, m.exact = info.choose()
	return m, nil
}

// innerLiteral returns the first literal of the concatenation re that comes after
// something else and before something else, matched case-exact and valid UTF-8, with
// what re matches from it on, anchored at its start; nil when there is none. What rest
// matches from a place in a line is what it matches there in the whole line: it starts
// with the literal, so no assertion in it looks before that place. (A literal at the end
// would be checked for nothing but itself, which the prefilter has found.)
func innerLiteral(re *syntax.Regexp) (inner []byte, rest *regexp.Regexp, tries int) {
	if re.Op != syntax.OpConcat {
		return nil, nil, 0
	}
	for k := 1; k < len(re.Sub)-1; k++ {
		s := re.Sub[k]
		if s.Op != syntax.OpLiteral || s.Flags&syntax.FoldCase != 0 || slices.Contains(s.Rune, utf8.RuneError) {
			continue
		}
		tail := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: re.Sub[k:]}
		rx, err := regexp.Compile(`^(?:` + tail.String() + `)`)
		if err != nil {
			return nil, nil, 0
		}
		if unbounded(tail) {
			tries = maxInnerTries
		}
		return []byte(string(s.Rune)), rx, tries
	}
	return nil, nil, 0
}

// maxInnerTries is matcher.tries for a rest that can match without bound.
const maxInnerTries = 8

// unbounded reports whether re can match a text of any length.
func unbounded(re *syntax.Regexp) bool {
	switch {
	case re.Op == syntax.OpStar || re.Op == syntax.OpPlus,
		re.Op == syntax.OpRepeat && re.Max < 0:
		return true
	}
	return slices.ContainsFunc(re.Sub, unbounded)
}

// matchLine reports whether the line b holds a match.
func (m *matcher) matchLine(b []byte) bool {
	if m.inner != nil && m.ruledOut(b) {
		return false
	}
	return m.line.Match(b)
}

// ruledOut reports whether m.rest matches at none of the places of m.inner in b; false
// when it cannot tell within m.tries places.
func (m *matcher) ruledOut(b []byte) bool {
	for i, tries := 0, 0; ; i++ {
		j := bytes.Index(b[i:], m.inner)
		if j < 0 {
			return true
		}
		if tries++; m.tries > 0 && tries > m.tries {
			return false
		}
		i += j
		if m.rest.Match(b[i:]) {
			return false
		}
	}
}

// QuotePattern quotes a pattern for a message, cut after 200 characters with its length
// said: the pattern came from the caller, and a long one need not come back whole.
func QuotePattern(p string) string {
	n := 0
	for i := range p {
		if n == 200 {
			return fmt.Sprintf("%q… (%d characters)", p[:i], utf8.RuneCountInString(p))
		}
		n++
	}
	return fmt.Sprintf("%q", p)
}

// explain turns a regexp/syntax error into advice.
func explain(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	msg := fmt.Sprintf("%s in %q", se.Code, se.Expr)
	switch se.Code {
	case syntax.ErrInvalidPerlOp, syntax.ErrInvalidRepeatOp:
		msg += " (RE2 has no lookahead, lookbehind or backreferences; escape literal characters such as ( [ { * + ? with \\)"
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen, syntax.ErrMissingBracket:
		msg += " (escape literal parentheses and brackets with \\)"
	case syntax.ErrInvalidEscape:
		msg += " (RE2 escapes: \\d \\w \\s \\b \\. \\( ...)"
	}
	return msg
}

func containsNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if containsNewline(s) {
			return true
		}
	}
	return false
}

// noNewline rewrites re so that nothing in it matches '\n': character classes lose it and
// '.' with (?s) becomes plain '.'.
func noNewline(re *syntax.Regexp) *syntax.Regexp {
	return rewrite(re, func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpAnyChar:
			re.Op = syntax.OpAnyCharNotNL
		case syntax.OpCharClass:
			re.Rune = withoutNewline(re.Rune)
			if len(re.Rune) == 0 {
				re.Op = syntax.OpNoMatch
			}
		}
	})
}

// withoutNewline returns the ranges of a character class (lo, hi pairs) with '\n' taken
// out.
func withoutNewline(ranges []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// lineAnchors turns text anchors into line anchors.
func lineAnchors(re *syntax.Regexp) *syntax.Regexp {
	return rewrite(re, func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpBeginText:
			re.Op = syntax.OpBeginLine
		case syntax.OpEndText:
			re.Op = syntax.OpEndLine
		}
	})
}

// rewrite applies f to re and to every expression inside it, in place, and returns re.
func rewrite(re *syntax.Regexp, f func(*syntax.Regexp)) *syntax.Regexp {
	f(re)
	for _, s := range re.Sub {
		rewrite(s, f)
	}
	return re
}

// litInfo describes what strings a regexp node can match.
type litInfo struct {
	set   []lit // when full: every match is exactly one of these
	full  bool
	exact bool  // full, and every occurrence of a member is a match (no assertions)
	req   []lit // every match contains one of these (nil: unknown)
	// prefix: every match begins with one of these (nil: unknown); the set when full.
	prefix []lit
}

func (li litInfo) addReq(cand []lit) litInfo {
	if better(cand, li.req) {
		li.req = cand
	}
	return li
}

// better reports whether literal set a makes a better prefilter than b.
func better(a, b []lit) bool {
	sa, sb := score(a), score(b)
	return sa > sb
}

// score rates a literal set: longer shortest member first, then fewer members. Sets with
// an empty member are useless.
func score(ls []lit) int {
	if len(ls) == 0 || len(ls) > maxLits {
		return -1
	}
	shortest := 1 << 20
	for _, l := range ls {
		shortest = min(shortest, len(l.s))
	}
	if shortest == 0 {
		return -1
	}
	return min(shortest, 32)*100 - len(ls)
}

func extract(re *syntax.Regexp) litInfo {
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		l := lit{s: s}
		if fold && hasCase(s) {
			l = lit{s: strings.ToLower(s), fold: true}
		}
		set := []lit{l}
		return litInfo{set: set, full: true, exact: !l.fold || foldSafe(l.s), req: set, prefix: set}
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > maxClass {
				return litInfo{}
			}
		}
		var set []lit
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set = append(set, lit{s: string(r)})
			}
		}
		return litInfo{set: set, full: true, exact: true, req: set, prefix: set}
	case syntax.OpEmptyMatch:
		return litInfo{set: []lit{{}}, full: true, exact: true, prefix: []lit{{}}}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{set: []lit{{}}, full: true, prefix: []lit{{}}}
	case syntax.OpCapture:
		return extract(re.Sub[0])
	case syntax.OpQuest:
		c := extract(re.Sub[0])
		if !c.full || len(c.set) >= maxLits {
			return litInfo{}
		}
		set := append(append([]lit(nil), c.set...), lit{})
		return litInfo{set: set, full: true, exact: c.exact, prefix: set}
	case syntax.OpPlus:
		c := extract(re.Sub[0])
		return litInfo{req: c.req, prefix: c.prefix}
	case syntax.OpRepeat:
		if re.Min < 1 {
			return litInfo{}
		}
		c := extract(re.Sub[0])
		if re.Min == 1 && re.Max == 1 {
			return c
		}
		return litInfo{req: c.req, prefix: c.prefix}
	case syntax.OpConcat:
		return extractConcat(re.Sub)
	case syntax.OpAlternate:
		return extractAlternate(re.Sub)
	}
	return litInfo{}
}

func extractConcat(subs []*syntax.Regexp) litInfo {
	out := litInfo{}
	cur, curExact, allFull := []lit{{}}, true, true
	for _, sub := range subs {
		c := extract(sub)
		if c.full && len(cur)*len(c.set) <= maxLits {
			cur = product(cur, c.set)
			curExact = curExact && c.exact && !mixedFold(cur)
			continue
		}
		// What came before, then the beginning of this: `_\d{4}` holds one of `_0`…`_9`.
		withStart := cur
		if c.prefix != nil && len(cur)*len(c.prefix) <= maxLits {
			withStart = product(cur, c.prefix)
		}
		if allFull {
			out.prefix = withStart
		}
		allFull = false
		out = out.addReq(withStart)
		out = out.addReq(c.req)
		if c.full {
			cur, curExact = c.set, c.exact
		} else {
			cur, curExact = []lit{{}}, true
		}
	}
	out = out.addReq(cur)
	if allFull {
		out.set, out.full, out.exact, out.prefix = cur, true, curExact, cur
	}
	return out
}

func extractAlternate(subs []*syntax.Regexp) litInfo {
	out := litInfo{full: true, exact: true}
	var req, prefix []lit
	reqOK, prefixOK := true, true
	for _, sub := range subs {
		c := extract(sub)
		if c.prefix == nil || len(prefix)+len(c.prefix) > maxLits {
			prefixOK = false
		} else {
			prefix = append(prefix, c.prefix...)
		}
		if c.full && out.full && len(out.set)+len(c.set) <= maxLits {
			out.set = append(out.set, c.set...)
			out.exact = out.exact && c.exact
		} else {
			out.full, out.exact, out.set = false, false, nil
		}
		r := c.req
		if c.full && better(c.set, r) {
			r = c.set
		}
		if score(r) < 0 || len(req)+len(r) > maxLits {
			reqOK = false
		} else {
			req = append(req, r...)
		}
	}
	if reqOK {
		out.req = req
	}
	if out.full {
		out = out.addReq(out.set)
		out.prefix = out.set
	} else if prefixOK {
		out.prefix = prefix
	}
	return out
}

func product(a, b []lit) []lit {
	out := make([]lit, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			fold := x.fold || y.fold
			xs, ys := x.s, y.s
			if fold {
				xs, ys = strings.ToLower(xs), strings.ToLower(ys)
			}
			out = append(out, lit{s: xs + ys, fold: fold})
		}
	}
	return out
}

// mixedFold reports whether some literal joins case-folded and exact parts, which a
// folding comparison would over-match.
func mixedFold(ls []lit) bool {
	for _, l := range ls {
		if l.fold {
			return true
		}
	}
	return false
}

// choose picks the prefilter literals and whether a literal hit is already a match.
func (li litInfo) choose() ([]lit, bool) {
	req := li.req
	exact := false
	if li.full && score(li.set) >= 0 && !better(req, li.set) {
		req, exact = li.set, li.exact
	}
	if score(req) < 0 {
		return nil, false
	}
	for _, l := range req {
		if l.fold && !foldSafe(l.s) {
			exact = false
		}
	}
	return dedupe(req), exact
}

func dedupe(ls []lit) []lit {
	var out []lit
	for _, l := range ls {
		dup := false
		for _, o := range out {
			if o == l {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, l)
		}
	}
	return out
}

func hasCase(s string) bool {
	for _, r := range s {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// foldSafe reports whether s (lower case) can be matched case-insensitively byte by byte:
// ASCII only, and no letter whose case fold reaches outside ASCII (k: KELVIN SIGN,
// s: LATIN SMALL LETTER LONG S).
func foldSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !asciiFoldSafe(s[i]) {
			return false
		}
	}
	return true
}

// asciiFoldSafe reports whether the ASCII byte c folds only to ASCII: all but K, k, S
// and s (TestASCIIFoldSafe checks this against unicode.SimpleFold). A constant rather than
// a table built at start, where walking the fold orbits cost every start a tenth of a
// millisecond.
func asciiFoldSafe(c byte) bool {
	return c|0x20 != 'k' && c|0x20 != 's'
}

// finder finds the next position that may lie inside a match. It keeps per-buffer state:
// call reset before each new buffer, and ask for increasing positions.
type finder interface {
	reset(buf []byte)
	next(buf []byte, from int) int
}

func newFinder(lits []lit) finder {
	if len(lits) == 0 {
		return nil
	}
	fs := make([]finder, len(lits))
	for i, l := range lits {
		if l.fold {
			fs[i] = newFoldFinder(l.s)
		} else {
			fs[i] = newExactFinder(l.s)
		}
		if fs[i] == nil {
			return nil // a literal with no usable anchor: no prefilter at all
		}
	}
	if len(fs) == 1 {
		return fs[0]
	}
	if f := newPrefixFinder(lits); f != nil {
		return f
	}
	return &anyFinder{fs: fs, pos: make([]int, len(fs))}
}

// prefixFinder finds any of several exact literals that begin alike (`_0` to `_9` for
// `_\d`): one scan for the shared beginning, each hit checked against the literals.
type prefixFinder struct {
	prefix []byte
	rests  [][]byte // what follows the prefix in each literal
}

// newPrefixFinder returns a prefixFinder for lits, or nil when some literal folds case
// or they share no beginning.
func newPrefixFinder(lits []lit) finder {
	prefix := lits[0].s
	for _, l := range lits {
		if l.fold {
			return nil
		}
		n := 0
		for n < len(prefix) && n < len(l.s) && prefix[n] == l.s[n] {
			n++
		}
		prefix = prefix[:n]
	}
	if prefix == "" {
		return nil
	}
	f := &prefixFinder{prefix: []byte(prefix)}
	for _, l := range lits {
		f.rests = append(f.rests, []byte(l.s[len(prefix):]))
	}
	return f
}

func (f *prefixFinder) reset([]byte) {}

func (f *prefixFinder) next(buf []byte, from int) int {
	for from <= len(buf) {
		i := bytes.Index(buf[from:], f.prefix)
		if i < 0 {
			return -1
		}
		at := from + i
		after := buf[at+len(f.prefix):]
		for _, r := range f.rests {
			if bytes.HasPrefix(after, r) {
				return at
			}
		}
		from = at + 1
	}
	return -1
}

// exactFinder finds a literal: with bytes.Index, which looks for the literal's first
// byte with memchr, when that byte is rare in text, else with a pairScan.
type exactFinder struct {
	lit  []byte
	pair *pairScan
}

func newExactFinder(s string) *exactFinder {
	f := &exactFinder{lit: []byte(s)}
	if len(s) > 1 && !rareByte(s[0]) {
		f.pair = newPairScan(s, false)
	}
	return f
}

func (f *exactFinder) reset([]byte) {}

func (f *exactFinder) next(buf []byte, from int) int {
	if f.pair != nil {
		return f.pair.index(buf, from)
	}
	i := bytes.Index(buf[from:], f.lit)
	if i < 0 {
		return -1
	}
	return from + i
}

// foldFinder finds a literal ignoring case. When the literal is ASCII and the buffer holds
// no character that folds to one of its letters from outside ASCII, it finds the literal
// itself, with a pairScan; else it scans for the literal's rarest byte that folds within
// ASCII (in both cases), and each hit is only a place where a match may be.
type foldFinder struct {
	pair   *pairScan // for the literal (lower case) when ascii
	lo, up byte      // the anchor's two cases (equal for non-letters)
	ascii  bool      // the literal is ASCII
	// spoilers are the non-ASCII runes that fold to a letter of the literal (KELVIN SIGN for k,
	// LONG S for s). A buffer without them can be checked byte by byte.
	spoilers [][]byte
	verify   bool // check the literal in place (for the current buffer)
	nlo      int  // cached next positions of lo and up (-2: unknown)
	nup      int
}

func newFoldFinder(s string) finder {
	best, bestRank := -1, 1<<30
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || !asciiFoldSafe(c) {
			continue
		}
		if r := byteRank(c); r < bestRank {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		return nil
	}
	c := s[best]
	f := &foldFinder{lo: c, up: c, ascii: true}
	if 'a' <= c && c <= 'z' {
		f.up = c - 'a' + 'A'
	}
	seen := map[rune]bool{}
	for _, r := range s {
		if r >= utf8.RuneSelf {
			f.ascii = false
			break
		}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if o >= utf8.RuneSelf && !seen[o] {
				seen[o] = true
				f.spoilers = append(f.spoilers, []byte(string(o)))
			}
		}
	}
	if f.ascii {
		f.pair = newPairScan(s, true)
	}
	f.reset(nil)
	return f
}

func (f *foldFinder) reset(buf []byte) {
	f.nlo, f.nup = -2, -2
	f.verify = f.ascii
	for _, sp := range f.spoilers {
		if f.verify && bytes.Contains(buf, sp) {
			f.verify = false
		}
	}
}

func (f *foldFinder) next(buf []byte, from int) int {
	if f.verify {
		return f.pair.index(buf, from)
	}
	// The anchor may sit after wider runes, so it is looked for from from itself.
	return f.nextAnchor(buf, from)
}

func (f *foldFinder) nextAnchor(buf []byte, from int) int {
	if from >= len(buf) {
		return -1
	}
	if f.nlo != -1 && f.nlo < from {
		f.nlo = indexFrom(buf, from, f.lo)
	}
	if f.lo == f.up {
		return f.nlo
	}
	if f.nup != -1 && f.nup < from {
		f.nup = indexFrom(buf, from, f.up)
	}
	switch {
	case f.nlo < 0:
		return f.nup
	case f.nup < 0:
		return f.nlo
	}
	return min(f.nlo, f.nup)
}

func indexFrom(buf []byte, from int, c byte) int {
	i := bytes.IndexByte(buf[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// anyFinder finds the earliest hit of any of several finders, remembering each one's next
// hit so that no buffer is scanned twice by the same finder.
type anyFinder struct {
	fs  []finder
	pos []int
}

func (a *anyFinder) reset(buf []byte) {
	for i, f := range a.fs {
		f.reset(buf)
		a.pos[i] = -2
	}
}

func (a *anyFinder) next(buf []byte, from int) int {
	best := -1
	for i, f := range a.fs {
		p := a.pos[i]
		if p != -1 && p < from {
			p = f.next(buf, from)
			a.pos[i] = p
		}
		if p >= 0 && (best < 0 || p < best) {
			best = p
		}
	}
	return best
}

// rareByte reports whether c is rare in source code and text (see byteRank).
func rareByte(c byte) bool { return byteRank(c) == rareRank }

const rareRank = 100

// byteRank orders bytes from rare (low) to common (high) in source code and text, so that
// the finders look for bytes that give few false hits.
func byteRank(c byte) int {
	const common = " etaoinsrhldcumfpgwybv_.,()=;:\"'/-kx0123456789\n\t{}[]<>*&+#!|jqz"
	if i := strings.IndexByte(common, c); i >= 0 {
		return 1000 - i
	}
	return rareRank
}
