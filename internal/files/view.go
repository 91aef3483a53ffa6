package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"sync"
	"unicode/utf8"
)

// ViewOptions say which lines of a file [View] shows.
type ViewOptions struct {
	// Start and End are the 1-based inclusive range to show; End -1 means to the end of
	// the file. Start 0 asks for the default view: the first [DefaultLines] lines.
	Start, End int
	// MaxFileSize is the largest file shown without a range and the most text one view
	// returns. A range reads only up to its end, so it works on files of any size.
	MaxFileSize int64
	// Open opens the file (see [Opener]).
	Open Opener
}

// FileView is what [View] found.
type FileView struct {
	// Text holds the shown lines as cat -n prints them: the line number right-aligned in
	// six columns, a tab, the line without its line ending, a newline.
	Text        string
	First, Last int   // lines shown, 1-based; Last is First-1 when none were
	Lines       int   // lines in the file, or -1 when the view stopped before the end
	Size        int64 // bytes in the file
	AskedEnd    int   // the range's end, when it was past the end of the file and was clamped
	More        bool  // the file goes on after Last
	Capped      bool  // the range held more than MaxFileSize bytes of text; it stops at Last
	Cut         int   // lines cut at MaxLineChars
	FirstCut    int   // the first of them, when there are any
	CRLF        bool  // shown lines end with CRLF
	CR          bool  // the file's line endings are lone CRs (classic Mac OS), shown as line breaks
	NotUTF8     bool  // the file (or, for a large file, a shown line) is not valid UTF-8
	MIME        string
	Image       []byte // the whole file, when it is an image of type MIME
	Content     []byte // the whole file, when it was small enough to read whole
	Digest      Digest // of Content when it was read whole, else [StatDigest]
}

// View reads the lines opts asks for from the text file at path, or the whole file when it
// is a PNG, JPEG, GIF or WebP image (detected by content; SVG is text). It refuses binary
// files, FIFOs, devices and sockets without blocking, and a view without a range of a file
// over opts.MaxFileSize. Large files are read in blocks and only up to the range's end; the
// reading stops when ctx ends.
func View(ctx context.Context, path string, opts ViewOptions) (*FileView, error) {
	first, last, err := lineRange(opts.Start, opts.End)
	if err != nil {
		return nil, err
	}
	f, info, err := openRegular(opts.Open, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &FileView{Size: info.Size(), Lines: -1}
	if opts.Start == 0 && v.Size > opts.MaxFileSize {
		return nil, &SizeError{Path: path, Size: v.Size, Limit: opts.MaxFileSize, Whole: true}
	}

	lr, put, err := v.lines(ctx, f, info, path)
	if err != nil {
		return nil, err
	}
	defer put()

	if mime := imageType(lr.data); mime != "" {
		return v.readImage(f, path, mime, lr.data, opts.MaxFileSize)
	}
	if typ, ok := binaryType(lr.data); ok {
		return nil, binaryError(path, v.Size, typ)
	}
	v.NotUTF8 = v.Content != nil && !utf8.Valid(v.Content)
	bom := bytes.HasPrefix(lr.data, utf8BOM)
	if crStyle(lr.data) {
		// Lines end with lone CRs: read them as LFs, so that there are lines to show.
		v.CR = true
		if v.Content != nil {
			lr.data = asLF(v.Content)
		} else if lr, err = crLines(ctx, f, path, lr.buf); err != nil {
			return nil, err
		}
	}

	if err := v.show(&lr, path, first, last, opts, bom); err != nil {
		return nil, err
	}
	return v, nil
}

// show reads lines first to last from lr into v, and the file's line count when the
// reading reached its end; a range that starts past that end is refused.
func (v *FileView) show(lr *lineReader, path string, first, last int, opts ViewOptions, bom bool) error {
	v.First = first
	line, eof := v.readLines(lr, first, last, opts.MaxFileSize, bom)
	if lr.err != nil {
		return readFailed(path, lr.err)
	}
	v.Last = line
	if !eof && !lr.more() {
		eof = true
	}
	if lr.err != nil {
		return readFailed(path, lr.err)
	}
	v.More = !eof
	if eof {
		v.Lines = line
		if first > line && !(first == 1 && line == 0) {
			return &RangeError{Problem: StartPastEnd, Start: first, End: opts.End, Path: path, Lines: line}
		}
		if opts.Start != 0 && opts.End != -1 && opts.End > line {
			v.AskedEnd = opts.End
		}
	}
	if v.Last < v.First {
		v.Last = v.First - 1
	}
	return nil
}

// lines returns a reader of f's lines, with its first block read: over v.Content when
// the file is small enough to read whole, else read in blocks from a pooled buffer that
// put gives back.
func (v *FileView) lines(ctx context.Context, f *os.File, info fs.FileInfo, path string) (lr lineReader, put func(), err error) {
	if v.Size <= wholeFileLimit {
		v.Content, err = io.ReadAll(io.LimitReader(f, wholeFileLimit))
		if err != nil {
			return lineReader{}, nil, readFailed(path, err)
		}
		v.Digest = ContentDigest(v.Content)
		return lineReader{data: v.Content, eof: true}, func() {}, nil
	}
	v.Digest = StatDigest(info)
	buf := blocks.Get().(*[]byte)
	put = func() { blocks.Put(buf) }
	lr = lineReader{ctx: ctx, r: f, buf: *buf}
	lr.fill()
	if lr.err != nil {
		put()
		return lineReader{}, nil, readFailed(path, lr.err)
	}
	return lr, put, nil
}

// crLines reads f again from the start, with its lone CRs read as LFs.
func crLines(ctx context.Context, f *os.File, path string, buf []byte) (lineReader, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return lineReader{}, readFailed(path, err)
	}
	return lineReader{ctx: ctx, r: &crReader{r: f}, buf: buf}, nil
}

