package files

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Replace replaces old with new in the file at path. old must occur exactly once unless all
// is set, in which case every occurrence is replaced and counted; an empty new deletes old.
//
// Only the matched bytes change. An old with LF line endings matches the same text with
// CRLF endings, and new is then written with CRLF too, so the file keeps one style; a BOM,
// the final-newline state and bytes that are not UTF-8 stay as they were. An edit whose
// old equals new does not rewrite the file.
//
// If the file changed since it was seen (see [EditOptions]), the edit still applies when old
// matches exactly once, and Edit.Changed says so; otherwise it is refused with a
// [*StaleError]. When old is not found, the [*MissError] shows the closest text; the search
// for it stops when ctx ends.
func Replace(ctx context.Context, path, old, new string, all bool, opts EditOptions) (*Edit, error) {
	if old == "" {
		return nil, ErrEmptyOld
	}
	defer lockPath(path)()
	data, info, changed, err := editable(path, opts)
	if err != nil {
		return nil, err
	}
	m := locate(data, []byte(old), []byte(new))
	if changed && len(m.at) != 1 {
		return nil, staleError(path, &StaleError{Count: len(m.at), Lines: lines(asLF(data), m.at, 0)}, opts.Previous, data, info)
	}
	e, err := m.apply(ctx, path, data, old, new, all, opts.MaxFileSize)
	if err != nil {
		return nil, err
	}
	e.Changed = changed
	if e.NoOp {
		return e, nil
	}
	if err := writable(path, info); err != nil {
		return nil, err
	}
	if e.ModeLost, err = writeAtomic(opts.Open, path, e.New, info, writeAll); err != nil {
		return nil, err
	}
	e.Held = heldForWriting(path, info)
	return e, nil
}

// ReplaceIn is [Replace] on content in memory, data, with nothing read or written: Edit.New
// is what data becomes. It serves edits made one after another, of which none is written
// unless all apply. path names the file in errors; limit bounds the result's size.
func ReplaceIn(ctx context.Context, path string, data []byte, old, new string, all bool, limit int64) (*Edit, error) {
	if old == "" {
		return nil, ErrEmptyOld
	}
	if typ, ok := binaryType(data); ok {
		return nil, binaryError(path, int64(len(data)), typ)
	}
	return locate(data, []byte(old), []byte(new)).apply(ctx, path, data, old, new, all, limit)
}

// match is where old text occurs in a file's content, as [locate] found it.
type match struct {
	o, n []byte // the bytes that matched, and the bytes to put in their place
	at   []int  // the offsets of the occurrences
}

// apply makes the replacement of old with new that m found in data, in memory: it refuses
// text that is missing, ambiguous (unless all), would change the file's encoding, or would
// make it over limit bytes.
func (m match) apply(ctx context.Context, path string, data []byte, old, new string, all bool, limit int64) (*Edit, error) {
	ld := asLF(data) // for line numbers
	switch {
	case len(m.at) == 0:
		return nil, miss(ctx, path, data, old)
	case len(m.at) > 1 && !all:
		return nil, &AmbiguousError{Path: path, Count: len(m.at), Lines: lines(ld, m.at, 0)}
	}
	if err := lossless(path, data, m.n, false); err != nil {
		return nil, err
	}
	converted := !bytes.Equal(m.n, []byte(new))
	e := &Edit{Count: len(m.at), Old: data,
		CRLF: converted && bytes.Contains(m.n, []byte("\r\n")), CR: converted && crStyle(data)}
	if old == new || bytes.Equal(m.o, m.n) {
		return e.noOp(data, ld, m.at, len(m.o)), nil
	}
	out, err := replaced(path, data, m.o, m.n, m.at, limit)
	if err != nil {
		return nil, err
	}
	e.done(out, m.at, len(m.n), len(m.o))
	return e, nil
}

// noOp fills e for a replacement of the olen bytes at each of at by the same bytes: data
// stays as it is, and the snippet shows the first match.
func (e *Edit) noOp(data, ld []byte, at []int, olen int) *Edit {
	e.NoOp, e.New, e.Digest = true, data, ContentDigest(data)
	e.Lines = lines(ld, at, 0)
	e.First, e.Last = e.Lines[0], lineAt(ld, at[0]+max(olen-1, 0))
	e.Snippet = snippet(data, e.First, e.Last, at[0])
	return e
}

// replaced returns data with o at each offset of at replaced by n, refusing a result over
// limit bytes. The size is known before anything is built: many matches of a short old
// text, each replaced by a long new one, would otherwise take gigabytes before being
// refused.
func replaced(path string, data, o, n []byte, at []int, limit int64) ([]byte, error) {
	if size := int64(len(data)) + int64(len(at))*(int64(len(n))-int64(len(o))); size > limit {
		return nil, &GrowthError{Path: path, Size: size, Limit: limit, Count: len(at), Old: int64(len(o)), New: int64(len(n))}
	}
	out := make([]byte, 0, len(data)+len(at)*(len(n)-len(o)))
	prev := 0
	for _, i := range at {
		out = append(append(out, data[prev:i]...), n...)
		prev = i + len(o)
	}
	return append(out, data[prev:]...), nil
}

