package files

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
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
// matches exactly once, and Edit.Changed says so; otherwise it is refused with what changed.
// When old is not found, the error shows the closest text; the search for it stops when ctx
// ends.
//
// It is longer than most functions: the steps of an edit (read under the lock, check the
// view, match, check the encoding and size, write, report) read best in order.
func Replace(ctx context.Context, path, old, new string, all bool, opts EditOptions) (*Edit, error) {
	if old == "" {
		return nil, errorf(ErrInvalid, "old_str is empty: give the exact text to replace, copied from the file (to add lines without replacing any, insert them; to write a whole file, create it)")
	}
	defer lockPath(path)()
	data, info, changed, err := editable(path, opts)
	if err != nil {
		return nil, err
	}
	o, n, at := locate(data, []byte(old), []byte(new))
	ld := asLF(data) // for line numbers
	switch {
	case changed && len(at) != 1:
		why := "old_str now matches nowhere in it"
		if len(at) > 1 {
			why = fmt.Sprintf("old_str now matches %d places in it, on lines %s", len(at), lineList(ld, at))
		}
		return nil, staleError(path, why, opts.Previous, data, info)
	case len(at) == 0:
		return nil, errorf(ErrNoMatch, "%s", missMessage(ctx, path, data, old))
	case len(at) > 1 && !all:
		return nil, errorf(ErrAmbiguous, "old_str matches %d places in %s, on lines %s; include more surrounding lines in old_str to pick one, or set replace_all to change every one",
			len(at), path, lineList(ld, at))
	}
	if err := lossless(path, data, n, "new_str"); err != nil {
		return nil, err
	}

	converted := !bytes.Equal(n, []byte(new))
	e := &Edit{Count: len(at), Changed: changed, Old: data,
		CRLF: converted && bytes.Contains(n, []byte("\r\n")), CR: converted && crStyle(data)}
	if old == new || bytes.Equal(o, n) {
		e.NoOp, e.New, e.Digest = true, data, ContentDigest(data)
		e.Lines = lines(ld, at, 0)
		e.First, e.Last = e.Lines[0], lineAt(ld, at[0]+max(len(o)-1, 0))
		e.Snippet = snippet(data, e.First, e.Last)
		return e, nil
	}
	// The size is known before anything is built: many matches of a short old_str, each
	// replaced by a long new_str, would otherwise take gigabytes before being refused.
	if size := int64(len(data)) + int64(len(at))*(int64(len(n))-int64(len(o))); size > opts.MaxFileSize {
		matches := "matches"
		if len(at) == 1 {
			matches = "match"
		}
		return nil, errorf(ErrTooLarge, "the edit would make %s %s bytes (%d %s; old_str %s bytes, new_str %s bytes), over the %s-byte limit (--max-file-size); nothing was written",
			path, thousands(size), len(at), matches, thousands(int64(len(o))), thousands(int64(len(n))), thousands(opts.MaxFileSize))
	}
	out := make([]byte, 0, len(data)+len(at)*(len(n)-len(o)))
	prev := 0
	for _, i := range at {
		out = append(append(out, data[prev:i]...), n...)
		prev = i + len(o)
	}
	out = append(out, data[prev:]...)
	if err := writable(path, info); err != nil {
		return nil, err
	}
	lost, err := writeAtomic(opts.Open, path, out, info, writeAll)
	if err != nil {
		return nil, err
	}
	e.New, e.Digest, e.ModeLost = out, ContentDigest(out), lost
	lo := asLF(out)
	e.Lines = lines(lo, at, len(n)-len(o))
	start := at[0]
	e.First = lineAt(lo, start)
	e.Last = e.First - 1
	if len(n) > 0 {
		e.Last = lineAt(lo, start+len(n)-1)
	}
	e.Snippet = snippet(out, e.First, e.Last)
	return e, nil
}

