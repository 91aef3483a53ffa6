package files

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"
)

// EditOptions are the limits and the view-tracking state an edit is checked against.
type EditOptions struct {
	MaxFileSize int64
	// Seen is the digest recorded when the model last viewed or wrote the file in this
	// session (a content or stat digest); nil when it never did.
	Seen *Digest
	// RequireSeen refuses to edit a file the model has not seen.
	RequireSeen bool
	// Previous is the file's content when it was last seen, if it was kept; with it a
	// refusal can say what changed.
	Previous []byte
	// Open opens the file and its directory (see [Opener]).
	Open Opener
}

// Edit is what [Replace] or [Insert] did.
type Edit struct {
	Count       int   // replacements or insertions made
	Lines       []int // the first line of each, in the new content
	First, Last int   // the edited region in the new content; Last < First when text was only removed
	Snippet     string
	NoOp        bool   // nothing changed and the file was not rewritten
	Changed     bool   // the file had changed since it was seen; the edit still applied
	CRLF        bool   // the new text was written with CRLF line endings, as the file has
	CR          bool   // the new text was written with lone CR line endings, as the file has
	ModeLost    string // how the file's mode could not be kept, when it could not
	// Held names processes started by Boris's commands that had the file open for writing:
	// they write on to the replaced file, and what they write is lost. "" when none.
	Held     string
	Old, New []byte
	Digest   Digest // of New
}

// snippetContext is how many lines around an edited region its snippet shows, and
// snippetEnds how many lines of each end of a long region.
const (
	snippetContext = 4
	snippetEnds    = 25
)

// snippet shows the edited lines first..last of data with a few lines around them; of a
// long region only both ends. last < first means lines were only removed before first.
// The edit begins at byte offset at of data: line first, when too long to show whole,
// shows the part around it.
func snippet(data []byte, first, last, at int) string {
	last = max(last, first-1)
	f := focus{line: first, col: at - (bytes.LastIndexByte(data[:at], '\n') + 1)}
	if crStyle(data) {
		f.col = at - (bytes.LastIndexAny(data[:at], "\r\n") + 1)
	}
	if last-first+1 <= 2*snippetEnds+10 {
		return numbered(data, first-snippetContext, last+snippetContext, f)
	}
	return numbered(data, first-snippetContext, first+snippetEnds-1, f) +
		fmt.Sprintf("… (%d edited lines not shown)\n", last-first+1-2*snippetEnds) +
		numbered(data, last-snippetEnds+1, last+snippetContext, focus{})
}

// focus is the byte column col of line where an edit begins: a line too long to show
// whole shows the part around it rather than its start.
type focus struct{ line, col int }

// editable reads the file at path for an edit and checks it against opts: a regular text
// file within the size limit, seen in this session if that is required. changed reports
// that it differs from what was seen.
func editable(path string, opts EditOptions) (data []byte, info fs.FileInfo, changed bool, err error) {
	data, info, err = readRegular(opts.Open, path, opts.MaxFileSize)
	if err != nil {
		return nil, nil, false, err
	}
	if typ, ok := binaryType(data); ok {
		return nil, nil, false, binaryError(path, info.Size(), typ)
	}
	if opts.Seen == nil {
		if opts.RequireSeen {
			return nil, nil, false, &NotViewedError{Path: path}
		}
		return data, info, false, nil
	}
	changed = *opts.Seen != ContentDigest(data) && *opts.Seen != StatDigest(info)
	return data, info, changed, nil
}

// staleError fills e, which says what the edit found, to refuse an edit to a file that
// changed since it was seen.
func staleError(path string, e *StaleError, prev, cur []byte, info fs.FileInfo) error {
	e.Path, e.Change = path, describeChange(prev, cur, info)
	return e
}

// describeChange says briefly how cur differs from prev, or when prev was not kept, what cur
// is now.
func describeChange(prev, cur []byte, info fs.FileInfo) string {
	if prev == nil {
		return fmt.Sprintf("it now has %s (%s bytes), modified %s", nLines(countLines(asLF(cur))), thousands(int64(len(cur))), info.ModTime().Format(time.RFC3339))
	}
	pl, cl := splitLines(prev), splitLines(cur)
	a := 0
	for a < len(pl) && a < len(cl) && pl[a] == cl[a] {
		a++
	}
	b := 0
	for b < len(pl)-a && b < len(cl)-a && pl[len(pl)-1-b] == cl[len(cl)-1-b] {
		b++
	}
	removed, added := len(pl)-a-b, len(cl)-a-b
	switch {
	case removed == 0 && added == 0:
		return "only line endings or the final newline differ"
	case added == 0:
		verb := "were"
		if removed == 1 {
			verb = "was"
		}
		return fmt.Sprintf("%s %s removed after line %d", nLines(removed), verb, a)
	}
	var out []byte
	const show = 8
	for i := a; i < a+min(added, show); i++ {
		out, _ = appendNumbered(out, i+1, []byte(cl[i]), utf8.RuneCountInString(cl[i]))
	}
	more := ""
	if added > show {
		more = fmt.Sprintf("… (%d more)\n", added-show)
	}
	verb := "now read"
	if added == 1 {
		verb = "now reads"
	}
	return fmt.Sprintf("%s %s (in place of %s):\n%s%s", LineSpan(a+1, a+added), verb, nLines(removed), out, more)
}