// done fills e for the content out, made by replacing olen bytes with nlen bytes at each
// offset of at: the lines of the replacements and a snippet of the first.
func (e *Edit) done(out []byte, at []int, nlen, olen int) {
	e.New, e.Digest = out, ContentDigest(out)
	lo := asLF(out)
	e.Lines = lines(lo, at, nlen-olen)
	e.First = lineAt(lo, at[0])
	e.Last = e.First - 1
	if nlen > 0 {
		e.Last = lineAt(lo, at[0]+nlen-1)
	}
	e.Snippet = snippet(out, e.First, e.Last, at[0])
}

// locate finds the non-overlapping occurrences of old in data and returns the bytes that
// matched and the bytes to put in their place. When old's LF endings match only as CRLF
// (or its CRLF endings only as LF), new is converted the same way; in a CRLF file, bare LFs
// in new become CRLF. In a file whose line endings are lone CRs, old's and new's become CR.
func locate(data, old, new []byte) match {
	cr := crStyle(data)
	if at := indexAll(data, old); len(at) > 0 {
		switch {
		case cr && bytes.Contains(new, newline):
			new = toCR(new)
		case hasBareLF(new) && crlfStyle(data):
			new = toCRLF(new)
		}
		return match{old, new, at}
	}
	if cr && bytes.Contains(old, newline) {
		if at := indexAll(data, toCR(old)); len(at) > 0 {
			return match{toCR(old), toCR(new), at}
		}
	}
	if hasBareLF(old) {
		if o := toCRLF(old); !bytes.Equal(o, old) {
			if at := indexAll(data, o); len(at) > 0 {
				return match{o, toCRLF(new), at}
			}
		}
	}
	if bytes.Contains(old, []byte("\r\n")) {
		o := bytes.ReplaceAll(old, []byte("\r\n"), newline)
		if at := indexAll(data, o); len(at) > 0 {
			return match{o, bytes.ReplaceAll(new, []byte("\r\n"), newline), at}
		}
	}
	return match{old, new, nil}
}

// indexAll returns the offsets of the non-overlapping occurrences of sub in data. A match
// that would split a CRLF pair (sub starts with its LF or ends with its CR) does not count:
// replacing it would leave a bare CR or LF behind.
func indexAll(data, sub []byte) []int {
	var at []int
	for off := 0; ; {
		i := bytes.Index(data[off:], sub)
		if i < 0 {
			return at
		}
		i += off
		end := i + len(sub)
		if sub[0] == '\n' && i > 0 && data[i-1] == '\r' || sub[len(sub)-1] == '\r' && end < len(data) && data[end] == '\n' {
			off = i + 1
			continue
		}
		at = append(at, i)
		off = end
	}
}

// lines returns the 1-based lines of offsets at (ascending) in data, where each offset has
// moved by shift bytes per earlier occurrence (the size change of each replacement).
func lines(data []byte, at []int, shift int) []int {
	out := make([]int, len(at))
	line, prev := 1, 0
	for k, i := range at {
		i += k * shift
		line += bytes.Count(data[prev:i], newline)
		out[k], prev = line, i
	}
	return out
}

// JoinLines lists ascending line numbers, each once, at most 20 of them.
func JoinLines(ns []int) string {
	ns = slices.Compact(slices.Clone(ns))
	var parts []string
	for _, n := range ns[:min(len(ns), 20)] {
		parts = append(parts, strconv.Itoa(n))
	}
	s := strings.Join(parts, ", ")
	if len(ns) > 20 {
		s += fmt.Sprintf(" and %d more", len(ns)-20)
	}
	return s
}

// numberedPrefix returns the length of the line number l starts with as view shows it:
// spaces, digits and a tab. It is 0 when l starts with none.
func numberedPrefix(l string) int {
	i := len(l) - len(strings.TrimLeft(l, " "))
	j := i
	for j < len(l) && '0' <= l[j] && l[j] <= '9' {
		j++
	}
	if j == i || j == len(l) || l[j] != '\t' {
		return 0
	}
	return j + 1
}

// Bounds on the closest-match diagnosis of an old_str that was not found, so that a large
// one cannot hold a request for long: how many votes closest may count, and how many lines
// of the closest region and of the differing lines the message shows.
const (
	closestSteps = 2_000_000
	closestShow  = 30
	diffsShow    = 6
)

