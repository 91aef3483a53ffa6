package shell

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultBudget is how many characters of a command's output a result shows when not told
// otherwise; the result's two streams share it (see [Split]).
const DefaultBudget = 30_000

// keepBytes is how much of a stream's start and end an [Output] holds in memory. It must be
// at least 4 bytes per budgeted character, so that whatever is shown can come from memory.
const keepBytes = 128 << 10

// Output captures one stream of a command. It keeps the first and the last keepBytes in
// memory and, once the stream outgrows that, writes everything to a spill file, so memory
// stays bounded whatever the command prints and the full text stays readable.
type Output struct {
	spillPath string       // where the full stream goes once it outgrows memory
	onWrite   func([]byte) // sees every chunk, for progress; may be nil
	// text, for a terminal's output, keeps what is shown of each chunk: escape sequences
	// are removed from what is kept and spilled, and onWrite still sees them.
	text *escapeStripper

	mu       sync.Mutex
	head     []byte // the first keepBytes (all of it while total <= keepBytes)
	tail     ring   // the last keepBytes, once total > keepBytes
	total    int64  // bytes written
	chars    int64  // characters in total bytes, carry excluded
	lines    int64  // newlines written
	carry    []byte // an incomplete UTF-8 sequence at the end, not yet counted
	file     *os.File
	spilled  bool  // file holds bytes [0, total)
	spillErr error // why the stream could not be saved in full
	closed   bool
	// The spill file holds at most maxFile bytes of the stream (0: no limit). Past it,
	// writing to the file stops (capped), and when the stream ends the file gets a line
	// saying what was dropped and the stream's last bytes, from memory.
	maxFile int64
	capped  bool
	// lineCap, when positive, is the most lines an excerpt shows, for a client that keeps
	// only so many lines of a result; maxLines is this stream's share of it for the next
	// excerpt, when it shares the cap with another stream ([ShareLines]).
	lineCap, maxLines int
}

// SetMaxLines makes excerpts of the stream show at most about n lines (0: any number).
func (o *Output) SetMaxLines(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lineCap, o.maxLines = n, n
}

// ShareLines divides the line cap of two streams between their next excerpts, as [Split]
// divides characters: a and b are the lines each has to show. Both must have the same cap.
func ShareLines(x, y *Output, a, b int64) {
	x.mu.Lock()
	n := x.lineCap
	x.mu.Unlock()
	if n <= 0 {
		return
	}
	sx, sy := Split(n, a, b)
	for _, s := range []struct {
		o *Output
		n int
	}{{x, sx}, {y, sy}} {
		s.o.mu.Lock()
		s.o.maxLines = max(s.n, 1)
		s.o.mu.Unlock()
	}
}

// DefaultMaxSpillFile bounds one stream's spill file by default.
const DefaultMaxSpillFile = 64 << 20

// Path returns where the full stream is saved once it outgrows memory.
func (o *Output) Path() string { return o.spillPath }

// SetMaxFile bounds the stream's spill file to about n bytes (0: no limit). Call it before
// the first Write.
func (o *Output) SetMaxFile(n int64) {
	o.mu.Lock()
	o.maxFile = n
	o.mu.Unlock()
}

// fileLimit returns how many bytes of the stream the spill file holds at most, leaving
// room for the tail added when the stream ends.
func (o *Output) fileLimit() int64 {
	if o.maxFile <= 0 {
		return 1 << 62
	}
	return max(o.maxFile-keepBytes-512, keepBytes)
}

// NewOutput returns an Output that saves the full stream at spillPath if it outgrows
// memory, and passes each chunk to onWrite (which may be nil).
func NewOutput(spillPath string, onWrite func([]byte)) *Output {
	return &Output{spillPath: spillPath, onWrite: onWrite}
}

// Write records p. It never fails: a spill file that cannot be written only costs the
// ability to read the middle of the stream later.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return len(p), nil
	}
	raw := p
	if o.text != nil {
		p = o.text.strip(p)
	}
	o.count(p)
	if n := keepBytes - len(o.head); n > 0 {
		o.head = append(o.head, p[:min(n, len(p))]...)
	}
	if o.total+int64(len(p)) > keepBytes {
		if o.tail.buf == nil {
			o.tail.buf = make([]byte, keepBytes)
			o.tail.write(o.head[:o.total])
		}
		o.tail.write(p)
		if !o.spilled && o.spillErr == nil {
			o.spill(o.head[:o.total])
		}
	}
	if o.spilled && !o.capped {
		q := p
		if room := o.fileLimit() - o.total; int64(len(q)) >= room {
			q, o.capped = q[:max(room, 0)], true
		}
		if _, err := o.file.Write(q); err != nil {
			o.spillFailed(err)
		}
	}
	o.total += int64(len(p))
	o.mu.Unlock()
	if o.onWrite != nil {
		o.onWrite(raw)
	}
	return len(raw), nil
}