// splitLines splits data into lines without their endings.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(asLF(data)), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// countLines counts lines; a last line without a newline counts.
func countLines(data []byte) int {
	n := bytes.Count(data, newline)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// lineAt returns the 1-based line holding byte offset off.
func lineAt(data []byte, off int) int {
	return bytes.Count(data[:off], newline) + 1
}

// numbered returns lines from..to of data (1-based, clamped) in the view format, the
// line at f from a little before its column when it is too long to show whole.
func numbered(data []byte, from, to int, f focus) string {
	from = max(from, 1)
	lf := asLF(data)
	lr := lineReader{data: lf, eof: true}
	line := lr.skip(from - 1)
	var out []byte
	for line < to {
		n, ok := lr.next(4*MaxLineChars + 4)
		if !ok {
			break
		}
		line++
		text := lr.line
		if line == 1 {
			text = bytes.TrimPrefix(text, utf8BOM)
		}
		if lr.ended && n == len(lr.line) {
			text = bytes.TrimSuffix(text, []byte("\r"))
		}
		total := chars(text) + lr.dropped
		if line == f.line && total > MaxLineChars {
			if whole := lineOf(lf, line); utf8.RuneCount(whole[:min(f.col, len(whole))]) > MaxLineChars*3/4 {
				out = appendAround(out, line, whole, f.col)
				continue
			}
		}
		out, _ = appendNumbered(out, line, text, total)
	}
	return string(out)
}

// lineOf returns line n (1-based) of the LF-ended data, without its ending.
func lineOf(data []byte, n int) []byte {
	start := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return nil
		}
		start += i + 1
	}
	end := bytes.IndexByte(data[start:], '\n')
	if end < 0 {
		end = len(data) - start
	}
	return bytes.TrimSuffix(data[start:start+end], []byte("\r"))
}

// appendAround appends line number n and MaxLineChars characters of the long line text
// from a little before byte column col, marking what is cut before and after.
func appendAround(out []byte, n int, text []byte, col int) []byte {
	col = min(col, len(text))
	from := runeStart(text, col)
	for back := 0; from > 0 && back < MaxLineChars/4; back++ {
		_, size := utf8.DecodeLastRune(text[:from])
		from -= size
	}
	to, shown := from, 0
	for to < len(text) && shown < MaxLineChars {
		_, size := utf8.DecodeRune(text[to:])
		to += size
		shown++
	}
	out, _ = appendNumbered(out, n, nil, 0)
	out = out[:len(out)-1] // the number and tab, without the newline
	out = fmt.Appendf(out, "[line cut: %s characters before] … ", thousands(int64(utf8.RuneCount(text[:from]))))
	out = append(out, text[from:to]...)
	if to < len(text) {
		out = fmt.Appendf(out, " … [line cut: %s characters after]", thousands(int64(utf8.RuneCount(text[to:]))))
	}
	return append(out, '\n')
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(b []byte, i int) int {
	for i > 0 && i < len(b) && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// crlfStyle reports whether most of data's line endings are CRLF.
func crlfStyle(data []byte) bool {
	crlf := bytes.Count(data, []byte("\r\n"))
	return crlf > 0 && 2*crlf > bytes.Count(data, newline)
}

// crStyle reports whether data's line endings are lone CRs (classic Mac OS): it has more CRs
// not followed by LF than LFs.
func crStyle(data []byte) bool {
	lone := bytes.Count(data, []byte("\r")) - bytes.Count(data, []byte("\r\n"))
	return lone > 0 && lone > bytes.Count(data, newline)
}

// asLF returns data with its lone CRs as LFs when they are its line endings (see crStyle),
// else data itself. The length does not change, so offsets into either agree: line numbers
// are counted on the result, while the file's bytes stay as they are.
func asLF(data []byte) []byte {
	if !crStyle(data) {
		return data
	}
	out := bytes.Clone(data)
	for i, c := range out {
		if c == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

// toCR turns every line ending in b (LF or CRLF) into a lone CR.
func toCR(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), newline), newline, []byte("\r"))
}

// toCRLF turns every bare LF in b into CRLF.
func toCRLF(b []byte) []byte {
	var out []byte
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

// hasBareLF reports whether b has an LF not preceded by CR.
func hasBareLF(b []byte) bool {
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			return true
		}
	}
	return false
}

// lossless refuses new text that could not be written into data without changing its
// encoding: data that is not UTF-8 gets neither U+FFFD (which stands for bytes a view could
// not decode) nor, when data has no UTF-8 at all, any non-ASCII character. inserted says
// the text is to be inserted rather than replace other text.
func lossless(path string, data, text []byte, inserted bool) error {
	if utf8.Valid(data) {
		return nil
	}
	if bytes.ContainsRune(text, utf8.RuneError) {
		return &LossyError{Path: path, Inserted: inserted, FFFD: true}
	}
	if !isASCII(text) && !hasMultibyteUTF8(data) {
		return &LossyError{Path: path, Inserted: inserted}
	}
	return nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasMultibyteUTF8 reports whether data holds at least one valid multi-byte UTF-8 sequence.
func hasMultibyteUTF8(data []byte) bool {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r != utf8.RuneError || n > 1 {
			return true
		}
		i += n
	}
	return false
}
