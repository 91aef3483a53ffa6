package search

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestIgnoreRules(t *testing.T) {
	t.Parallel()
	set := parseIgnore([]byte(strings.Join([]string{
		"# comment",
		"*.log",
		"!keep.log",
		"/root-only.txt",
		"build/",
		"docs/*.md",
		"deep/**/gen",
		`\#hash`,
		`\!bang`,
		"trailing   ",
		"cache/**",
		"!cache/keep",
		"",
	}, "\n")))
	tests := []struct {
		rel   string
		dir   bool
		want  bool
		known bool
	}{
		{"x.log", false, true, true},
		{"a/b/x.log", false, true, true},
		{"keep.log", false, false, true},
		{"a/keep.log", false, false, true},
		{"root-only.txt", false, true, true},
		{"a/root-only.txt", false, false, false},
		{"build", true, true, true},
		{"a/build", true, true, true},
		{"build", false, false, false},
		{"docs/a.md", false, true, true},
		{"docs/sub/a.md", false, false, false},
		{"x/docs/a.md", false, false, false},
		{"deep/gen", false, true, true},
		{"deep/a/b/gen", false, true, true},
		{"#hash", false, true, true},
		{"!bang", false, true, true},
		{"trailing", false, true, true},
		{"cache", true, false, false}, // "cache/**" matches inside cache, not cache itself
		{"cache/x", false, true, true},
		{"cache/keep", false, false, true},
	}
	for _, tc := range tests {
		got, known := set.match(tc.rel, tc.dir)
		if got != tc.want || known != tc.known {
			t.Errorf("match(%q, dir=%v) = %v, %v; want %v, %v", tc.rel, tc.dir, got, known, tc.want, tc.known)
		}
	}
}

func TestLiteralExtraction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		fold    bool
		lits    []string
		exact   bool
	}{
		{"ErrNotExist", false, []string{"ErrNotExist"}, true},
		{"ErrNotExist|ErrPermission|ErrClosed", false, []string{"ErrNotExist", "ErrPermission", "ErrClosed"}, true},
		{`func [A-Z]\w*Reader\(`, false, []string{"Reader("}, false},
		{`\bfoo\b`, false, []string{"foo"}, false},
		{"colou?r", false, []string{"colour", "color"}, true},
		{"errnotexist", true, []string{"errnotexist"}, false}, // s folds to ſ: verified by regexp
		{"main", true, []string{"main"}, true},
		{`\w+`, false, nil, false},
		{"a|.*", false, nil, false},
		{"[ab]c", false, []string{"ac", "bc"}, true},
		// A literal, then what the next part must begin with.
		{`\w+_\d{4}\b`, false, []string{"_0", "_1", "_2", "_3", "_4", "_5", "_6", "_7", "_8", "_9"}, false},
		{`x(ab|cd)+y`, false, []string{"xab", "xcd"}, false},
		{`[0-9]{3,}`, false, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, false},
	}
	for _, tc := range tests {
		m, err := compileMatcher(tc.pattern, tc.fold, false)
		if err != nil {
			t.Fatalf("compileMatcher(%q): %v", tc.pattern, err)
		}
		var got []string
		for _, l := range m.lits {
			got = append(got, l.s)
		}
		if !slices.Equal(got, tc.lits) || m.exact != tc.exact {
			t.Errorf("compileMatcher(%q) lits = %q exact=%v, want %q exact=%v", tc.pattern, got, m.exact, tc.lits, tc.exact)
		}
	}
}

// naiveLines is the reference: every line tested with the line regexp on its own.
func naiveLines(m *matcher, buf []byte) []int {
	var out []int
	start := 0
	for start < len(buf) {
		end := bytes.IndexByte(buf[start:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += start
		}
		if m.line.Match(buf[start:end]) {
			out = append(out, start)
		}
		start = end + 1
	}
	return out
}

func fastLines(m *matcher, buf []byte) []int {
	var out []int
	m.matchLines(buf, newFinder(m.lits), func(s, _ int) bool {
		out = append(out, s)
		return true
	})
	return out
}

func TestMatchLinesAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	text := []byte("a_12 b_1 c_123\nx_9\na_1 b_2 c_3 d_4 e_5 f_6 g_7 h_8 i_9 j_10\nHello world\nhello WORLD\nſtop KELVIN \u212aelvin\nfoo\n\nErrNotExist here\nerrNOTexist\n^start\nend$\nno newline at end")
	for _, p := range []string{"hello", "world", "stop", "kelvin", "errnotexist", "ErrNotExist|foo", "^$", "^", "x*", `\bend`, "e.d", "[Hh]ello", "start|end", "(?i)HELLO",
		`\w+_\d{2}\b`, `o(r|n)+`, `e[a-z]{2,}d`, `_\d|x`, `\w+_\d+`, `[a-z]+ (w|h)`, `\w+o\b`, `.+end$`, `(\w)(\w) here`, `[A-Z]\w+NOT\w+`, `x*_\d\b`, `\w_\d+ j`} {
		for _, fold := range []bool{false, true} {
			m, err := compileMatcher(p, fold, false)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fastLines(m, text), naiveLines(m, text); !slices.Equal(got, want) {
				t.Errorf("pattern %q fold=%v: lines %v, want %v", p, fold, got, want)
			}
		}
	}
}

