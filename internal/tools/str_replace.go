package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
)

// StrReplaceArgs are the arguments of str_replace.
type StrReplaceArgs struct {
	Path       string `json:"path" jsonschema:"File to edit: an absolute path, or relative to the working directory."`
	OldStr     string `json:"old_str" jsonschema:"Exact text to replace, copied from the file with its whitespace and indentation, without view's line numbers. It must occur exactly once unless replace_all is set."`
	NewStr     string `json:"new_str,omitempty" jsonschema:"Text to put in its place. Empty or omitted deletes old_str."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_str instead of requiring exactly one; the result says how many were replaced."`
}

const strReplaceDescription = "Replace text in a file.\n\n" +
	"old_str must match the file exactly, whitespace and indentation included, and occur exactly once: include enough surrounding lines to make it unique, or set replace_all to replace every occurrence. " +
	"new_str takes its place; an empty or omitted new_str deletes old_str. " +
	"Only the matched text changes: an old_str written with \\n line endings also matches a file with \\r\\n endings, and the file keeps its line endings, BOM, encoding, final newline and mode. The write is atomic.\n\n" +
	"%s" +
	"The result shows the edited lines with their numbers. When old_str is not found, the error shows the closest lines of the file with the differences quoted; when it matches several places, their line numbers."

func addStrReplace(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:  "str_replace",
		Title: "Replace text in a file",
		Description: fmt.Sprintf(strReplaceDescription, ifViewRule(h,
			"View the file (or write it) in this session before editing it. If it changed on disk since, the edit is still made when old_str matches exactly once, and the result says so.\n\n",
			"If the file changed on disk since you last viewed it, the edit is still made when old_str matches exactly once, and the result says so.\n\n")),
		InputSchema: schemaOf[StrReplaceArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Replace text in a file", DestructiveHint: new(true), OpenWorldHint: new(false)},
	}, h.strReplace)
}

func (h *handlers) strReplace(ctx context.Context, req *mcp.CallToolRequest, in StrReplaceArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	s, err := h.replace(ctx, sess, in.Path, in.OldStr, in.NewStr, in.ReplaceAll)
	if err != nil {
		return nil, nil, err
	}
	return text(s), nil, nil
}

// replace is str_replace, shared with str_replace_editor.
func (h *handlers) replace(ctx context.Context, sess *session.Session, path, old, new string, all bool) (string, error) {
	abs, err := sess.ResolveWrite(path)
	if err != nil {
		return "", err
	}
	e, err := files.Replace(ctx, abs, old, new, all, h.editOptions(sess, abs))
	if err != nil {
		return "", h.fileError(err, path, sess)
	}
	if !e.NoOp {
		h.wrote(sess, abs, e.Old, true, e.New)
	}
	var b strings.Builder
	if e.Changed {
		fmt.Fprintf(&b, "Note: %s had changed on disk since you last viewed it; old_str still matched exactly once, so the edit was made. View the file to see the other changes.\n", abs)
	}
	switch {
	case e.NoOp:
		fmt.Fprintf(&b, "No change: old_str and new_str are the same, so %s was not rewritten. old_str matches at line %s:\n%s", abs, files.JoinLines(e.Lines), e.Snippet)
		return b.String(), nil
	case e.Count > 1:
		fmt.Fprintf(&b, "Replaced %d occurrences in %s, on lines %s (line numbers after the edit).", e.Count, abs, files.JoinLines(e.Lines))
	case e.Last < e.First:
		fmt.Fprintf(&b, "Deleted old_str from %s at line %d. The lines around it now read:\n%s", abs, e.First, e.Snippet)
	default:
		fmt.Fprintf(&b, "Replaced 1 occurrence in %s (now %s). The edited region reads:\n%s", abs, files.LineSpan(e.First, e.Last), e.Snippet)
	}
	b.WriteString(endingsNote("new_str", e.CR, e.CRLF))
	if e.ModeLost != "" {
		fmt.Fprintf(&b, "\nNote: %s.", e.ModeLost)
	}
	b.WriteString(heldNote(e.Held))
	return b.String(), nil
}

// heldNote warns, when held names processes that had an edited file open for writing,
// that what they write from now on is lost: the edit replaced the file with a new one.
func heldNote(held string) string {
	if held == "" {
		return ""
	}
	return "\nNote: " + held + " had this file open for writing. The edit replaced the file with a new one (writes are atomic), so what it writes from now on goes to the old file, which no name leads to, and is lost: stop it before editing a file it writes (a log, say), or edit once it has ended."
}

// ifViewRule returns on when --require-view-before-edit is in force, else off: descriptions
// state only rules that hold.
func ifViewRule(h *handlers, on, off string) string {
	if h.Config.RequireViewBeforeEdit {
		return on
	}
	return off
}

// editOptions are the limits and view-tracking state for an edit of abs.
func (h *handlers) editOptions(sess *session.Session, abs string) files.EditOptions {
	o := files.EditOptions{
		MaxFileSize: h.Config.MaxFileSize,
		RequireSeen: h.Config.RequireViewBeforeEdit,
		Previous:    sess.Remembered(abs),
		Open:        sess.OpenWrite,
	}
	if d, ok := sess.Seen(abs); ok {
		o.Seen = &d
	}
	return o
}

// wrote records a successful write of content to abs: the model now knows the file as it
// is, and in compat mode the edit can be undone.
func (h *handlers) wrote(sess *session.Session, abs string, old []byte, existed bool, content []byte) {
	h.Indexes.Wrote(abs) // the next grep need not read it
	sess.MarkSeen(abs, files.ContentDigest(content))
	sess.Remember(abs, content)
	if h.Config.AnthropicCompat {
		sess.RecordChange(session.Change{Path: abs, Old: old, Existed: existed, Wrote: files.ContentDigest(content)})
	}
}

// endingsNote says that what was written got the file's CR or CRLF line endings.
func endingsNote(what string, cr, crlf bool) string {
	switch {
	case cr:
		return "\n(" + what + " was written with CR line endings, like the rest of the file.)"
	case crlf:
		return "\n(" + what + " was written with CRLF line endings, like the rest of the file.)"
	}
	return ""
}
