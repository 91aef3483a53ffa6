package trigram

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Op is how a [Query] combines its parts.
type Op int

// Query operators.
const (
	All  Op = iota // every file may match
	None           // no file can match
	And
	Or
)

// Query is which trigrams a matching file must hold: all of Tri and of Sub for And, one
// of them for Or.
type Query struct {
	Op  Op
	Tri []Trigram
	Sub []*Query
}

func (q *Query) String() string {
	switch q.Op {
	case All:
		return "+"
	case None:
		return "-"
	}
	var parts []string
	for _, t := range q.Tri {
		parts = append(parts, fmt.Sprintf("%q", string([]byte{byte(t >> 16), byte(t >> 8), byte(t)})))
	}
	for _, s := range q.Sub {
		parts = append(parts, "("+s.String()+")")
	}
	sep := " "
	if q.Op == Or {
		sep = "|"
	}
	return strings.Join(parts, sep)
}

// Limits on the sets of exact strings planning tracks.
const (
	maxExact    = 16
	maxExactLen = 64
	maxClass    = 8
)

// Plan returns the query a file must satisfy to hold a match of re: sound (never leaves
// out a file that matches), not exact. Trigrams are exact bytes: a case-folded ASCII
// letter asks for a trigram with either case of it; a case-folded rune outside ASCII, or
// with a fold outside ASCII (k, s), is not relied on.
func Plan(re *syntax.Regexp) *Query {
	return analyze(re.Simplify()).query()
}

// The strings planning tracks stand for an ASCII letter of either case by a control byte,
// anyCase('a') = 0x01 … anyCase('z') = 0x1a; a pattern's own bytes in that range are not
// relied on.
func anyCase(lower byte) byte { return lower - 'a' + 1 }

func isAnyCase(b byte) bool { return 1 <= b && b <= 26 }

// cases returns the bytes b stands for: both cases of a letter for an anyCase byte.
func cases(b byte) []byte {
	if isAnyCase(b) {
		return []byte{'a' + b - 1, 'A' + b - 1}
	}
	return []byte{b}
}

// info is what is known about the strings a subexpression matches: exactly the set exact
// (with anyCase bytes), or, when exact is nil, at least q.
type info struct {
	exact []string
	q     *Query
}

var anything = &Query{Op: All}

func (i info) query() *Query {
	if i.exact == nil {
		return i.q
	}
	return exactQuery(i.exact)
}

func exactQuery(set []string) *Query {
	if len(set) == 0 {
		return &Query{Op: None}
	}
	or := &Query{Op: Or}
	for _, s := range set {
		and := stringQuery(s)
		if and.Op == All {
			return anything
		}
		or.Sub = append(or.Sub, and)
	}
	if len(or.Sub) == 1 {
		return or.Sub[0]
	}
	return or
}

// stringQuery asks for every trigram of s; one with anyCase bytes, for one of its case
// variants.
func stringQuery(s string) *Query {
	if len(s) < 3 {
		return anything
	}
	q := &Query{Op: And}
	seen := map[string]bool{}
	for i := 0; i+3 <= len(s); i++ {
		w := s[i : i+3]
		if seen[w] {
			continue
		}
		seen[w] = true
		if !isAnyCase(w[0]) && !isAnyCase(w[1]) && !isAnyCase(w[2]) {
			q.Tri = append(q.Tri, Trigram(w[0])<<16|Trigram(w[1])<<8|Trigram(w[2]))
			continue
		}
		or := &Query{Op: Or}
		for _, a := range cases(w[0]) {
			for _, b := range cases(w[1]) {
				for _, c := range cases(w[2]) {
					or.Tri = append(or.Tri, Trigram(a)<<16|Trigram(b)<<8|Trigram(c))
				}
			}
		}
		slices.Sort(or.Tri)
		q.Sub = append(q.Sub, or)
	}
	slices.Sort(q.Tri)
	return q
}

