package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is the front door, read in minutes; the reference lives in docs/.
const readmeMaxLines = 700

func TestReadmeLength(t *testing.T) {
	text := readPage(t, "README.md")
	if n := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1; n >= readmeMaxLines {
		t.Errorf("README.md has %d lines, want fewer than %d: move reference material to a page in docs/ and link it", n, readmeMaxLines)
	}
}

// TestReadmeLinks: every relative link of the README and of docs/*.md leads to a file or
// directory that exists, and a link into a Markdown page with an anchor leads to one of
// that page's headings, by GitHub's rules for heading anchors.
func TestReadmeLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // page -> its anchors
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join("../..", page))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[page] = a
		return a
	}
	for _, page := range docPages(t) {
		for _, l := range pageLinks(readPage(t, page)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			dest := page
			if target != "" {
				dest = path.Join(path.Dir(page), target)
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s:%d: link %q leads out of the repository", page, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join("../..", filepath.FromSlash(dest))); err != nil {
					t.Errorf("%s:%d: link %q leads to %s, which does not exist", page, l.line, l.target, dest)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !anchorsOf(dest)[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", page, l.line, l.target, dest, anchor)
			}
		}
	}
}

// TestReadmeTestCommand: the test command the README gives (the sh block marked
// "skip runs the whole test suite") is what CI runs: each of its lines is a line of
// .ci/run, and so is the same block wherever a page of docs/ repeats it.
func TestReadmeTestCommand(t *testing.T) {
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	ciLines := map[string]bool{}
	for _, l := range strings.Split(string(ci), "\n") {
		ciLines[strings.TrimSpace(l)] = true
	}
	inReadme := false
	for _, page := range docPages(t) {
		for _, sec := range parseReadme(page, readPage(t, page)) {
			for _, b := range sec.blocks {
				if !strings.HasPrefix(b.skip, "runs the whole test suite") {
					continue
				}
				inReadme = inReadme || page == "README.md"
				for _, l := range strings.Split(b.text, "\n") {
					if l = strings.TrimSpace(l); l != "" && !ciLines[l] {
						t.Errorf("%s:%d: the test command %q is not a line of .ci/run; run the same command in both", page, b.line, l)
					}
				}
			}
		}
	}
	if !inReadme {
		t.Error("README.md gives no test command (a sh block marked <!-- readme-test: skip runs the whole test suite … -->)")
	}
}

// pageLink is one link of a page: its target as written, and the line it is on.
type pageLink struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// pageLinks returns the relative links of a Markdown page, outside code.
func pageLinks(text string) []pageLink {
	var links []pageLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			target = strings.Trim(target, "<>")
			if scheme.MatchString(target) {
				continue // http:, https:, mailto:
			}
			links = append(links, pageLink{target: target, line: i + 1})
		}
	}
	return links
}

var (
	headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkText    = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// headingAnchors returns the anchors GitHub gives a page's headings: the heading's text
// as shown (no code marks, emphasis or link targets), in lower case, with every character
// but letters, digits, marks, "_", "-" and spaces taken out and each space made a "-"; a
// second heading with the same anchor gets "-1", a third "-2".
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		h := linkText.ReplaceAllString(m[1], "$1")
		h = strings.NewReplacer("`", "", "*", "").Replace(h)
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestReadmeHeadingAnchors: the anchors are GitHub's, for the kinds of heading the pages have.
func TestReadmeHeadingAnchors(t *testing.T) {
	page := "# Boris\n## Quick start\n### `str_replace_editor` (with `--anthropic-compat`, instead of `view`)\n" +
		"## HTTP: sessions and workspaces\n## Claude Code's tool names\n```sh\n# not a heading\n```\n" +
		"## Notes\n## Notes\n## [Linked](x.md) **bold** 2026-07-28\n"
	got := headingAnchors(page)
	for _, want := range []string{"boris", "quick-start", "str_replace_editor-with---anthropic-compat-instead-of-view",
		"http-sessions-and-workspaces", "claude-codes-tool-names", "notes", "notes-1", "linked-bold-2026-07-28"} {
		if !got[want] {
			t.Errorf("no anchor %q among %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block counted as a heading")
	}
}
