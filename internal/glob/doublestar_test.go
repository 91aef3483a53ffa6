package glob

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// FuzzAgreesWithDoublestar checks the engine against doublestar, a widely used glob
// library, on the patterns both accept, for paths as Boris matches them (relative, clean,
// no trailing slash). Where the two differ on purpose, the pattern is skipped here and the
// difference is listed in the package documentation.
func FuzzAgreesWithDoublestar(f *testing.F) {
	for _, seed := range [][2]string{
		{"a/*.go", "a/b.go"}, {"**/x", "a/b/x"}, {"a/{b,c}", "a/c"}, {"a/**", "a/b/c"},
		{"a/**/b", "a/b"}, {"[!a]*", "b"}, {`\*.go`, "*.go"}, {"a/{b,}", "a"}, {"*.{ts,tsx}", "a.tsx"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if !comparable(pattern, path) {
			return
		}
		g, err := Compile(pattern, Extended)
		if err != nil || !doublestar.ValidatePattern(pattern) {
			return
		}
		if zeroTail(pattern, path) {
			return
		}
		want, err := doublestar.Match(pattern, path)
		if err != nil {
			return
		}
		if got := g.Match(path); got != want {
			t.Errorf("Compile(%q).Match(%q) = %v, doublestar says %v", pattern, path, got, want)
		}
	})
}

// comparable reports whether pattern and path are outside the documented differences.
func comparable(pattern, path string) bool {
	switch {
	case !utf8.ValidString(pattern) || !utf8.ValidString(path):
		return false // doublestar decodes bytes as runes: two invalid bytes are equal (4)
	case strings.Contains(pattern, "*{") || strings.Contains(pattern, "}*"):
		return false // stars meet across a brace after expansion; doublestar keeps them apart (5)
	case strings.Contains(pattern, "**/**"):
		return false // '**/**' is one '**'; doublestar's trailing one then wants a segment (5)
	case strings.Contains(pattern, "{}") || strings.Contains(pattern, "{,") || strings.Contains(pattern, ",,") || strings.Contains(pattern, ",}"):
		return false // an empty alternative matches the empty string; doublestar drops some (7)
	case strings.Contains(pattern, "*") && strings.ContainsAny(pattern, "?[") && !ascii(path):
		return false // path.Match's '*' may stop inside a multi-byte character (8)
	case strings.Contains(pattern, "[") && strings.Contains(pattern, "-"):
		return false // a reversed range ('[z-a]') matches nothing here, as in path.Match (9)
	case path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") ||
		strings.Contains(path, "//") || strings.Contains("/"+path+"/", "/./") || strings.Contains("/"+path+"/", "/../"):
		return false // not a clean relative path, as Boris matches
	case !strings.Contains(strings.TrimSuffix(pattern, "/"), "/") && strings.Contains(path, "/"):
		return false // a name pattern matches the last segment at any depth (1)
	case strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "./") || strings.HasSuffix(pattern, "/"):
		return false // anchoring and directory marks (2)
	}
	alts, err := expandBraces(pattern)
	for _, a := range alts {
		if strings.HasSuffix(a, "/") {
			return false // an alternative that ends in a slash names a directory (3)
		}
		for _, seg := range strings.Split(a, "/") {
			if seg != "**" && strings.Contains(seg, "**") {
				return false // a run of stars in a segment is one star; doublestar fails some (5)
			}
		}
		if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.Contains(a, "/./") {
			return false // anchoring, in an alternative too (2)
		}
	}
	return err == nil
}

// zeroTail reports whether a trailing '/**' of pattern would match zero segments of path:
// always allowed here, only after a literal directory by doublestar (6).
func zeroTail(pattern, path string) bool {
	if strings.Contains(pattern, "/**}") || strings.Contains(pattern, "/**,") {
		return true
	}
	head, ok := strings.CutSuffix(pattern, "/**")
	if !ok {
		return false
	}
	g, err := Compile(head, Extended)
	return err == nil && g.Match(path)
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
