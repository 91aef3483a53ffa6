package files

import (
	"fmt"
	"io/fs"
	"strings"
)

// The errors below state what went wrong as facts, in their fields; their Error text is a
// plain summary. The caller words them for the model in the names of its own tools and
// parameters, which this package does not know.

// Edits with nothing to work with.
var (
	// ErrEmptyOld refuses a replacement of empty text. It is an [ErrInvalid].
	ErrEmptyOld error = &kindError{kind: ErrInvalid, msg: "the text to replace is empty"}
	// ErrEmptyInsert refuses an insertion of empty text. It is an [ErrInvalid].
	ErrEmptyInsert error = &kindError{kind: ErrInvalid, msg: "the text to insert is empty"}
)

// RangeProblem says what is wrong with a range of lines.
type RangeProblem int

// What a [RangeError] can be.
const (
	StartNotALine RangeProblem = iota // the start is below 1
	EndBeforeStart
	StartPastEnd // the start is past the end of the file
)

// RangeError is the [ErrInvalid] of a range of lines [View] cannot show.
type RangeError struct {
	Problem    RangeProblem
	Start, End int    // as asked for
	Path       string // the file, for StartPastEnd
	Lines      int    // the file's line count, for StartPastEnd
}

func (e *RangeError) Error() string {
	switch e.Problem {
	case StartNotALine:
		return fmt.Sprintf("line %d is not a line number: lines are numbered from 1", e.Start)
	case EndBeforeStart:
		return fmt.Sprintf("the range %d-%d ends before it starts", e.Start, e.End)
	}
	return fmt.Sprintf("line %d is past the end of %s, which has %s", e.Start, e.Path, nLines(e.Lines))
}

// Is reports that a RangeError is an [ErrInvalid].
func (e *RangeError) Is(target error) bool { return target == ErrInvalid }

// LineError is the [ErrInvalid] of an insertion after a line the file does not have.
type LineError struct {
	Path  string
	After int // the line asked for
	Lines int // the file's line count
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d is outside %s, which has %s", e.After, e.Path, nLines(e.Lines))
}

// Is reports that a LineError is an [ErrInvalid].
func (e *LineError) Is(target error) bool { return target == ErrInvalid }

// AmbiguousError is the [ErrAmbiguous] of text to replace that occurs more than once.
type AmbiguousError struct {
	Path  string
	Count int
	Lines []int // the line of each occurrence, ascending
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("the text to replace occurs %d times in %s, on lines %s", e.Count, e.Path, JoinLines(e.Lines))
}

// Is reports that an AmbiguousError is an [ErrAmbiguous].
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// NotViewedError is the [ErrNotViewed] of an edit of a file not seen in this session.
type NotViewedError struct{ Path string }

func (e *NotViewedError) Error() string {
	return e.Path + " has not been read in this session"
}

// Is reports that a NotViewedError is an [ErrNotViewed].
func (e *NotViewedError) Is(target error) bool { return target == ErrNotViewed }

// StaleError is the [ErrStale] of an edit refused because the file changed since it was
// seen, and the edit can no longer be trusted to land where it was meant to.
type StaleError struct {
	Path string
	// Insert: the edit was an insertion, whose line numbers may have moved. Otherwise it
	// was a replacement, whose text now occurs Count times, on Lines.
	Insert bool
	Count  int
	Lines  []int
	// Change says what changed: lines added or removed, with the new ones numbered.
	Change string
}

func (e *StaleError) Error() string {
	why := "line numbers may have moved"
	if !e.Insert {
		why = fmt.Sprintf("the text to replace now occurs %d times", e.Count)
	}
	return fmt.Sprintf("%s changed on disk since it was last read, and %s; what changed: %s", e.Path, why, e.Change)
}

// Is reports that a StaleError is an [ErrStale].
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// LossyError is the [ErrLossy] of new text that would change the encoding of a file that
// is not UTF-8.
type LossyError struct {
	Path string
	// Inserted: the text was to be inserted; otherwise it was to replace other text.
	Inserted bool
	// FFFD: the text holds U+FFFD, which stands for bytes that could not be decoded, and
	// writing it would replace the original bytes. Otherwise the text has non-ASCII
	// characters and the file has no UTF-8 at all: they would mix two encodings in one file.
	FFFD bool
}

func (e *LossyError) Error() string {
	if e.FFFD {
		return fmt.Sprintf("%s is not valid UTF-8, and the new text contains U+FFFD (�), which would replace the original bytes", e.Path)
	}
	return fmt.Sprintf("%s is not UTF-8, and the new text has non-ASCII characters, which would mix two encodings in one file", e.Path)
}

// Is reports that a LossyError is an [ErrLossy].
func (e *LossyError) Is(target error) bool { return target == ErrLossy }

// GrowthError is the [ErrTooLarge] of a replacement that would make the file larger than
// the limit; nothing was written.
type GrowthError struct {
	Path        string
	Size, Limit int64 // the size the edit would make, and the limit
	Count       int   // the occurrences it would replace
	Old, New    int64 // the bytes of each occurrence and of its replacement
}

