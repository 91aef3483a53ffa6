package glob

import (
	"math/rand/v2"
	"path"
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
		g, err := Compile(pattern, Gitignore)
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

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "a/b/main.goo", false},
		{"./*.go", "a/main.go", false},
		{"./*.go", "main.go", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"src/**/test_*.py", "src/test_a.py", true},
		{"src/**/test_*.py", "src/x/y/test_a.py", true},
		{"src/**/test_*.py", "lib/src/test_a.py", false},
		{"*.{ts,tsx}", "web/a.tsx", true},
		{"*.{ts,tsx}", "web/a.js", false},
		{"{a,b/{c,d}}/*.go", "b/d/x.go", true},
		{"a/**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/*/b", "a/x/y/b", false},
		{"[!a]*.go", "b.go", true},
		{"[!a]*.go", "a.go", false},
		{"[^a]*.go", "a.go", false},
		{`\*.go`, "*.go", true},
		{`\*.go`, "x.go", false},
		{`\**`, "*0", true}, // an escaped star, then a star
		{"[[!]", "!", true}, // a '!' inside a class is itself
		{`a\\**`, `a\b`, true},
		{"a/{b,}", "a/b", true},
		{"a/{b,}", "a", true}, // an alternative that ends in a slash names a directory
		{"a/{b,}", "x/a", false},
		{"{a,b/c}", "x/a", false}, // a pattern with a slash is a path, in every alternative
		{"Makefile", "sub/Makefile", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"/top.txt", "top.txt", true},
		{"/top.txt", "sub/top.txt", false},
	}
	for _, tc := range tests {
		g, err := Compile(tc.pattern, Extended)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		if got := g.Match(tc.path); got != tc.want {
			t.Errorf("Glob(%q).Match(%q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
	for _, bad := range []string{"[a", "{a,b", "a}", "."} {
		if _, err := Compile(bad, Extended); err == nil {
			t.Errorf("Compile(%q) succeeded, want an error", bad)
		}
	}
}

func TestLiteralPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, prefix, rest string }{
		{"src/pkg/**/*.go", "src/pkg", "**/*.go"},
		{"./src/*.go", "src", "*.go"},
		{"*.go", "", "*.go"},
		{"**/x", "", "**/x"},
		{"a/b", "a", "b"},
		{"../x/*.go", "", "../x/*.go"},
	} {
		p, r := LiteralPrefix(tc.in)
		if p != tc.prefix || r != tc.rest {
			t.Errorf("LiteralPrefix(%q) = %q, %q; want %q, %q", tc.in, p, r, tc.prefix, tc.rest)
		}
	}
}

// FuzzGlob checks Glob against path.Match, which agrees with it on slash-containing
// patterns without '**' or braces, and checks that no pattern or path panics.
func FuzzGlob(f *testing.F) {
	f.Add("a/*.go", "a/b.go")
	f.Add("src/[!x]?/*", "src/ab/c")
	f.Add("**/x", "a/b/x")
	f.Add("a/{b,c}", "a/c")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		for _, syntax := range []Syntax{Gitignore, Extended} {
			g, err := Compile(pattern, syntax)
			if err != nil {
				continue
			}
			got := g.Match(name)
			if !strings.Contains(pattern, "/") || strings.Contains(pattern, "**") || strings.ContainsAny(pattern, "{}") ||
				strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "./") || strings.HasSuffix(pattern, "/") ||
				strings.Contains(pattern, "[!") || strings.Contains(pattern, `\`) || strings.Contains(pattern, "/./") {
				continue
			}
			want, err := path.Match(pattern, name)
			if err != nil {
				continue
			}
			if got != want {
				t.Errorf("Glob(%q).Match(%q) = %v, path.Match says %v", pattern, name, got, want)
			}
		}
	})
}