func and(a, b *Query) *Query {
	switch {
	case a.Op == None || b.Op == None:
		return &Query{Op: None}
	case a.Op == All:
		return b
	case b.Op == All:
		return a
	}
	return &Query{Op: And, Sub: []*Query{a, b}}
}

func or(a, b *Query) *Query {
	switch {
	case a.Op == All || b.Op == All:
		return anything
	case a.Op == None:
		return b
	case b.Op == None:
		return a
	}
	return &Query{Op: Or, Sub: []*Query{a, b}}
}

func inexact(i info) info { return info{q: i.query()} }

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return info{exact: []string{}}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return info{exact: []string{""}}
	case syntax.OpLiteral:
		return literal(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		return class(re.Rune)
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		return info{q: anything}
	case syntax.OpPlus:
		return inexact(analyze(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min == 0 {
			return info{q: anything}
		}
		return inexact(analyze(re.Sub[0]))
	case syntax.OpConcat:
		acc := info{exact: []string{""}}
		for _, s := range re.Sub {
			acc = concat(acc, analyze(s))
		}
		return acc
	case syntax.OpAlternate:
		acc := info{exact: []string{}}
		for _, s := range re.Sub {
			acc = alternate(acc, analyze(s))
		}
		return acc
	}
	return info{q: anything} // any character, any byte
}

// literal is a run of runes; a folded rune whose case variants leave ASCII breaks it, as
// does a control byte that stands for a letter of either case.
func literal(runes []rune, foldCase bool) info {
	acc := info{exact: []string{""}}
	var b strings.Builder
	for _, r := range runes {
		// U+FFFD also matches a byte that is not UTF-8.
		if foldCase && !asciiFold(r) || r == utf8.RuneError || r < utf8.RuneSelf && isAnyCase(byte(r)) {
			acc = concat(acc, info{exact: []string{b.String()}})
			acc = concat(acc, info{q: anything})
			b.Reset()
			continue
		}
		switch {
		case foldCase && isLetter(r):
			b.WriteByte(anyCase(byte(unicode.ToLower(r))))
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		default:
			b.WriteRune(r)
		}
	}
	return concat(acc, info{exact: []string{b.String()}})
}

func isLetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

// asciiFold reports whether r and every rune it folds to are ASCII.
func asciiFold(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// class is a set of runes, at most maxClass once each letter present in both cases is
// counted once; one with a control byte that stands for a letter of either case is not
// relied on.
func class(ranges []rune) info {
	var runes []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if int(hi-lo) >= 2*maxClass || lo <= utf8.RuneError && utf8.RuneError <= hi || lo <= 26 && hi >= 1 {
			return info{q: anything}
		}
		for r := lo; r <= hi; r++ {
			runes = append(runes, r)
			if len(runes) > 2*maxClass {
				return info{q: anything}
			}
		}
	}
	var set []string
	for _, r := range runes {
		switch {
		case !isLetter(r):
			set = append(set, string(r))
		case slices.Contains(runes, r^0x20): // the other case is there too
			set = append(set, string(rune(anyCase(byte(unicode.ToLower(r))))))
		default:
			set = append(set, string(rune(r)))
		}
	}
	slices.Sort(set)
	set = slices.Compact(set)
	if len(set) > maxClass {
		return info{q: anything}
	}
	return info{exact: set}
}

func concat(a, b info) info {
	if a.exact != nil && b.exact != nil && len(a.exact)*len(b.exact) <= maxExact {
		var set []string
		long := false
		for _, x := range a.exact {
			for _, y := range b.exact {
				set = append(set, x+y)
				long = long || len(x+y) > maxExactLen
			}
		}
		if !long {
			slices.Sort(set)
			return info{exact: slices.Compact(set)}
		}
	}
	return info{q: and(a.query(), b.query())}
}

func alternate(a, b info) info {
	if a.exact != nil && b.exact != nil && len(a.exact)+len(b.exact) <= maxExact {
		set := append(slices.Clone(a.exact), b.exact...)
		slices.Sort(set)
		return info{exact: slices.Compact(set)}
	}
	return info{q: or(a.query(), b.query())}
}
