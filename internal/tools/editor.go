package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
)

// editorCommand is str_replace_editor's command.
type editorCommand string

var editorCommands = []any{"view", "create", "str_replace", "insert", "undo_edit"}

// EditorArgs are the arguments of str_replace_editor, the single file tool of
// --anthropic-compat. Which ones apply depends on Command.
type EditorArgs struct {
	Command    editorCommand `json:"command" jsonschema:"What to do: view, create, str_replace, insert or undo_edit."`
	Path       string        `json:"path" jsonschema:"File or directory to work on: an absolute path, or relative to the working directory."`
	ViewRange  lineRange     `json:"view_range,omitempty" jsonschema:"view: lines to show as [start, end], numbered from 1, both included; end -1 means to the end of the file. Without it a file shows its first 2000 lines."`
	FileText   *string       `json:"file_text,omitempty" jsonschema:"create: the whole content of the file, written exactly as given."`
	OldStr     *string       `json:"old_str,omitempty" jsonschema:"str_replace: exact text to replace, copied from the file with its whitespace and indentation, without view's line numbers. It must occur exactly once unless replace_all is set."`
	NewStr     *string       `json:"new_str,omitempty" jsonschema:"str_replace: text to put in place of old_str (empty or omitted deletes it). insert: the text to insert."`
	ReplaceAll bool          `json:"replace_all,omitempty" jsonschema:"str_replace: replace every occurrence of old_str instead of requiring exactly one."`
	InsertLine *int          `json:"insert_line,omitempty" jsonschema:"insert: the line after which to insert; 0 inserts before the first line."`
	InsertText *string       `json:"insert_text,omitempty" jsonschema:"insert: the text to insert, if not given in new_str."`
}

const editorDescription = "View, create and edit files. The command parameter picks the operation:\n" +
	"- view: a text file comes back as numbered lines in `cat -n` format (line number right-aligned in 6 columns, a tab, the line); the numbers are not part of the file. Without view_range the first 2000 lines are shown, with a note saying how to see more (one call shows at most %[2]d characters; the note names the range that continues); view_range [start, end] shows those lines (end -1: to the end; an end past the last line is clamped and the note says so). Lines over 2000 characters are cut with a note. A directory lists two levels deep (directories end in /, symlinks show as name -> target, .git and node_modules skipped). PNG, JPEG, GIF and WebP files come back as images; SVG is text. Binary files, FIFOs and devices are refused.\n" +
	"- create: write file_text to path, creating parent directories or overwriting the file (an existing file keeps its mode). The write is atomic.\n" +
	"- str_replace: replace old_str with new_str. old_str must match the file exactly, whitespace included, and occur exactly once (include surrounding lines to make it unique) unless replace_all is set. An empty or omitted new_str deletes old_str. An old_str with \\n line endings matches a file with \\r\\n endings; the file keeps its line endings, BOM, encoding and final newline.\n" +
	"- insert: insert new_str after line insert_line (0: before the first line).\n" +
	"- undo_edit: undo the last create, str_replace or insert of path made in this session, if the file still holds what that edit wrote.\n" +
	"%[1]sEach edit shows the edited lines with their numbers; when old_str is not found, the error shows the closest lines with the differences quoted."

func addEditor(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "str_replace_editor",
		Title:       "View, create and edit files",
		Description: fmt.Sprintf(editorDescription, ifViewRule(h, "View a file (or create it) in this session before str_replace or insert. ", ""), h.describedFileBudget()),
		InputSchema: optionalSchemaOf[EditorArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "View, create and edit files", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.editor)
}

func (h *handlers) editor(ctx context.Context, req *mcp.CallToolRequest, in EditorArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	if err := checkEditorArgs(in); err != nil {
		return nil, nil, err
	}
	var s string
	switch in.Command {
	case "view":
		res, err := h.viewPath(ctx, sess, in.Path, in.ViewRange, false)
		return res, nil, err
	case "create":
		s, err = h.create(sess, in.Path, *in.FileText)
	case "str_replace":
		s, err = h.replace(ctx, sess, in.Path, *in.OldStr, deref(in.NewStr), in.ReplaceAll)
	case "insert":
		t := in.NewStr
		if t == nil || *t == "" && in.InsertText != nil {
			t = in.InsertText
		}
		s, err = h.insert(sess, in.Path, *in.InsertLine, *t)
	case "undo_edit":
		s, err = h.undo(sess, in.Path)
	}
	if err != nil {
		return nil, nil, err
	}
	return text(s), nil, nil
}

