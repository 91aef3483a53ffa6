package files

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// A file's text as a patch sees it: lines without their endings, which are kept apart so
// that what a patch does not touch keeps its bytes, and what it adds gets the file's style.
type patchText struct {
	bom   bool
	lines []string
	eols  []string // each line's ending: "\n", "\r\n", "\r", or "" for a last line without one
	eol   string   // the file's usual line ending, for new lines
}

const bomUTF8 = "\xEF\xBB\xBF"

func splitPatchText(data []byte) *patchText {
	t := &patchText{eol: "\n"}
	if bytes.HasPrefix(data, []byte(bomUTF8)) {
		t.bom, data = true, data[len(bomUTF8):]
	}
	cr := crStyle(data)
	switch {
	case cr:
		t.eol = "\r"
	case crlfStyle(data):
		t.eol = "\r\n"
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if cr {
			i = bytes.IndexAny(data, "\r\n")
		}
		if i < 0 {
			t.lines, t.eols = append(t.lines, string(data)), append(t.eols, "")
			break
		}
		line, end := data[:i], data[i:i+1]
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			end = data[i : i+2]
		} else if data[i] == '\n' && i > 0 && data[i-1] == '\r' {
			line, end = data[:i-1], data[i-1:i+1]
		}
		t.lines, t.eols = append(t.lines, string(line)), append(t.eols, string(end))
		data = data[len(line)+len(end):]
	}
	return t
}

// bytes joins the text again. Every line but the last ends with its own ending, or the
// file's usual one when it has none (it was the last line and lines now follow); the last
// line keeps whether the file ended with a line ending.
func (t *patchText) bytes(finalEOL string) []byte {
	var b bytes.Buffer
	if t.bom {
		b.WriteString(bomUTF8)
	}
	for i, l := range t.lines {
		b.WriteString(l)
		end := t.eols[i]
		switch {
		case i == len(t.lines)-1:
			end = finalEOL
		case end == "":
			end = t.eol
		}
		b.WriteString(end)
	}
	return b.Bytes()
}

// finalEOL is the ending of the file's last line: "" when the file does not end with a
// line ending.
func (t *patchText) finalEOL() string {
	if len(t.eols) == 0 {
		return t.eol
	}
	return t.eols[len(t.eols)-1]
}

// replacement is one chunk's change: n lines from at become lines, ending with eols.
type replacement struct {
	at, n int
	lines []string
	eols  []string
}

// ChunkError is the [ErrNoMatch] of a chunk of an update whose lines or "@@" context are
// not in the file.
type ChunkError struct {
	Path    string   // the file, as the patch names it
	Context string   // the "@@" line not found, or ""
	Old     []string // the lines not found, when Context was
	After   int      // where the search started: after this line (0: the start of the file)
	Miss    *MissError
}