// locate finds the non-overlapping occurrences of old in data and returns the bytes that
// matched and the bytes to put in their place. When old's LF endings match only as CRLF
// (or its CRLF endings only as LF), new is converted the same way; in a CRLF file, bare LFs
// in new become CRLF. In a file whose line endings are lone CRs, old's and new's become CR.
func locate(data, old, new []byte) (o, n []byte, at []int) {
	cr := crStyle(data)
	if at = indexAll(data, old); len(at) > 0 {
		switch {
		case cr && bytes.Contains(new, newline):
			new = toCR(new)
		case hasBareLF(new) && crlfStyle(data):
			new = toCRLF(new)
		}
		return old, new, at
	}
	if cr && bytes.Contains(old, newline) {
		if at = indexAll(data, toCR(old)); len(at) > 0 {
			return toCR(old), toCR(new), at
		}
	}
	if hasBareLF(old) {
		if o := toCRLF(old); !bytes.Equal(o, old) {
			if at = indexAll(data, o); len(at) > 0 {
				return o, toCRLF(new), at
			}
		}
	}
	if bytes.Contains(old, []byte("\r\n")) {
		o := bytes.ReplaceAll(old, []byte("\r\n"), newline)
		if at = indexAll(data, o); len(at) > 0 {
			return o, bytes.ReplaceAll(new, []byte("\r\n"), newline), at
		}
	}
	return old, new, nil
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

// lineList formats the lines of offsets at, each once (several matches can share a line),
// at most 20 of them.
func lineList(data []byte, at []int) string {
	return JoinLines(lines(data, at, 0))
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

var numberedPrefix = regexp.MustCompile(`^ *\d+\t`)

// Bounds on the closest-match diagnosis of an old_str that was not found, so that a large
// one cannot hold a request for long: how many votes closest may count, and how many lines
// of the closest region and of the differing lines the message shows.
const (
	closestSteps = 2_000_000
	closestShow  = 30
	diffsShow    = 6
)

// missMessage explains that old is not in data and shows the closest region, with the lines
// that differ quoted so that whitespace shows. It stops looking when ctx ends or its work
// budget is spent, and then says so.
//
// The message is built in the order the model reads it, which makes this longer than most
// functions.
func missMessage(ctx context.Context, path string, data []byte, old string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "old_str was not found in %s.", path)
	if !utf8.Valid(data) && strings.ContainsRune(old, utf8.RuneError) {
		b.WriteString(" The file is not valid UTF-8: view shows the bytes it cannot decode as �, and old_str cannot match them; choose old_str from the text around them.")
	}
	oldLines := splitLines([]byte(old))
	numberedCount := 0
	for _, l := range oldLines {
		if numberedPrefix.MatchString(l) {
			numberedCount++
		}
	}
	if numberedCount > 0 && 2*numberedCount >= len(oldLines) {
		b.WriteString(" old_str seems to include the line numbers view puts before each line (spaces, number, tab); leave them out.")
	}
	fileLines := splitLines(data)
	start, score, cut := closest(ctx, fileLines, oldLines, closestSteps)
	if score == 0 {
		if cut {
			b.WriteString(" The search for the closest text was cut short (old_str is large); view the file to see its current text, and use a shorter old_str.")
			return b.String()
		}
		b.WriteString(" No line of old_str appears in the file, even ignoring whitespace; view the file to see its current text.")
		return b.String()
	}
	end := min(start+len(oldLines), len(fileLines))
	fmt.Fprintf(&b, "\nThe closest text is at lines %d-%d", start+1, end)
	if cut {
		b.WriteString(" (the search for it was cut short because old_str is large, so closer text may exist; a shorter old_str is easier to match)")
	}
	shown := min(end, start+closestShow)
	fmt.Fprintf(&b, ":\n%s", numbered(data, start+1, shown))
	if shown < end {
		fmt.Fprintf(&b, "… (%d more lines not shown)\n", end-shown)
	}
	var diffs []string
	more := 0
	for j, ol := range oldLines {
		i := start + j
		fl := ""
		if i < len(fileLines) {
			fl = fileLines[i]
		}
		switch {
		case fl == ol:
		case len(diffs) < diffsShow:
			diffs = append(diffs, fmt.Sprintf("  line %d: file has %s\n           old_str has %s", i+1, quote(fl), quote(ol)))
		default:
			more++
		}
	}
	if len(diffs) > 0 {
		b.WriteString("Lines that differ (quoted, so whitespace shows):\n")
		for _, d := range diffs {
			b.WriteString(d + "\n")
		}
		if more > 0 {
			fmt.Fprintf(&b, "  … and %d more\n", more)
		}
	} else {
		b.WriteString("Its lines match old_str except for line endings or the end of the file; check whether old_str ends with a newline the file lacks.\n")
	}
	b.WriteString("Copy old_str exactly from the file, whitespace included, then retry.")
	return b.String()
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