// lineRange checks the range a view asks for, start and end as [ViewOptions] has them,
// and returns its first and last lines.
func lineRange(start, end int) (first, last int, err error) {
	switch {
	case start == 0:
		return 1, DefaultLines, nil
	case start < 1:
		return 0, 0, &RangeError{Problem: StartNotALine, Start: start, End: end}
	case end == -1:
		return start, math.MaxInt, nil
	case end < start:
		return 0, 0, &RangeError{Problem: EndBeforeStart, Start: start, End: end}
	}
	return start, end, nil
}

// readImage fills v with the image of type mime that f holds; head is what was read of it.
func (v *FileView) readImage(f *os.File, path, mime string, head []byte, limit int64) (*FileView, error) {
	if v.Size > limit {
		return nil, tooLarge(path, v.Size, limit)
	}
	v.MIME = mime
	if v.Content != nil {
		v.Image, v.Content = v.Content, nil
		return v, nil
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit-int64(len(head))))
	if err != nil {
		return nil, readFailed(path, err)
	}
	v.Image = append(append(make([]byte, 0, len(head)+len(rest)), head...), rest...)
	return v, nil
}

// readLines reads lines first to last from lr into v.Text, numbered, stopping once they
// hold budget bytes. It returns the last line read and whether the file ended.
func (v *FileView) readLines(lr *lineReader, first, last int, budget int64, bom bool) (line int, eof bool) {
	line = lr.skip(first - 1)
	eof = line < first-1
	out := make([]byte, 0, 64<<10)
	for !eof && line < last {
		n, ok := lr.next(4*MaxLineChars + 4)
		if !ok {
			eof = true
			break
		}
		line++
		text := lr.line
		if line == 1 && bom {
			text = bytes.TrimPrefix(text, utf8BOM)
		}
		if lr.ended && n == len(lr.line) && bytes.HasSuffix(text, []byte("\r")) {
			text = text[:len(text)-1]
			v.CRLF = true
		}
		if !v.NotUTF8 && v.Content == nil && !utf8.Valid(text) {
			v.NotUTF8 = true
		}
		var cut bool
		total := len(text) // a bound on its characters, enough when the line is short
		if total > MaxLineChars || lr.dropped > 0 {
			total = chars(text) + lr.dropped
		}
		out, cut = appendNumbered(out, line, text, total)
		if cut {
			if v.Cut == 0 {
				v.FirstCut = line
			}
			v.Cut++
		}
		if int64(len(out)) >= budget {
			v.Capped = true
			break
		}
	}
	v.Text = string(out)
	return line, eof
}

var utf8BOM = []byte("\xEF\xBB\xBF")

// blocks recycles the read buffers of streamed views.
var blocks = sync.Pool{New: func() any { b := make([]byte, blockSize); return &b }}

// lineReader reads lines from a file in large blocks, or from bytes already in memory.
// Reading from the file stops, as with a read error, when ctx ends.
type lineReader struct {
	ctx  context.Context // nil: never stops
	r    io.Reader
	buf  []byte
	data []byte // unread bytes
	eof  bool
	err  error

	line    []byte // the line read by next, up to its keep limit
	dropped int    // characters of that line past the limit
	ended   bool   // that line ended with a newline (the last line of a file may not)
}