// keepText has the Output keep a terminal's output as text, without its escape
// sequences. Call it before the first Write.
func (o *Output) keepText() {
	o.mu.Lock()
	o.text = &escapeStripper{}
	o.mu.Unlock()
}

// count adds p to the character and line counts, holding back an incomplete UTF-8
// sequence at its end. Invalid bytes count as one character each, as [utf8.RuneCount] does.
func (o *Output) count(p []byte) {
	o.lines += int64(bytes.Count(p, []byte{'\n'}))
	if len(o.carry) > 0 {
		// Complete the held-back sequence with as few bytes of p as it needs.
		for len(p) > 0 && !utf8.FullRune(o.carry) {
			o.carry = append(o.carry, p[0])
			p = p[1:]
		}
		if !utf8.FullRune(o.carry) {
			return
		}
		_, size := utf8.DecodeRune(o.carry)
		o.chars++
		rest := o.carry[size:]
		o.carry = nil
		if len(rest) > 0 {
			// The sequence was invalid: its other bytes start afresh.
			o.count(append(append([]byte(nil), rest...), p...))
			o.lines -= int64(bytes.Count(rest, []byte{'\n'})) + int64(bytes.Count(p, []byte{'\n'}))
			return
		}
	}
	cut := incompleteTail(p)
	o.chars += int64(utf8.RuneCount(p[:cut]))
	if cut < len(p) {
		o.carry = append(o.carry[:0], p[cut:]...)
	}
}

// incompleteTail returns where a trailing, possibly valid but incomplete UTF-8 sequence
// starts in p, or len(p) if p ends on a character boundary.
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			return len(p)
		}
	}
	return len(p)
}

// spill starts the spill file with the bytes written so far; later writes follow them.
func (o *Output) spill(sofar []byte) {
	if o.spillPath == "" {
		o.spillErr = errors.New("no spill directory")
		return
	}
	f, err := os.OpenFile(o.spillPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		o.spillErr = err
		return
	}
	o.file, o.spilled = f, true
	if _, err := f.Write(sofar); err != nil {
		o.spillFailed(err)
		return
	}
	if o.closed {
		_ = f.Close()
		o.file = nil
	}
}

func (o *Output) spillFailed(err error) {
	o.spillErr = err
	o.spilled = false
	if o.file != nil {
		_ = o.file.Close()
		o.file = nil
	}
	_ = os.Remove(o.spillPath)
}

// Close stops recording: later writes are discarded. The spill file stays for reading.
func (o *Output) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	if o.file != nil {
		if o.capped {
			o.finishCapped()
		}
		_ = o.file.Close()
		o.file = nil
	}
}

// finishCapped ends a capped spill file with a line saying what was dropped and the last
// bytes of the stream, from memory.
func (o *Output) finishCapped() {
	kept := o.fileLimit()
	tail := int64(o.tail.len())
	if o.total-kept < tail {
		tail = o.total - kept
	}
	dropped := o.total - kept - tail
	note := fmt.Sprintf("\n[... boris: %d bytes of this output were not saved (bytes %d-%d of %d): it went past the %d-byte limit on saved output; what follows is its last %d bytes ...]\n",
		dropped, kept+1, kept+dropped, o.total, o.maxFile, tail)
	_, _ = o.file.WriteString(note)
	_, _ = o.file.Write(o.tail.last(int(tail)))
}

// Mark is a position in a stream.
type Mark struct {
	Bytes int64
	Chars int64
	Lines int64 // newlines before Bytes
}

// End returns the position after the last complete character written so far.
func (o *Output) End() Mark {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.end(false)
}

func (o *Output) end(final bool) Mark {
	if final && len(o.carry) > 0 {
		return Mark{Bytes: o.total, Chars: o.chars + int64(len(o.carry)), Lines: o.lines}
	}
	return Mark{Bytes: o.total - int64(len(o.carry)), Chars: o.chars, Lines: o.lines}
}

