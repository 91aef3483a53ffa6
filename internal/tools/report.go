package tools

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/watch"
)

// report says how calls to one tool read to the people following Boris, in the live view
// and the audit log. Each row of the tool table carries one, so that adding a tool is one
// row: the live view and the audit log know no tool or argument by name.
type report struct {
	// shows is the argument a call is summarized by, when one is enough: "path".
	shows string
	// summary makes the one-line summary from several arguments instead.
	summary func(callArgs) string
	// diff renders the change a successful call made; nil for tools that change no file.
	diff func(callArgs) string
	// logged are the arguments the audit log shows as they are: names, commands, numbers.
	// Every other argument (file contents, edit strings) it shows only as its length.
	logged []string
	// quiet reports whether the result's text is output or a file's content rather than
	// a line saying what the call did; nil means it never is.
	quiet func(callArgs) bool
	// stoppable reports whether the person watching may stop the call (it runs a
	// command until it ends); nil means never.
	stoppable func(callArgs) bool
}

// CallView is a tool call as people see it: its summary and diff in the live view, the
// arguments the audit log may show. It implements [watch.ToolCall].
type CallView struct {
	report *report
	raw    json.RawMessage
	args   callArgs // decoded from raw when first needed
}

// ViewCall returns how a call of the named tool with raw arguments reads. An unknown
// tool's call has no summary, no diff, and every argument logged only as its length.
func ViewCall(tool string, raw json.RawMessage) *CallView {
	for i := range table {
		if table[i].name == tool {
			return &CallView{report: &table[i].report, raw: raw}
		}
	}
	return &CallView{report: &report{}, raw: raw}
}

var _ watch.ToolCall = (*CallView)(nil)

// Summary is the call in one line.
func (c *CallView) Summary() string {
	switch {
	case c.report.summary != nil:
		return c.report.summary(c.decoded())
	case c.report.shows != "":
		return c.decoded().str(c.report.shows)
	}
	return ""
}

// Diff is the change the call made, if it succeeded; "" for a call that changes no file.
func (c *CallView) Diff() string {
	if c.report.diff == nil {
		return ""
	}
	return c.report.diff(c.decoded())
}

// ResultLine reports whether the first line of the result's text says what the call did.
func (c *CallView) ResultLine() bool {
	return c.report.quiet == nil || !c.report.quiet(c.decoded())
}

// Stoppable reports whether the person watching may stop the call.
func (c *CallView) Stoppable() bool {
	return c.report.stoppable != nil && c.report.stoppable(c.decoded())
}

// Logged reports whether the audit log may show the argument's value; it shows any
// other only as its length.
func (c *CallView) Logged(arg string) bool { return slices.Contains(c.report.logged, arg) }

func (c *CallView) decoded() callArgs {
	if c.args == nil {
		c.args = callArgs{}
		_ = json.Unmarshal(c.raw, &c.args) // arguments that are not an object show nothing
	}
	return c.args
}

// callArgs are a call's arguments as sent, not yet checked against the tool's schema.
type callArgs map[string]any

// str is the string argument k, or "".
func (a callArgs) str(k string) string {
	s, _ := a[k].(string)
	return s
}

// flag is the boolean argument k.
func (a callArgs) flag(k string) bool {
	b, _ := a[k].(bool)
	return b
}