// fill reads the next block; it reports whether any bytes came.
func (lr *lineReader) fill() bool {
	if lr.eof {
		return false
	}
	if lr.ctx != nil {
		if err := lr.ctx.Err(); err != nil {
			lr.data, lr.err, lr.eof = nil, err, true
			return false
		}
	}
	n, err := io.ReadFull(lr.r, lr.buf)
	lr.data = lr.buf[:n]
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		lr.eof = true
	default:
		lr.err, lr.eof = err, true
	}
	return n > 0
}

// more reports whether any bytes are left.
func (lr *lineReader) more() bool {
	return len(lr.data) > 0 || lr.fill()
}

// skip moves past n lines and returns how many there were; fewer than n means the file
// ended, and a last line without a newline counts. Whole blocks of lines are counted with
// bytes.Count and never copied.
func (lr *lineReader) skip(n int) int {
	done := 0
	tail := false // bytes after the last newline passed
	for done < n {
		if len(lr.data) == 0 && !lr.fill() {
			if tail {
				done++
			}
			return done
		}
		if c := bytes.Count(lr.data, newline); done+c < n {
			done += c
			tail = lr.data[len(lr.data)-1] != '\n'
			lr.data = nil
			continue
		}
		// The nth newline is in this block: narrow it down by counting in small pieces,
		// then step through the last one.
		for {
			piece := lr.data[:min(len(lr.data), 4096)]
			c := bytes.Count(piece, newline)
			if done+c >= n {
				break
			}
			done += c
			lr.data = lr.data[len(piece):]
		}
		for done < n {
			i := bytes.IndexByte(lr.data, '\n')
			lr.data = lr.data[i+1:]
			done++
		}
		tail = false
	}
	return done
}

var newline = []byte{'\n'}

// next reads the next line without its newline into lr.line, keeping at most keep bytes
// and counting the characters past them in lr.dropped. It returns the line's length in
// bytes, and false at the end of the file.
func (lr *lineReader) next(keep int) (int, bool) {
	lr.line, lr.dropped, lr.ended = lr.line[:0], 0, false
	n, started := 0, false
	for {
		if len(lr.data) == 0 && !lr.fill() {
			return n, started
		}
		started = true
		seg := lr.data
		i := bytes.IndexByte(seg, '\n')
		if i >= 0 {
			seg = seg[:i]
		}
		room := min(max(keep-len(lr.line), 0), len(seg))
		lr.line = append(lr.line, seg[:room]...)
		lr.dropped += chars(seg[room:])
		n += len(seg)
		if i >= 0 {
			lr.data = lr.data[i+1:]
			lr.ended = true
			return n, true
		}
		lr.data = nil
	}
}

// crReader reads a file whose line endings are lone CRs with those CRs as LFs (CRLF pairs
// stay), byte for byte otherwise, so that a streamed view finds its lines.
type crReader struct {
	r    io.Reader
	next [1]byte // the byte after a CR that ended the last read, when peeked
	has  bool
	err  error // from peeking, returned once next has been
}

func (c *crReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	off := 0
	if c.has {
		p[0], off, c.has = c.next[0], 1, false
	}
	var n int
	err := c.err
	if err == nil {
		n, err = c.r.Read(p[off:])
	}
	n += off
	if n == 0 {
		return 0, err
	}
	loneAtEnd := true // a CR ending p is lone unless the byte after it is LF
	if p[n-1] == '\r' && err == nil {
		var m int
		m, c.err = io.ReadFull(c.r, c.next[:])
		c.has = m == 1
		loneAtEnd = !c.has || c.next[0] != '\n'
	}
	for i := range n {
		if p[i] == '\r' && (i+1 < n && p[i+1] != '\n' || i+1 == n && loneAtEnd) {
			p[i] = '\n'
		}
	}
	return n, err
}

// chars counts the characters in b: every byte that does not continue a UTF-8 sequence.
func chars(b []byte) int {
	n := len(b)
	for _, c := range b {
		if c&0xC0 == 0x80 {
			n--
		}
	}
	return n
}

// appendNumbered appends line number n and text in the cat -n format. A line of more than
// MaxLineChars characters (total counts them all, text may hold only a prefix) is cut there
// with a note; cut reports that.
func appendNumbered(out []byte, n int, text []byte, total int) (_ []byte, cut bool) {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for i := len(digits); i < 6; i++ {
		out = append(out, ' ')
	}
	out = append(append(out, digits...), '\t')
	if total <= MaxLineChars {
		out = append(out, text...)
		return append(out, '\n'), false
	}
	i, seen := 0, 0
	for i < len(text) && seen < MaxLineChars {
		_, size := utf8.DecodeRune(text[i:])
		i += size
		seen++
	}
	out = append(out, text[:i]...)
	out = fmt.Appendf(out, " … [line cut: %s of %s characters shown]\n", thousands(MaxLineChars), thousands(int64(total)))
	return out, true
}