// Excerpt is what a result shows of a stretch of a stream.
type Excerpt struct {
	Text      string // valid UTF-8, within the budget
	Truncated bool
	Omitted   int64  // characters left out of Text
	SpillPath string // the full stream, when Truncated and it could be saved
	From, To  Mark   // the stretch shown
	Replaced  bool   // invalid UTF-8 in the stretch was shown as U+FFFD (checked when not Truncated)
	// Note is what the marker in Text says, when Truncated: how much was left out, where
	// the full text is and how to read it ("N characters omitted (lines A-B of FILE).
	// Read them with ..."), for a result to repeat where a client's cut cannot reach it.
	Note string
}

// Split divides budget characters between two streams that hold a and b characters: each
// gets half, and a stream that needs less than its half leaves the rest to the other.
func Split(budget int, a, b int64) (int, int) {
	half := int64(budget / 2)
	switch {
	case a <= half:
		return int(a), budget - int(a)
	case b <= half:
		return budget - int(b), int(b)
	}
	return int(half), budget - int(half)
}

// Text returns the whole stream within budget characters: all of it if it fits, else its
// head and tail around a marker that says how much was left out and, in hint's words, how
// to read it.
func (o *Output) Text(budget int, hint Hint) Excerpt {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.excerpt(Mark{}, o.end(true), budget, hint)
}

// Since returns what was written after from, within budget characters, like [Output.Text].
// If final is false, an incomplete character at the end is left for the next read.
func (o *Output) Since(from Mark, budget int, final bool, hint Hint) Excerpt {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.excerpt(from, o.end(final), budget, hint)
}

func (o *Output) excerpt(from, to Mark, budget int, hint Hint) Excerpt {
	ex := Excerpt{From: from, To: to}
	n := to.Bytes - from.Bytes
	if n <= 0 {
		return ex
	}
	fitsLines := o.maxLines <= 0 || to.Lines-from.Lines <= int64(o.maxLines)
	if to.Chars-from.Chars <= int64(budget) && n <= keepBytes && fitsLines {
		if b, ok := o.readAt(from.Bytes, int(n)); ok {
			ex.Text = strings.ToValidUTF8(string(b), "\uFFFD")
			ex.Replaced = !utf8.Valid(b)
			return ex
		}
	}
	ex.Truncated = true
	if !o.spilled && o.spillErr == nil && o.total <= keepBytes {
		o.spill(o.head[:o.total]) // short in bytes but long in characters: save it too
	}
	if o.spilled {
		ex.SpillPath = o.spillPath
	}
	span := min(n, int64(utf8.UTFMax*budget))
	head, _ := o.readAt(from.Bytes, int(span))
	tail, _ := o.readAt(to.Bytes-span, int(span))
	var last string
	ex.Text, ex.Omitted = clip(head, tail, to.Chars-from.Chars, budget, o.maxLines, func(c cut) string {
		last = o.marker(from, to, c, ex.SpillPath, hint)
		return last
	})
	ex.Note = strings.TrimSuffix(strings.TrimPrefix(last, "\n[... "), " ...]\n")
	return ex
}

// readAt returns n bytes of the stream at off, from memory when they are there, else from
// the spill file.
func (o *Output) readAt(off int64, n int) ([]byte, bool) {
	if n <= 0 {
		return nil, true
	}
	end := off + int64(n)
	if end <= int64(len(o.head)) {
		return o.head[off:end], true
	}
	if o.tail.buf != nil && off >= o.total-int64(o.tail.len()) {
		return o.tail.last(int(o.total - off))[:n], true
	}
	if o.spilled && (!o.capped || end <= o.fileLimit()) {
		f := o.file
		if f == nil {
			var err error
			if f, err = os.Open(o.spillPath); err != nil {
				return nil, false
			}
			defer f.Close()
		}
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err == nil || err == io.EOF {
			return b, true
		}
	}
	// Not retrievable: show what memory has, the head side of it.
	if off < int64(len(o.head)) {
		return o.head[off:], false
	}
	return nil, false
}

