package files

import "bytes"

// Insert inserts text after line after of the file at path (0 inserts before the first
// line, the file's line count appends). text gets the file's line endings and a line ending
// of its own if it lacks one, except that appending to a file without a final newline keeps
// it without one. Insertion needs an up-to-date view: line numbers in a file that changed
// since it was seen may have moved.
func Insert(path string, after int, text string, opts EditOptions) (*Edit, error) {
	if text == "" {
		return nil, ErrEmptyInsert
	}
	defer lockPath(path)()
	data, info, changed, err := editable(path, opts)
	if err != nil {
		return nil, err
	}
	ld := asLF(data) // for line numbers
	total := countLines(ld)
	if changed {
		return nil, staleError(path, &StaleError{Insert: true}, opts.Previous, data, info)
	}
	if after < 0 || after > total {
		return nil, &LineError{Path: path, After: after, Lines: total}
	}
	t, eol := withEndings(data, []byte(text))
	if err := lossless(path, data, t, true); err != nil {
		return nil, err
	}
	off, piece := insertion(data, ld, after, total, t, eol)
	if size := int64(len(data)) + int64(len(piece)); size > opts.MaxFileSize {
		return nil, errorf(ErrTooLarge, "the insertion would make %s %s bytes, over the %s-byte limit (--max-file-size); nothing was written",
			path, thousands(size), thousands(opts.MaxFileSize))
	}
	out := make([]byte, 0, len(data)+len(piece))
	out = append(append(append(out, data[:off]...), piece...), data[off:]...)
	if err := writable(path, info); err != nil {
		return nil, err
	}
	lost, err := writeAtomic(opts.Open, path, out, info, writeAll)
	if err != nil {
		return nil, err
	}
	added := countLines([]byte(text))
	e := &Edit{Count: 1, Old: data, New: out, Digest: ContentDigest(out), First: after + 1, Last: after + added,
		CRLF: bytes.Equal(eol, []byte("\r\n")), CR: bytes.Equal(eol, []byte("\r"))}
	e.Lines = []int{e.First}
	e.ModeLost = lost
	e.Held = heldForWriting(path, info)
	e.Snippet = snippet(out, e.First, e.Last, 0)
	return e, nil
}

// withEndings returns text with the line endings of data (LF, CRLF or lone CR), and that
// line ending.
func withEndings(data, text []byte) (_, eol []byte) {
	switch {
	case crStyle(data):
		return toCR(text), []byte("\r")
	case crlfStyle(data):
		return toCRLF(text), []byte("\r\n")
	}
	return text, newline
}

// insertion returns where in data, of total lines (ld is data with LF endings), text t
// goes to follow line after, and the bytes to put there: t ending with eol, or when
// appending to a last line without a newline, eol then t without its own.
func insertion(data, ld []byte, after, total int, t, eol []byte) (off int, piece []byte) {
	if after == total && total > 0 && ld[len(ld)-1] != '\n' {
		// Appending to a last line without a newline: end that line, and leave the new
		// last line without one too.
		return len(data), append(append([]byte{}, eol...), bytes.TrimSuffix(bytes.TrimSuffix(t, newline), []byte("\r"))...)
	}
	off = lineStart(ld, after)
	if after == 0 && bytes.HasPrefix(data, utf8BOM) {
		off = len(utf8BOM)
	}
	if !bytes.HasSuffix(t, eol) {
		t = append(append([]byte{}, t...), eol...)
	}
	return off, t
}

// lineStart returns the offset where line n+1 starts: just past the nth newline.
func lineStart(data []byte, n int) int {
	off := 0
	for range n {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}