func (e *GrowthError) Error() string {
	return fmt.Sprintf("the edit would make %s %s bytes (%d occurrences of %s bytes, each replaced by %s bytes), over the %s-byte limit (--max-file-size); nothing was written",
		e.Path, thousands(e.Size), e.Count, thousands(e.Old), thousands(e.New), thousands(e.Limit))
}

// Is reports that a GrowthError is an [ErrTooLarge].
func (e *GrowthError) Is(target error) bool { return target == ErrTooLarge }

// MissError is the [ErrNoMatch] of text to replace that is not in the file, with what in
// the file is closest to it.
type MissError struct {
	Path string
	// FFFD: the file is not valid UTF-8 and the text holds U+FFFD, the character that
	// stands for bytes that could not be decoded, which never matches them.
	FFFD bool
	// Numbered: most lines of the text start as numbered lines do (spaces, a number, a
	// tab), as if copied with the numbers a view puts before them. Closest is then
	// the region most like the text without them.
	Numbered bool
	// Cut: the search for the closest text stopped early (the text is large, or the
	// request ended), so closer text may exist.
	Cut bool
	// Closest is the region of the file most like the text; nil when no line of the text
	// appears in the file, even ignoring whitespace, or none was found before Cut.
	Closest *Closest
	// Start is, when there is no Closest, where the longest start of a one-line text
	// is in the file; nil when a start worth showing is not there.
	Start *PartialMatch
}

// PartialMatch is where a file holds the start of a one-line text that it does not hold
// whole, and how it goes on from there.
type PartialMatch struct {
	Found, Of int    // characters of the text found, of all of them
	Line      int    // where the start is, 1-based
	File, Old string // the file from there and the text, quoted as LineDiff's are
}

func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the text to replace was not found in %s", e.Path)
	if e.FFFD {
		b.WriteString("; the file is not valid UTF-8, and the text holds U+FFFD, which never matches its bytes")
	}
	if e.Numbered {
		b.WriteString("; the text seems to include line numbers")
	}
	if e.Cut {
		b.WriteString("; the search for the closest text was cut short")
	}
	c := e.Closest
	switch {
	case c == nil && e.Start != nil:
		fmt.Fprintf(&b, "; its first %d of %d characters are at line %d, where the file has %s and the text %s", e.Start.Found, e.Start.Of, e.Start.Line, e.Start.File, e.Start.Old)
		return b.String()
	case c == nil:
		if !e.Cut {
			b.WriteString("; no line of the text appears in the file")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "; the closest text is at %s:\n%s", LineSpan(c.First, c.Last), c.Text)
	if c.Hidden > 0 {
		fmt.Fprintf(&b, "… (%s not shown)\n", moreLines(c.Hidden))
	}
	for _, d := range c.Diffs {
		fmt.Fprintf(&b, "  line %d: file has %s, text has %s\n", d.Line, d.File, d.Old)
	}
	return b.String()
}

// Is reports that a MissError is an [ErrNoMatch].
func (e *MissError) Is(target error) bool { return target == ErrNoMatch }

// Closest is the region of a file closest to text that was not found in it.
type Closest struct {
	First, Last int    // its lines, 1-based
	Text        string // its first lines, numbered as a view shows them
	Hidden      int    // its lines past those in Text
	// Diffs are its first lines that differ from the text's, and MoreDiffs how many more
	// do. None differ when only line endings or the end of the file do.
	Diffs     []LineDiff
	MoreDiffs int
}

// LineDiff is a line of a file that differs from the line of the text meant to match it.
// Both are quoted as Go strings, so that whitespace shows, and cut at 200 characters.
type LineDiff struct {
	Line      int
	File, Old string
}

// SpecialError is the [ErrUnsupported] of a file that is not a regular file, or of a
// pseudo-file that waits for data: a command can read it, the file tools cannot.
type SpecialError struct {
	Path  string
	What  string // what it is: "a named pipe (FIFO)", "a socket"
	Waits bool   // it is a special file that waits for data
}

func (e *SpecialError) Error() string {
	if e.Waits {
		return e.Path + " is a special file that waits for data; the file tools read only what a file already holds"
	}
	return fmt.Sprintf("%s is %s; the file tools read and write regular files only", e.Path, e.What)
}

// Is reports that a SpecialError is an [ErrUnsupported].
func (e *SpecialError) Is(target error) bool { return target == ErrUnsupported }

// ReadOnlyError is the [ErrUnsupported] of an edit of a file the process may not write:
// its mode has no write bit, or the kernel refuses writing it for Reason; or, with Dir, of
// a file to create, replace or remove in a directory whose mode has no write bit.
type ReadOnlyError struct {
	Path   string
	Mode   fs.FileMode // the permission bits
	Reason string      // why writing is refused when the mode allows it; "" if it does not
	Dir    bool        // Path is the directory
}

func (e *ReadOnlyError) Error() string {
	if e.Dir {
		return fmt.Sprintf("the directory %s is read-only (mode %04o)", e.Path, e.Mode)
	}
	if e.Reason == "" {
		return fmt.Sprintf("%s is read-only (mode %04o)", e.Path, e.Mode)
	}
	return fmt.Sprintf("%s is not writable (mode %04o): %s", e.Path, e.Mode, e.Reason)
}

// Is reports that a ReadOnlyError is an [ErrUnsupported].
func (e *ReadOnlyError) Is(target error) bool { return target == ErrUnsupported }