// marker is the line between head and tail: how much was left out and how to read it.
func (o *Output) marker(from, to Mark, c cut, path string, hint Hint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[... %d characters omitted", c.omitted)
	switch {
	case path == "" && o.spillErr != nil:
		fmt.Fprintf(&b, "; the full output could not be saved: %v ...]\n", o.spillErr)
		return b.String()
	case path == "":
		b.WriteString(" ...]\n")
		return b.String()
	}
	if o.capped && to.Bytes-int64(c.tailBytes) > o.fileLimit() {
		fmt.Fprintf(&b, "; the output went past the %d-byte limit on saved output, so %s keeps only its first %d bytes and, once it ends, its last %d ...]\n", o.maxFile, path, o.fileLimit(), keepBytes)
		return b.String()
	}
	om := Omitted{Path: path,
		Start: from.Bytes + int64(c.headBytes) + 1,
		Count: to.Bytes - from.Bytes - int64(c.headBytes) - int64(c.tailBytes)}
	// Whole lines were left out when both cuts fell on line ends, which clip arranges
	// whenever it can; name them so that they can be fetched exactly.
	first := from.Lines + int64(c.headNewlines) + 1
	last := to.Lines - int64(c.tailNewlines)
	if c.headNewlines >= 0 && c.tailNewlines >= 0 && first <= last {
		om.FirstLine, om.LastLine = first, last
		fmt.Fprintf(&b, " (lines %d-%d of %s)", first, last, path)
	} else {
		fmt.Fprintf(&b, " (inside a long line) of %s", path)
	}
	if hint == nil {
		hint = Omitted.Command
	}
	b.WriteString(". Read them with " + hint(om) + " ...]\n")
	return b.String()
}

// Omitted is the stretch of a stream that an excerpt left out, in the file that saved it.
type Omitted struct {
	Path string // the file holding the whole stream
	// FirstLine and LastLine are the whole lines left out, numbered from 1 in Path; both
	// are 0 when a cut fell inside a line.
	FirstLine, LastLine int64
	// Start and Count are the bytes left out, Start numbered from 1 in Path.
	Start, Count int64
}

// Command returns the shell command that prints what o left out: sed for whole lines,
// tail and head for bytes.
func (o Omitted) Command() string {
	if o.FirstLine > 0 {
		return fmt.Sprintf("sed -n '%d,%dp' %s", o.FirstLine, o.LastLine, Quote(o.Path))
	}
	return fmt.Sprintf("tail -c +%d %s | head -c %d", o.Start, Quote(o.Path), o.Count)
}

// Hint says how to read what an excerpt left out, in the names of the tools that read it:
// the text follows "Read them with " in the excerpt's marker. A nil Hint names only the
// shell command ([Omitted.Command]).
type Hint func(Omitted) string

// Quote quotes s for the shell, unless it is a word that needs no quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ring holds the last len(buf) bytes written to it.
type ring struct {
	buf  []byte
	pos  int // next write position
	full bool
}

func (r *ring) write(p []byte) {
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.pos, r.full = 0, true
		return
	}
	n := copy(r.buf[r.pos:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.full = true
	}
	r.pos = (r.pos + len(p)) % len(r.buf)
	if r.pos == 0 && len(p) > 0 {
		r.full = true
	}
}

func (r *ring) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.pos
}

// last returns a copy of the last n bytes held (n <= r.len()).
func (r *ring) last(n int) []byte {
	out := make([]byte, n)
	start := r.pos - n
	if start >= 0 {
		copy(out, r.buf[start:r.pos])
		return out
	}
	k := copy(out, r.buf[len(r.buf)+start:])
	copy(out[k:], r.buf[:r.pos])
	return out
}

// MaxSpill bounds the spilled output a state directory keeps; see [PruneSpills].
const MaxSpill = 1 << 30

// PruneSpills removes the oldest spill files in dir until the rest take at most max
// bytes, sparing those named in keep. A file a running command still writes stays
// readable through its Output until that ends.
func PruneSpills(dir string, max int64, keep ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type spilled struct {
		path string
		size int64
		mod  int64
	}
	var files []spilled
	var total int64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".stdout") && !strings.HasSuffix(name, ".stderr") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		total += info.Size()
		if p := filepath.Join(dir, name); !slices.Contains(keep, p) {
			files = append(files, spilled{p, info.Size(), info.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(files, func(a, b spilled) int { return cmp.Compare(a.mod, b.mod) })
	for _, f := range files {
		if total <= max {
			return
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}