func (e *ChunkError) Error() string {
	var b strings.Builder
	if e.Context != "" {
		fmt.Fprintf(&b, "Failed to find context '%s' in %s", e.Context, e.Path)
	} else {
		fmt.Fprintf(&b, "Failed to find expected lines in %s:\n%s", e.Path, strings.Join(e.Old, "\n"))
	}
	if e.After > 0 {
		fmt.Fprintf(&b, "\n(searched after line %d, where the chunk before ended)", e.After)
	}
	if e.Miss != nil && e.Miss.Closest != nil {
		c := e.Miss.Closest
		fmt.Fprintf(&b, "\nThe closest lines in the file are %s:\n%s", LineSpan(c.First, c.Last), c.Text)
		for _, d := range c.Diffs {
			fmt.Fprintf(&b, "  line %d: file has %s, patch has %s\n", d.Line, d.File, d.Old)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Is reports that a ChunkError is an [ErrNoMatch].
func (e *ChunkError) Is(target error) bool { return target == ErrNoMatch }

// ChunkAt is the error of chunk Index (from 1) of an update's Count, at patch line Line.
type ChunkAt struct {
	Index, Count, Line int
	Err                error
}

func (e *ChunkAt) Error() string { return e.Err.Error() }
func (e *ChunkAt) Unwrap() error { return e.Err }

// update applies chunks to t, in memory, and reports the first that does not apply.
func (t *patchText) update(ctx context.Context, path string, chunks []Chunk) error {
	var reps []replacement
	from := 0
	for i, c := range chunks {
		r, err := t.locate(ctx, path, c, from)
		if err != nil {
			return &ChunkAt{Index: i + 1, Count: len(chunks), Line: c.Line, Err: err}
		}
		reps = append(reps, r)
		from = r.at + r.n
	}
	for i := len(reps) - 1; i >= 0; i-- {
		t.replace(reps[i])
	}
	return nil
}

// locate finds where chunk c applies, at or after line index from.
func (t *patchText) locate(ctx context.Context, path string, c Chunk, from int) (replacement, error) {
	if c.Context != "" {
		at, ok := seekLines(t.lines, []string{c.Context}, from, false)
		if !ok {
			return replacement{}, &ChunkError{Path: path, Context: c.Context, After: from}
		}
		from = at + 1
	}
	if len(c.Old) == 0 {
		// Only added lines: after the "@@" line, or at the end of the file.
		if c.Context == "" {
			from = len(t.lines)
		}
		return t.replacement(from, nil, c.New), nil
	}
	old, lines := c.Old, c.New
	at, ok := seekLines(t.lines, old, from, c.EOF)
	if !ok && old[len(old)-1] == "" {
		// A last empty line stands for the file's final line ending.
		old = old[:len(old)-1]
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		at, ok = seekLines(t.lines, old, from, c.EOF)
	}
	if !ok {
		return replacement{}, &ChunkError{Path: path, Old: c.Old, After: from,
			Miss: miss(ctx, path, []byte(strings.Join(t.lines, "\n")), strings.Join(c.Old, "\n"))}
	}
	return t.replacement(at, old, lines), nil
}

// replacement is the change of the file's lines old, found at line index at, into lines
// new. A context line (one of old kept in new, in order) keeps the file's own text and
// ending, which a loose match may not have; other new lines get the file's usual ending.
func (t *patchText) replacement(at int, old, new []string) replacement {
	r := replacement{at: at, n: len(old), lines: make([]string, len(new)), eols: make([]string, len(new))}
	k := 0
	for j, l := range new {
		r.lines[j], r.eols[j] = l, t.eol
		for i := k; i < len(old); i++ {
			if old[i] == l {
				r.lines[j], r.eols[j] = t.lines[at+i], t.eols[at+i]
				k = i + 1
				break
			}
		}
	}
	return r
}

// replace makes r (the last line's ending is decided by [patchText.bytes]).
func (t *patchText) replace(r replacement) {
	t.lines = append(t.lines[:r.at:r.at], append(r.lines, t.lines[r.at+r.n:]...)...)
	t.eols = append(t.eols[:r.at:r.at], append(r.eols, t.eols[r.at+r.n:]...)...)
}

// seekLines finds pattern in lines at or after from, as Codex's apply_patch does: exactly,
// then ignoring trailing whitespace, then surrounding whitespace, then also typographic
// dashes, quotes and spaces. With eof the end of the file is tried first.
func seekLines(lines, pattern []string, from int, eof bool) (int, bool) {
	if len(pattern) > len(lines) {
		return 0, false
	}
	for _, same := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") },
		func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
		func(a, b string) bool { return plainPunct(a) == plainPunct(b) },
	} {
		if eof && matchAt(lines, pattern, len(lines)-len(pattern), same) {
			return len(lines) - len(pattern), true
		}
		for i := from; i+len(pattern) <= len(lines); i++ {
			if matchAt(lines, pattern, i, same) {
				return i, true
			}
		}
	}
	return 0, false
}

func matchAt(lines, pattern []string, at int, same func(a, b string) bool) bool {
	for j, p := range pattern {
		if !same(lines[at+j], p) {
			return false
		}
	}
	return true
}

// plainPunct trims s and writes its typographic dashes, quotes and spaces as ASCII.
func plainPunct(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}