// checkEditorArgs refuses a command without an argument it needs, or with one that belongs
// to another command: a create without file_text must not empty the file, and a stray
// argument usually means the model meant a different command.
func checkEditorArgs(in EditorArgs) error {
	switch in.Command {
	case "view", "create", "str_replace", "insert", "undo_edit":
	default:
		return errorf(CodeInvalidArgument, "unknown command %q: use view, create, str_replace, insert or undo_edit", in.Command)
	}
	switch {
	case in.Command == "create" && in.FileText == nil:
		return errorf(CodeInvalidArgument, "file_text is required for create: give the whole content of the file (\"\" for an empty file); nothing was written")
	case in.Command == "str_replace" && in.OldStr == nil:
		return errorf(CodeInvalidArgument, "old_str is required for str_replace: give the exact text to replace, copied from the file")
	case in.Command == "insert" && in.InsertLine == nil:
		return errorf(CodeInvalidArgument, "insert_line is required for insert: the line after which to insert (0 inserts before the first line)")
	case in.Command == "insert" && in.NewStr == nil && in.InsertText == nil:
		return errorf(CodeInvalidArgument, "new_str (or insert_text) is required for insert: the text to insert")
	}
	// Each argument, whether it was given, and the commands it belongs to.
	for _, a := range []struct {
		name  string
		given bool
		cmds  []editorCommand
	}{
		{"view_range", in.ViewRange != nil, []editorCommand{"view"}},
		{"file_text", in.FileText != nil, []editorCommand{"create"}},
		{"old_str", in.OldStr != nil, []editorCommand{"str_replace"}},
		{"replace_all", in.ReplaceAll, []editorCommand{"str_replace"}},
		{"new_str", in.NewStr != nil, []editorCommand{"str_replace", "insert"}},
		{"insert_line", in.InsertLine != nil, []editorCommand{"insert"}},
		{"insert_text", in.InsertText != nil, []editorCommand{"insert"}},
	} {
		if a.given && !slices.Contains(a.cmds, in.Command) {
			return errorf(CodeInvalidArgument, "%s does not apply to %s (it is for %s); leave it out, or use the command it belongs to",
				a.name, in.Command, strings.Join(stringsOf(a.cmds), " and "))
		}
	}
	return nil
}

func stringsOf(cs []editorCommand) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// insert is str_replace_editor's insert.
func (h *handlers) insert(sess *session.Session, path string, after int, t string) (string, error) {
	abs, err := sess.ResolveWrite(path)
	if err != nil {
		return "", err
	}
	e, err := files.Insert(abs, after, t, h.editOptions(sess, abs))
	if err != nil {
		return "", h.fileError(err, path, sess)
	}
	h.wrote(sess, abs, e.Old, true, e.New)
	where := fmt.Sprintf("after line %d", after)
	if after == 0 {
		where = "at the top"
	}
	s := fmt.Sprintf("Inserted %s %s of %s (now %s). The edited region reads:\n%s", plural(e.Last-e.First+1, "line"), where, abs, files.LineSpan(e.First, e.Last), e.Snippet)
	s += endingsNote("The text", e.CR, e.CRLF)
	if e.ModeLost != "" {
		s += "\nNote: " + e.ModeLost + "."
	}
	return s + heldNote(e.Held), nil
}

// undo is str_replace_editor's undo_edit.
func (h *handlers) undo(sess *session.Session, path string) (string, error) {
	abs, err := sess.ResolveWrite(path)
	if err != nil {
		return "", err
	}
	c, ok := sess.LastChange(abs)
	if !ok {
		return "", errorf(CodeInvalidArgument, "there is no edit of %s in this session to undo", abs)
	}
	if err := files.Restore(sess.OpenWrite, abs, c.Old, c.Existed, c.Wrote, h.Config.MaxFileSize); err != nil {
		if errors.Is(err, files.ErrStale) {
			return "", fmt.Errorf("%w; view the file and fix it with str_replace", err)
		}
		return "", h.fileError(err, path, sess)
	}
	sess.DropLastChange(abs)
	if !c.Existed {
		return fmt.Sprintf("Undid the last edit of %s: that edit created the file, so it was removed.", abs), nil
	}
	sess.MarkSeen(abs, files.ContentDigest(c.Old))
	sess.Remember(abs, c.Old)
	return fmt.Sprintf("Undid the last edit of %s: it holds its previous content again (%s).", abs, byteCount(int64(len(c.Old)))), nil
}
