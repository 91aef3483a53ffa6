package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mjkoo/boris/internal/files"
)

// reworded is an error of the files package with the text the model reads in place of its
// own; it still matches what err matches, so it keeps its code.
type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

// fileFacts words the errors of the files package that state facts (which lines, which
// text, how many) in the names of f's tools and parameters, with what to do next. Other
// errors come back as they are.
func (f *face) fileFacts(err error) error {
	msg := f.editFacts(err)
	if msg == "" {
		msg = f.readFacts(err)
	}
	if msg == "" {
		return err
	}
	return &reworded{msg: msg, err: err}
}

// readFacts words the errors of reading a file, or returns "".
func (f *face) readFacts(err error) string {
	if e, ok := errors.AsType[*files.SizeError](err); ok {
		return e.Error() + f.readPart(e.Whole)
	}
	if e, ok := errors.AsType[*files.SpecialError](err); ok {
		if e.Waits {
			return e.Error() + ": use " + f.bash + " with a timeout instead"
		}
		return e.Error() + " (use " + f.bash + " for this one)"
	}
	if e, ok := errors.AsType[*files.RangeError](err); ok {
		switch e.Problem {
		case files.StartNotALine:
			return fmt.Sprintf("%s is not a line number: lines are numbered from 1", f.start(e.Start))
		case files.EndBeforeStart:
			// Only view_range can ask for such a range: Read's offset and limit cannot.
			return fmt.Sprintf("view_range [%d, %d] ends before it starts: give [start, end] with end >= start, or end -1 for the rest of the file", e.Start, e.End)
		}
		return fmt.Sprintf("%s is past the end of %s, which has %s", f.start(e.Start), e.Path, plural(e.Lines, "line"))
	}
	return ""
}

// editFacts words the errors of an edit, or returns "".
func (f *face) editFacts(err error) string {
	switch {
	case errors.Is(err, files.ErrEmptyOld):
		return f.emptyOld
	case errors.Is(err, files.ErrEmptyInsert):
		return "the text to insert is empty: put the lines to insert in " + f.newArg
	}
	if e, ok := errors.AsType[*files.MissError](err); ok {
		return f.miss(e)
	}
	if e, ok := errors.AsType[*files.AmbiguousError](err); ok {
		return fmt.Sprintf("%s matches %d places in %s, on lines %s; include more surrounding lines in %[1]s to pick one, or set replace_all to change every one",
			f.oldArg, e.Count, e.Path, files.JoinLines(e.Lines))
	}
	if e, ok := errors.AsType[*files.StaleError](err); ok {
		return f.stale(e)
	}
	if e, ok := errors.AsType[*files.NotViewedError](err); ok {
		return fmt.Sprintf("%s has not been %s in this session; %s it first (any %[3]s of it in this session counts, even of a few lines), then retry this edit", e.Path, f.viewed, f.view)
	}
	if e, ok := errors.AsType[*files.LineError](err); ok {
		// Only str_replace_editor inserts.
		return fmt.Sprintf("insert_line %d is outside %s, which has %s: use 0 to insert before the first line, or %d to append", e.After, e.Path, plural(e.Lines, "line"), e.Lines)
	}
	if e, ok := errors.AsType[*files.LossyError](err); ok {
		return f.lossy(e)
	}
	if e, ok := errors.AsType[*files.ReadOnlyError](err); ok {
		if e.Dir {
			return e.Error() + "; change its mode with " + f.bash + " (chmod u+w) first if files in it should be written"
		}
		return e.Error() + "; change its mode with " + f.bash + " (chmod u+w) first if it should be edited"
	}
	if e, ok := errors.AsType[*files.GrowthError](err); ok {
		matches := "matches"
		if e.Count == 1 {
			matches = "match"
		}
		return fmt.Sprintf("the edit would make %s %s bytes (%d %s; %s %s bytes, %s %s bytes), over the %s-byte limit (--max-file-size); nothing was written",
			e.Path, count(e.Size), e.Count, matches, f.oldArg, count(e.Old), f.newArg, count(e.New), count(e.Limit))
	}
	return ""
}

// stale words an edit refused because the file changed since it was read.
func (f *face) stale(e *files.StaleError) string {
	why := "line numbers may have moved"
	switch {
	case e.Insert:
	case e.Count == 0:
		why = f.oldArg + " now matches nowhere in it"
	default:
		why = fmt.Sprintf("%s now matches %d places in it, on lines %s", f.oldArg, e.Count, files.JoinLines(e.Lines))
	}
	return fmt.Sprintf("%s changed on disk since you last %s it, and %s, so nothing was written. %s the file again, then retry. What changed: %s",
		e.Path, f.viewed, why, capital(f.view), e.Change)
}

