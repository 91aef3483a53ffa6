package tools

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/clients"
	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
	"github.com/mjkoo/boris/internal/shell"
)

// ViewArgs are the arguments of view.
type ViewArgs struct {
	Path      string    `json:"path" jsonschema:"File or directory to view: an absolute path, or relative to the working directory."`
	ViewRange lineRange `json:"view_range,omitempty" jsonschema:"Lines to show as [start, end]: numbered from 1, both included; end -1 means to the end of the file. Without it a file shows its first 2000 lines. Only for files."`
}

const viewDescription = "Read a file or list a directory.\n\n" +
	"A text file comes back as numbered lines in `cat -n` format: the line number right-aligned in 6 columns, a tab, then the line. The numbers are not part of the file: leave them out of str_replace's old_str. " +
	"Without view_range the first 2000 lines are shown, with a note saying how to see more; at most %d characters are shown in one call, and the note names the view_range that continues; view_range [start, end] shows lines start to end (end -1 reads to the end; an end past the last line is clamped and the note says so). " +
	"Lines longer than 2000 characters are cut with a note. Ranges read only the lines they need, so they also work on files over the size limit, which otherwise are refused.\n\n" +
	"A directory lists its files and subdirectories two levels deep, sorted: directories end in /, symlinks show as name -> target (not followed), dotfiles are shown, .git and node_modules are skipped.\n\n" +
	"PNG, JPEG, GIF and WebP files come back as images; SVG files are text. Binary files, FIFOs, sockets and devices are refused."

const viewRuleNote = " Viewing a file is what lets you edit it with str_replace."

func addView(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "view",
		Title:       "View a file or directory",
		Description: fmt.Sprintf(viewDescription, h.describedFileBudget()) + ifViewRule(h, viewRuleNote, ""),
		InputSchema: schemaOf[ViewArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "View a file or directory", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.view)
}

func (h *handlers) view(ctx context.Context, req *mcp.CallToolRequest, in ViewArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	res, err := h.viewPath(ctx, sess, in.Path, in.ViewRange, false)
	return res, nil, err
}

// viewPath is view, shared with str_replace_editor: a directory listing, an image, or
// numbered lines; viewing a file records it as seen. With openEnd the range's end was not
// asked for (Read without limit), so reaching the end of the file early is not noted.
func (h *handlers) viewPath(ctx context.Context, sess *session.Session, path string, rng lineRange, openEnd bool) (*mcp.CallToolResult, error) {
	abs, err := sess.Resolve(path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, h.fileError(err, path, sess)
	}
	if info.IsDir() {
		if rng != nil {
			return nil, errorf(CodeInvalidArgument, "%s is a directory; view_range applies to files only: leave it out to list the directory", abs)
		}
		l, err := files.List(ctx, sess.OpenRead, abs, files.DefaultListMax, sess.Scope.Hidden)
		if err != nil {
			return nil, h.fileError(err, path, sess)
		}
		return text(formatListing(abs, l, h.contentBudget(ctx), h.face())), nil
	}
	opts := files.ViewOptions{MaxFileSize: h.Config.MaxFileSize, Open: sess.OpenRead}
	if rng != nil {
		if len(rng) != 2 {
			return nil, errorf(CodeInvalidArgument, "view_range needs two numbers, [start, end] (end -1 for the rest of the file), got %d", len(rng))
		}
		if rng[0] < 1 {
			return nil, errorf(CodeInvalidArgument, "view_range start %d is not a line number: lines are numbered from 1", rng[0])
		}
		opts.Start, opts.End = rng[0], rng[1]
	}
	v, err := files.View(ctx, abs, opts)
	if err != nil {
		return nil, h.fileError(err, path, sess)
	}
	if v.MIME != "" {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: v.Image, MIMEType: v.MIME}}}, nil
	}
	sess.MarkSeen(abs, v.Digest)
	sess.Remember(abs, v.Content)
	if openEnd {
		v.AskedEnd = 0
	}
	b := h.budget(ctx)
	return text(formatView(abs, v, h.Config.MaxFileSize, b.File, b.Lines, h.face())), nil
}