// line is the integer argument k, or "".
func (a callArgs) line(k string) string {
	if f, ok := a[k].(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

// Summaries and diffs used by the table's rows.

func quiet(callArgs) bool { return true }

// commandLine summarizes bash and Bash: the command, and whether it went to the background.
func commandLine(a callArgs) string {
	s := a.str("command")
	if a.flag("run_in_background") {
		s += "  (in the background)"
	}
	return s
}

// foreground reports whether bash or Bash runs its command until it ends.
func foreground(a callArgs) bool { return !a.flag("run_in_background") }

// searchLine summarizes grep, find and their Claude Code twins: pattern, path, glob.
func searchLine(a callArgs) string {
	s := a.str("pattern")
	if s == "" {
		return a.str("path")
	}
	if p := a.str("path"); p != "" {
		s += "  in " + p
	}
	if g := a.str("glob"); g != "" {
		s += "  glob " + g
	}
	return s
}

// inputLine summarizes task_input: the task, and what is typed at it, as the person
// watching would see it typed (the audit log shows only its length).
func inputLine(a callArgs) string {
	s := a.str("task_id")
	if in := a.str("input"); in != "" {
		s += "  " + strconv.Quote(in)
	}
	if keys, ok := a["keys"].([]any); ok && len(keys) > 0 {
		s += fmt.Sprintf("  keys %v", keys)
	}
	return s
}

func editorLine(a callArgs) string {
	if cmd, path := a.str("command"), a.str("path"); cmd != "" && path != "" {
		return cmd + " " + path
	}
	return a.str("path")
}

func editorQuiet(a callArgs) bool { return a.str("command") == "view" }

func taskStopLine(a callArgs) string {
	if id := a.str("task_id"); id != "" {
		return id
	}
	return a.str("shell_id")
}

func strReplaceDiff(a callArgs) string {
	return watch.Diff(a.str("path"), watch.Hunk{Old: a.str("old_str"), New: a.str("new_str")})
}

func createFileDiff(a callArgs) string {
	return watch.Diff(a.str("path"), watch.Hunk{Where: "(new content)", New: a.str("content")})
}

func editorDiff(a callArgs) string {
	path := a.str("path")
	switch a.str("command") {
	case "str_replace":
		return watch.Diff(path, watch.Hunk{Old: a.str("old_str"), New: a.str("new_str")})
	case "create":
		return watch.Diff(path, watch.Hunk{Where: "(new content)", New: a.str("file_text")})
	case "insert":
		text := a.str("new_str")
		if text == "" {
			text = a.str("insert_text") // as the handler takes it
		}
		where := ""
		if n := a.line("insert_line"); n != "" {
			where = "after line " + n
		}
		return watch.Diff(path, watch.Hunk{Where: where, New: text})
	}
	return ""
}

func writeDiff(a callArgs) string {
	return watch.Diff(a.str("file_path"), watch.Hunk{Where: "(new content)", New: a.str("content")})
}

func editDiff(a callArgs) string {
	h := watch.Hunk{Old: a.str("old_string"), New: a.str("new_string")}
	if h.Old == "" {
		h.Where = "(new content)" // an empty old_string creates the file
	}
	return watch.Diff(a.str("file_path"), h)
}

func multiEditDiff(a callArgs) string {
	edits, _ := a["edits"].([]any)
	hunks := make([]watch.Hunk, 0, len(edits))
	for _, e := range edits {
		m, _ := e.(map[string]any)
		hunks = append(hunks, watch.Hunk{Old: callArgs(m).str("old_string"), New: callArgs(m).str("new_string")})
	}
	return watch.Diff(a.str("file_path"), hunks...)
}

// execLine summarizes exec_command: the command, and where it runs when not in the
// working directory.
func execLine(a callArgs) string {
	s := a.str("cmd")
	if w := a.str("workdir"); w != "" {
		s += "  (in " + w + ")"
	}
	return s
}

// stdinLine summarizes write_stdin: the session, and what was typed only by its length,
// as it may be a password.
func stdinLine(a callArgs) string {
	s := "session " + a.line("session_id")
	if n := len(a.str("chars")); n > 0 {
		s += fmt.Sprintf("  (typed %d chars)", n)
	}
	return s
}

// patchLine summarizes apply_patch: the files its sections name.
func patchLine(a callArgs) string {
	p, err := files.ParsePatch(a.str("input"))
	if err != nil {
		return "(a patch that does not parse)"
	}
	var parts []string
	for _, op := range p.Ops {
		s := string("ADM"[op.Kind]) + " " + op.Path
		if op.MoveTo != "" {
			s += " -> " + op.MoveTo
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// patchDiff shows apply_patch's change: each file's chunks, an added file's content, a
// deleted file.
func patchDiff(a callArgs) string {
	p, err := files.ParsePatch(a.str("input"))
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, op := range p.Ops {
		var hunks []watch.Hunk
		switch op.Kind {
		case files.OpAdd:
			hunks = []watch.Hunk{{Where: "(new content)", New: op.Content}}
		case files.OpDelete:
			hunks = []watch.Hunk{{Where: "(deleted)"}}
		}
		for _, c := range op.Chunks {
			hunks = append(hunks, watch.Hunk{Where: c.Context, Old: joinLines(c.Old), New: joinLines(c.New)})
		}
		b.WriteString(watch.Diff(cmp.Or(op.MoveTo, op.Path), hunks...))
	}
	return b.String()
}

// joinLines is lines, each ending in a newline.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