// miss returns the [*MissError] of old, which is not in data: whether old looks copied
// with line numbers or holds U+FFFD the file cannot match, and the closest region, with
// the lines that differ quoted so that whitespace shows. It stops looking when ctx ends
// or its work budget is spent, and then says so.
func miss(ctx context.Context, path string, data []byte, old string) *MissError {
	oldLines := splitLines([]byte(old))
	e := &MissError{
		Path:     path,
		FFFD:     !utf8.Valid(data) && strings.ContainsRune(old, utf8.RuneError),
		Numbered: looksNumbered(oldLines),
	}
	if e.Numbered {
		oldLines = unnumbered(oldLines)
	}
	fileLines := splitLines(data)
	start, score, cut := closest(ctx, fileLines, oldLines, closestSteps)
	e.Cut = cut
	if score == 0 {
		if !strings.ContainsAny(old, "\r\n") {
			e.Start = partialMatch(data, old)
		}
		return e
	}
	end := min(start+len(oldLines), len(fileLines))
	shown := min(end, start+closestShow)
	e.Closest = &Closest{First: start + 1, Last: end, Text: numbered(data, start+1, shown, focus{}), Hidden: end - shown}
	e.Closest.Diffs, e.Closest.MoreDiffs = lineDiffs(fileLines, oldLines, start)
	return e
}

// looksNumbered reports whether most lines start as numbered lines do: spaces, a number, a
// tab.
func looksNumbered(lines []string) bool {
	n := 0
	for _, l := range lines {
		if numberedPrefix(l) > 0 {
			n++
		}
	}
	return n > 0 && 2*n >= len(lines)
}

// partialMatch finds the longest start of old, one line, that data holds, when it is worth
// showing (a third of old, and at least 4 characters): where it is and how data goes on
// from there. A fragment of a line matches no whole line, so closest finds nothing for it.
func partialMatch(data []byte, old string) *PartialMatch {
	lo, hi := 0, len(old)-1 // old[:lo] is in data; old itself is not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if bytes.Contains(data, []byte(old[:mid])) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && !utf8.RuneStart(old[lo]) {
		lo--
	}
	found := utf8.RuneCountInString(old[:lo])
	if found < 4 || 3*lo < len(old) {
		return nil
	}
	at := bytes.Index(data, []byte(old[:lo]))
	end := min(len(data), at+len(old)+20)
	if i := bytes.IndexAny(data[at+lo:end], "\r\n"); i >= 0 {
		end = at + lo + i
	}
	for end > at+lo && end < len(data) && !utf8.RuneStart(data[end]) {
		end--
	}
	return &PartialMatch{Found: found, Of: utf8.RuneCountInString(old), Line: lineAt(asLF(data), at),
		File: quote(string(data[at:end])), Old: quote(old)}
}

// unnumbered returns lines without the line numbers they start with, if any.
func unnumbered(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[numberedPrefix(l):]
	}
	return out
}

// lineDiffs compares oldLines with fileLines from start on and returns the first
// diffsShow lines that differ, quoted, and how many more do.
func lineDiffs(fileLines, oldLines []string, start int) (diffs []LineDiff, more int) {
	for j, ol := range oldLines {
		i := start + j
		fl := ""
		if i < len(fileLines) {
			fl = fileLines[i]
		}
		switch {
		case fl == ol:
		case len(diffs) < diffsShow:
			diffs = append(diffs, LineDiff{Line: i + 1, File: quote(fl), Old: quote(ol)})
		default:
			more++
		}
	}
	return diffs, more
}

// quote shows s with tabs, trailing spaces and other invisible characters escaped, cut to
// a readable length.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 200 {
		r := []rune(s)
		return strconv.Quote(string(r[:200])) + "…"
	}
	return strconv.Quote(s)
}

// closest returns where in fileLines the block oldLines fits best: each line of old that
// appears in the file (compared with whitespace collapsed) votes for the block starting at
// the matching offset, weighted by its length. score is 0 when no line matches.
//
// It counts at most steps votes and stops when ctx ends; cut reports that it stopped early,
// with the best block found so far. The rarest lines vote first, so that when old_str is so
// large that the budget runs out, the distinctive lines have been counted and what was left
// out are the lines repeated so often (braces, "return nil") that they say little.
func closest(ctx context.Context, fileLines, oldLines []string, steps int) (start, score int, cut bool) {
	want := map[string][]int{}
	for j, l := range oldLines {
		if k := squash(l); k != "" {
			want[k] = append(want[k], j)
		}
	}
	// Where each wanted line is in the file: at most 1000 places each.
	found := map[string][]int{}
	for i, l := range fileLines {
		if i%4096 == 0 && ctx.Err() != nil {
			return 0, 0, true
		}
		k := squash(l)
		if _, ok := want[k]; ok && len(found[k]) < 1000 {
			found[k] = append(found[k], i)
		}
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	cost := func(k string) int { return len(found[k]) * len(want[k]) }
	slices.SortFunc(keys, func(a, b string) int {
		if c := cost(a) - cost(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	votes := map[int]int{}
	for n, k := range keys {
		if steps -= cost(k); steps < 0 || n%256 == 0 && ctx.Err() != nil {
			cut = true
			break
		}
		js := want[k]
		for _, i := range found[k] {
			for _, j := range js {
				votes[i-j] += len(k) + 1
			}
		}
	}
	starts := make([]int, 0, len(votes))
	for s := range votes {
		starts = append(starts, s)
	}
	slices.Sort(starts)
	for _, s := range starts {
		if votes[s] > score {
			start, score = s, votes[s]
		}
	}
	return max(start, 0), score, cut
}

// squash collapses runs of whitespace to one space and trims the ends.
func squash(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