// lossy words new text refused because it would change a file's encoding.
func (f *face) lossy(e *files.LossyError) string {
	what := f.newArg
	if e.Inserted {
		what = "the inserted text"
	}
	if e.FFFD {
		return fmt.Sprintf("%s is not valid UTF-8 (probably Latin-1 or another 8-bit encoding), and %s contains U+FFFD (�), the character %s shows for bytes it cannot decode; writing it would replace the original bytes. Leave those characters out of %s and %s and edit around them, or use %s for this change",
			e.Path, what, f.view, f.oldArg, f.newArg, f.bash)
	}
	return fmt.Sprintf("%s is not UTF-8 (probably Latin-1 or another 8-bit encoding), and %s has non-ASCII characters, which would be written as UTF-8 and mix two encodings in one file. Use only ASCII in %[2]s, or convert the file with %s (iconv) first",
		e.Path, what, f.bash)
}

// miss words text to replace that was not found, in the order the model reads it: what
// was wrong with the text, then the closest lines of the file and how they differ.
func (f *face) miss(e *files.MissError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was not found in %s.", f.oldArg, e.Path)
	if e.FFFD {
		fmt.Fprintf(&b, " The file is not valid UTF-8: %s shows the bytes it cannot decode as �, and %s cannot match them; choose %[2]s from the text around them.", f.view, f.oldArg)
	}
	if e.Numbered {
		fmt.Fprintf(&b, " %s seems to include the line numbers %s puts before each line (spaces, number, tab); leave them out.", f.oldArg, f.view)
	}
	c := e.Closest
	switch {
	case c == nil && e.Start != nil:
		s := e.Start
		fmt.Fprintf(&b, " Its first %d of %d characters are at line %d, where the file goes on differently (quoted, so whitespace shows):\n  file has %s\n  %s has %s\nCopy %[5]s exactly from the file, whitespace included, then retry.", s.Found, s.Of, s.Line, s.File, f.oldArg, s.Old)
		return b.String()
	case c == nil && e.Cut:
		fmt.Fprintf(&b, " The search for the closest text was cut short (%s is large); %s the file to see its current text, and use a shorter %[1]s.", f.oldArg, f.view)
		return b.String()
	case c == nil:
		fmt.Fprintf(&b, " No line of %s appears in the file, even ignoring whitespace; %s the file to see its current text.", f.oldArg, f.view)
		return b.String()
	}
	fmt.Fprintf(&b, "\nThe closest text is at %s", files.LineSpan(c.First, c.Last))
	if e.Cut {
		fmt.Fprintf(&b, " (the search for it was cut short because %s is large, so closer text may exist; a shorter %[1]s is easier to match)", f.oldArg)
	}
	fmt.Fprintf(&b, ":\n%s", c.Text)
	if c.Hidden > 0 {
		fmt.Fprintf(&b, "… (%s not shown)\n", plural(c.Hidden, "more line"))
	}
	f.lineDiffs(&b, c, e.Numbered)
	fmt.Fprintf(&b, "Copy %s exactly from the file, whitespace included, then retry.", f.oldArg)
	return b.String()
}

// lineDiffs writes the lines of the closest text that differ from old_str's, or from
// its lines without their line numbers when it was numbered.
func (f *face) lineDiffs(b *strings.Builder, c *files.Closest, numbered bool) {
	old := f.oldArg
	if numbered {
		old += " without line numbers"
	}
	switch {
	case len(c.Diffs) == 0 && numbered:
		fmt.Fprintf(b, "Its lines match %s.\n", old)
		return
	case len(c.Diffs) == 0:
		fmt.Fprintf(b, "Its lines match %s except for line endings or the end of the file; check whether %[1]s ends with a newline the file lacks.\n", f.oldArg)
		return
	}
	b.WriteString("Lines that differ (quoted, so whitespace shows):\n")
	for _, d := range c.Diffs {
		fmt.Fprintf(b, "  line %d: file has %s\n           %s has %s\n", d.Line, d.File, old, d.Old)
	}
	if c.MoreDiffs > 0 {
		fmt.Fprintf(b, "  … and %d more\n", c.MoreDiffs)
	}
}

// capital returns s with its first letter in upper case: "view" starts a sentence as "View".
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