func FuzzMatchLines(f *testing.F) {
	f.Add("hello", false, "Hello\nhello\nſ\n")
	f.Add("a|bc", true, "ABC\nxbC\n")
	f.Add(`\bst`, true, "ſT\nSt\n")
	f.Add("k[a-z]+", true, "\u212aelvin\nkx\n")
	f.Add(`\w+_\d{2}\b`, false, "a_12\n_1\nb_123\n")
	f.Fuzz(func(t *testing.T, pattern string, fold bool, text string) {
		m, err := compileMatcher(pattern, fold, false)
		if err != nil {
			return
		}
		buf := []byte(text)
		if got, want := fastLines(m, buf), naiveLines(m, buf); !slices.Equal(got, want) {
			t.Errorf("pattern %q fold=%v text %q: lines %v, want %v (lits %v exact %v)", pattern, fold, text, got, want, m.lits, m.exact)
		}
	})
}

// FuzzIgnore parses arbitrary ignore files and matches arbitrary paths: no panics, and a
// negated copy of a rule always decides the other way.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\n/build/\n", "a/keep.log", false)
	f.Add("docs/**/x\n\\#y \n", "docs/a/x", true)
	f.Fuzz(func(t *testing.T, rules, rel string, dir bool) {
		set := parseIgnore([]byte(rules))
		ig, known := set.match(rel, dir)
		if !known && ig {
			t.Errorf("match(%q) ignored without a deciding rule", rel)
		}
		for _, line := range strings.Split(rules, "\n") {
			r, ok := parseIgnoreLine(line)
			if !ok || r.negate || strings.HasPrefix(line, `\`) {
				continue
			}
			neg, ok := parseIgnoreLine("!" + line)
			if !ok {
				t.Fatalf("%q parses but %q does not", line, "!"+line)
			}
			one := &ignoreSet{rules: []ignoreRule{r}}
			two := &ignoreSet{rules: []ignoreRule{r, neg}}
			a, ka := one.match(rel, dir)
			b, kb := two.match(rel, dir)
			if ka != kb || ka && a == b {
				t.Errorf("rule %q on %q: %v,%v; negated after it: %v,%v", line, rel, a, ka, b, kb)
			}
		}
	})
}

func TestContextLines(t *testing.T) {
	t.Parallel()
	buf := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10")
	m, _ := compileMatcher("^(2|3|9|10)$", false, false)
	var hits []span
	lc := lineCounter{}
	m.matchLines(buf, newFinder(m.lits), func(s, e int) bool {
		hits = append(hits, span{s, e, lc.at(buf, s)})
		return true
	})
	out := contextLines(buf, hits, 1, 1, 100, 100, nil, false)
	var got []string
	for _, l := range out {
		s := l.Text
		if l.Match {
			s += "*"
		}
		if l.Gap {
			s = "|" + s
		}
		got = append(got, s)
	}
	want := []string{"1", "2*", "3*", "4", "|8", "9*", "10*"}
	if !slices.Equal(got, want) {
		t.Errorf("contextLines = %q, want %q", got, want)
	}
}

// TestLongLineShowsItsMatch: a matching line longer than the most a line shows is shown
// from its start when its first match lies there, else from a little before the match;
// context lines are always shown from their start, and no cut splits a character.
func TestLongLineShowsItsMatch(t *testing.T) {
	t.Parallel()
	const maxLine = 40
	head := strings.Repeat("é", 100) // 200 bytes of two-byte characters
	tests := []struct {
		name, line, pattern string
		wantBefore          bool
	}{
		{"match at the start", "NEEDLE" + head, "NEEDLE", false},
		{"match deep in the line", head + "NEEDLE" + head, "NEEDLE", true},
		{"match crossing the shown part", strings.Repeat("a", 38) + "NEEDLE" + head, "NEEDLE", true},
		{"case-insensitive", head + "needle" + head, "(?i)NEEDLE", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte("context " + head + "\n" + tt.line + "\n")
			m, err := compileMatcher(tt.pattern, false, false)
			if err != nil {
				t.Fatal(err)
			}
			var hits []span
			lc := lineCounter{}
			m.matchLines(buf, newFinder(m.lits), func(s, e int) bool {
				hits = append(hits, span{s, e, lc.at(buf, s)})
				return true
			})
			out := contextLines(buf, hits, 1, 0, 100, maxLine, m, false)
			if len(out) != 2 {
				t.Fatalf("contextLines gave %d lines, want 2", len(out))
			}
			ctx, l := out[0], out[1]
			if ctx.CutBefore != 0 || !strings.HasPrefix(ctx.Text, "context ") {
				t.Errorf("context line = %+v, want it shown from its start", ctx)
			}
			if !m.line.MatchString(l.Text) {
				t.Errorf("line shown as %q, without its match", l.Text)
			}
			if got := l.CutBefore > 0; got != tt.wantBefore {
				t.Errorf("CutBefore = %d, want it cut before: %v", l.CutBefore, tt.wantBefore)
			}
			if len(l.Text) > maxLine || l.CutBefore+len(l.Text)+l.Cut != len(tt.line) {
				t.Errorf("shown %d bytes, cut %d before and %d after, of a %d-byte line", len(l.Text), l.CutBefore, l.Cut, len(tt.line))
			}
			if !utf8.ValidString(l.Text) {
				t.Errorf("a cut split a character: %q", l.Text)
			}
		})
	}
}

func TestMultilineLines(t *testing.T) {
	t.Parallel()
	buf := []byte("a\nfoo\nbar\nb\nfoo\nbar")
	m, err := compileMatcher(`foo\nbar`, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	m.matchLines(buf, newFinder(m.lits), func(s, e int) bool {
		got = append(got, string(buf[s:e]))
		return true
	})
	if want := []string{"foo", "bar", "foo", "bar"}; !slices.Equal(got, want) {
		t.Errorf("multiline lines = %q, want %q", got, want)
	}
	if _, err := compileMatcher(`(`, false, true); err == nil || !regexp.MustCompile(`RE2`).MatchString(err.Error()) {
		t.Errorf("bad pattern error = %v", err)
	}
}

func TestASCIIFoldSafe(t *testing.T) {
	t.Parallel()
	for c := range utf8.RuneSelf {
		want := true
		for r := unicode.SimpleFold(rune(c)); r != rune(c); r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf {
				want = false
			}
		}
		if got := asciiFoldSafe(byte(c)); got != want {
			t.Errorf("asciiFoldSafe(%q) = %v, want %v", rune(c), got, want)
		}
	}
}

// FuzzLongLine checks the line a matching line shows: at most maxLine bytes, valid UTF-8
// when the line is, the cut parts and the shown one adding up to the line, and the first
// match's start inside what is shown.
func FuzzLongLine(f *testing.F) {
	f.Add(strings.Repeat("é", 100)+"NEEDLE"+strings.Repeat("x", 100), "NEEDLE", 40)
	f.Add("NEEDLE"+strings.Repeat("ab", 50), "N.*D", 10)
	f.Fuzz(func(t *testing.T, line, pattern string, maxLine int) {
		if maxLine < 4 || maxLine > 1000 || strings.ContainsAny(line, "\r\n") {
			return
		}
		m, err := compileMatcher(pattern, false, false)
		if err != nil {
			return
		}
		loc := m.firstIn([]byte(line))
		if loc == nil || loc[1] == loc[0] {
			return
		}
		buf := []byte(line + "\n")
		l := makeLine(buf, span{0, len(line), 1}, true, false, maxLine, m)
		if !utf8.ValidString(line) {
			return // shown with U+FFFD for each bad byte, so lengths differ
		}
		if len(l.Text) > maxLine {
			t.Fatalf("shown %d bytes, more than %d", len(l.Text), maxLine)
		}
		if l.CutBefore+len(l.Text)+l.Cut != len(line) {
			t.Fatalf("cut %d before, shown %d, cut %d after: not the %d bytes of the line", l.CutBefore, len(l.Text), l.Cut, len(line))
		}
		if !utf8.ValidString(l.Text) {
			t.Fatalf("shown text %q is not valid UTF-8", l.Text)
		}
		if l.CutBefore > 0 && (loc[0] < l.CutBefore || loc[0] >= l.CutBefore+len(l.Text)) {
			t.Fatalf("first match at %d, shown from %d to %d", loc[0], l.CutBefore, l.CutBefore+len(l.Text))
		}
	})
}

// TestAllInIsBounded: the matched parts kept of one line stay within their bounds,
// however many the line holds.
func TestAllInIsBounded(t *testing.T) {
	t.Parallel()
	m, err := compileMatcher(`a+`, false, false)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat(strings.Repeat("a", 100)+" ", 2000))
	parts := m.allIn(line, 500)
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if len(parts) == 0 || len(parts) > maxMatches || size > maxMatchesSize {
		t.Errorf("allIn kept %d parts, %d bytes; want some, at most %d and %d bytes", len(parts), size, maxMatches, maxMatchesSize)
	}
}

func TestQuotePattern(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"short", `func \w+`, `"func \\w+"`},
		{"200 characters", strings.Repeat("é", 200), `"` + strings.Repeat("é", 200) + `"`},
		{"cut at a character, not a byte", strings.Repeat("é", 201), `"` + strings.Repeat("é", 200) + `"… (201 characters)`},
	}
	for _, tt := range tests {
		if got := QuotePattern(tt.in); got != tt.want {
			t.Errorf("%s: QuotePattern(%q) = %s, want %s", tt.name, tt.in, got, tt.want)
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