// formatView words a file's lines: at most budget characters and maxLines lines of them
// (0: any number), with notes on what was left out.
func formatView(abs string, v *files.FileView, limit int64, budget, maxLines int, f *face) string {
	var b strings.Builder
	kept, shown, cut := cutToBudget(v.Text, budget, maxLines)
	var first string // the note on what was left out, also written before the lines
	note := func(format string, args ...any) {
		b.WriteString("[")
		fmt.Fprintf(&b, format, args...)
		b.WriteString("]\n")
	}
	more := func(format string, args ...any) {
		first = "[" + fmt.Sprintf(format, args...) + "]"
		note(format, args...)
	}
	switch {
	case v.Lines == 0:
		note("%s is empty", abs)
	case cut:
		last := v.First + shown - 1
		of := ""
		if v.Lines > 0 {
			of = " of " + count(int64(v.Lines))
		}
		why := fmt.Sprintf("output budget %d characters", budget)
		if maxLines > 0 && shown >= maxLines {
			why = fmt.Sprintf("the client passes at most %d lines", maxLines+clients.NotesLines)
		}
		more("Showing lines %d-%d%s (%s); continue with %s", v.First, last, of, why, f.more(last+1, shown))
	case v.Capped:
		more("Stopped after line %d: the range holds more than %s bytes of text (--max-file-size). Ask for a smaller range, starting at line %d", v.Last, count(limit), v.Last+1)
	case v.AskedEnd != 0:
		note("The range's end %d is past the end of the file, which has %s: showed lines %d-%d", v.AskedEnd, plural(v.Lines, "line"), v.First, v.Last)
	case v.More && v.First == 1 && v.Last == files.DefaultLines:
		more("Showed lines 1-%d; the file goes on (%s bytes in all). %s shows the next %d lines", v.Last, count(v.Size), f.more(v.Last+1, files.DefaultLines), files.DefaultLines)
	}
	if v.Cut > 0 {
		what := fmt.Sprintf("%s longer than %s characters were cut (the first is line %d)", plural(v.Cut, "line"), count(files.MaxLineChars), v.FirstCut)
		if v.Cut == 1 {
			what = fmt.Sprintf("line %d is longer than %s characters and was cut", v.FirstCut, count(files.MaxLineChars))
		}
		note("%s; %s shows the rest a part at a time: sed -n '%dp' %s | cut -c %d-%d, or %s finds what you look for in it", what, f.bash, v.FirstCut, shell.Quote(abs), files.MaxLineChars+1, 2*files.MaxLineChars, f.grep)
	}
	switch {
	case v.CR:
		note("The file has CR (\\r) line endings (classic Mac OS), shown above as line breaks; edits keep them")
	case v.CRLF:
		note("The file has CRLF (\\r\\n) line endings, not shown above; edits keep them")
	}
	if v.NotUTF8 {
		note("The file is not valid UTF-8 (Latin-1 or another encoding): bytes that are not UTF-8 show as �. Edits keep those bytes; leave � out of %s and %s", f.oldArg, f.newArg)
	}
	if first == "" {
		return kept + b.String()
	}
	// What was left out also stands before the lines, where a client that cuts the middle
	// out of a long result leaves it (see [bothEnds]).
	return first + "\n" + kept + b.String()
}

func formatListing(abs string, l *files.Listing, budget int, f *face) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/ (%d levels deep; directories end in /, symlinks show as name -> target; .git and node_modules skipped):\n", strings.TrimSuffix(abs, "/"), files.ListDepth)
	chars, shown := 0, 0
	for _, e := range l.Entries {
		if chars += utf8.RuneCountInString(e) + 1; shown > 0 && chars > budget {
			break
		}
		b.WriteString(e)
		b.WriteByte('\n')
		shown++
	}
	if len(l.Entries) == 0 && l.Omitted == 0 {
		b.WriteString("(empty)\n")
	}
	omitted := l.Omitted + len(l.Entries) - shown
	if omitted == 0 {
		return b.String()
	}
	// What was left out also stands first, where a client that cuts the middle out of a
	// long result leaves it (see [bothEnds]).
	note := fmt.Sprintf("[%s not shown; %s (path %s, pattern './*', type any) pages through the top level, and a subdirectory's %s shows its contents]\n", pluralNoun(omitted, "more entry"), f.find, abs, f.view)
	return note + b.String() + note
}
