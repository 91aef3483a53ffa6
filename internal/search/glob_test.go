package search

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// Patterns with many '**' (or many '*') are matched in polynomial work: a .gitignore line
// such as "**/a/**/a/**/a/**/a/**/x" must not hang a search of a deep tree.
func TestGlobHostilePatternsArePolynomial(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("a/", 60) + "y"
	for _, pattern := range []string{
		"**/a/**/a/**/a/**/a/**/a/**/x",
		"**/*/**/*/**/*/**/*/**/x",
		"a/**/a/**/a/**/a/**/a/**/a/**/b",
		"**/**/**/**/**/x",
		"a*a*a*a*a*a*a*a*a*b",
	} {
		g, err := CompileGlob(pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{deep, strings.Repeat("a", 250)} {
			for i := range g.alts {
				gp := &g.alts[i]
				if gp.basename || len(gp.segs) == 2 && gp.segs[0].kind == segAny {
					if gp.match(rel) {
						t.Errorf("%q matches %q", pattern, rel)
					}
					continue
				}
				m := gp.matcher(rel)
				if m.at(0, 0) {
					t.Errorf("%q matches %q", pattern, rel)
				}
				// Each (pattern segment, path segment) pair is tried at most from its
				// two predecessors.
				depth := strings.Count(rel, "/") + 1
				if limit := 2 * len(gp.segs) * (depth + 1); m.steps > limit {
					t.Errorf("%q against a path %d deep took %d steps, want at most %d", pattern, depth, m.steps, limit)
				}
			}
		}
	}
}

// matchSegsNaive is the plain backtracking matcher: exponential, but obviously right.
func matchSegsNaive(segs []segment, p string, strictTail bool) bool {
	for len(segs) > 0 {
		s := &segs[0]
		if s.kind == segAny {
			rest := segs[1:]
			if len(rest) == 0 {
				return true
			}
			for {
				if matchSegsNaive(rest, p, strictTail) {
					return true
				}
				i := strings.IndexByte(p, '/')
				if i < 0 {
					return false
				}
				p = p[i+1:]
			}
		}
		head, tail, more := strings.Cut(p, "/")
		if !s.match(head) {
			return false
		}
		segs = segs[1:]
		if !more {
			return len(segs) == 0 || len(segs) == 1 && segs[0].kind == segAny && !strictTail
		}
		p = tail
	}
	return false
}

// The memoised matcher agrees with plain backtracking on random small patterns and paths.
func TestGlobMatchAgreesWithBacktracking(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "b", "*", "**", "a*", "*b", "?", "[ab]"}
	names := []string{"a", "b", "ab", "ba", "c"}
	for range 20000 {
		var ps []string
		for range 1 + r.IntN(6) {
			ps = append(ps, pieces[r.IntN(len(pieces))])
		}
		pattern := strings.Join(ps, "/")
		gp, err := compilePath(pattern)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for range 1 + r.IntN(7) {
			ns = append(ns, names[r.IntN(len(names))])
		}
		rel := strings.Join(ns, "/")
		for _, strict := range []bool{false, true} {
			want := matchSegsNaive(gp.segs, rel, strict)
			for _, memo := range []bool{false, true} {
				m := segMatcher{segs: gp.segs, p: rel, strictTail: strict}
				if memo {
					m.failed = make([]bool, len(gp.segs)*(len(rel)+1))
				}
				if got := m.at(0, 0); got != want {
					t.Fatalf("%q against %q (strict tail %v, memo %v) = %v, want %v", pattern, rel, strict, memo, got, want)
				}
			}
		}
	}
}

func TestSplitPattern(t *testing.T) {
	for _, c := range []struct {
		dir, pattern, wantDir, wantPattern string
		err                                error
	}{
		{"src", "**/*.go", "src", "**/*.go", nil},
		{"", "/usr/lib/**/*.so", "/usr/lib", "**/*.so", nil},
		{"ignored", "/etc/*.conf", "/etc", "./*.conf", nil},
		{"", "../**/*.go", "", "", ErrUpward},
		{"", "/a/../b/*.go", "", "", ErrUpward},
	} {
		dir, pattern, err := SplitPattern(c.dir, c.pattern)
		if !errors.Is(err, c.err) || dir != c.wantDir || pattern != c.wantPattern {
			t.Errorf("SplitPattern(%q, %q) = %q, %q, %v; want %q, %q, %v", c.dir, c.pattern, dir, pattern, err, c.wantDir, c.wantPattern, c.err)
		}
	}
}
