package tools

import (
	"fmt"

	"github.com/mjkoo/boris/internal/shell"
)

// Tool sets (--tools).
const (
	toolsBoris      = "boris"
	toolsClaudeCode = "claude-code"
	toolsCodex      = "codex"
)

// face names the tools and parameters that hints in results point to, so that a hint
// shown by a Claude Code-named tool names Claude Code's tools. The packages below tools
// report facts; the words the model reads are chosen here.
type face struct {
	bash, view           string // the tools that run a command and read a file
	viewed               string // what reading a file with view is called: "viewed"
	oldArg, newArg       string // the edit tool's parameters for the text replaced and put in its place
	emptyOld             string // the error of an edit with an empty old text
	taskOutput, taskKill string // tools that read and stop a background task
	taskIDArg            string // their parameter naming the task
	taskList             string // the tool that lists tasks, or ""
	grep, find           string // the search tools
	waitHint             string // how to wait for more output, after the task id
	// more says how to ask for the lines from line first on, n at a time.
	more func(first, n int) string
	// lines says how to read lines first to last of the file at path.
	lines func(path string, first, last int64) string
	// start names a range starting at line n: "view_range start 5".
	start func(n int) string
	// readPart says what to read of a file too large to read (whole, when it may be
	// viewed in part); it follows the size and limit.
	readPart func(whole bool) string
	// include says how to search what a search skipped, by reason.
	include struct{ ignored, deps, hidden string }
}

var borisFace = face{
	bash: "bash", view: "view", viewed: "viewed", oldArg: "old_str", newArg: "new_str",
	emptyOld:   "old_str is empty: give the exact text to replace, copied from the file (to add lines without replacing any, make old_str a line next to where they go and repeat it in new_str with them; to write a whole file, use create_file)",
	taskOutput: "task_output", taskKill: "task_kill", taskIDArg: "task_id", taskList: "task_list", grep: "grep", find: "find", waitHint: ", wait_ms to wait for more",
	more: func(first, n int) string { return fmt.Sprintf("view_range [%d, %d]", first, first+n-1) },
	lines: func(path string, first, last int64) string {
		return fmt.Sprintf("view (path %s, view_range [%d, %d])", path, first, last)
	},
	start: func(n int) string { return fmt.Sprintf("view_range start %d", n) },
	readPart: func(whole bool) string {
		if whole {
			return " for a whole view; view part of it with view_range [start, end], or search it with grep"
		}
		return "; view part of it with view_range, or search it with grep"
	},
	include: struct{ ignored, deps, hidden string }{
		"(no_ignore: true includes them)", "(no_ignore: true, or a path inside one, includes them)", "(hidden: true includes them)",
	},
}

// editorFace is borisFace for the one str_replace_editor tool (--anthropic-compat), whose
// commands insert lines and create files.
var editorFace = func() face {
	f := borisFace
	f.emptyOld = "old_str is empty: give the exact text to replace, copied from the file (to add lines without replacing any, use the insert command; to write a whole file, the create command)"
	return f
}()

var claudeFace = face{
	bash: "Bash", view: "Read", viewed: "read", oldArg: "old_string", newArg: "new_string",
	emptyOld:   "old_string is empty: give the exact text to replace, copied from the file (to write a whole file, use Write)",
	taskOutput: "BashOutput", taskKill: "KillShell", taskIDArg: "bash_id", grep: "Grep", find: "Glob",
	more: func(first, n int) string { return fmt.Sprintf("offset %d, limit %d", first, n) },
	lines: func(path string, first, last int64) string {
		return fmt.Sprintf("Read (file_path %s, offset %d, limit %d)", path, first, last-first+1)
	},
	start: func(n int) string { return fmt.Sprintf("offset %d", n) },
	readPart: func(whole bool) string {
		if whole {
			return " to read at once; Read part of it with offset and limit, or search it with Grep"
		}
		return "; Read part of it with offset and limit, or search it with Grep"
	},
	include: struct{ ignored, deps, hidden string }{
		"(Bash with grep -r or find searches them)", "(a path inside one searches it)", "(Bash with grep -r or find searches them)",
	},
}

// codexFace names Codex's tools: it has no tool to read a file or search, so hints name
// shell commands run with exec_command.
var codexFace = face{
	bash: "exec_command", viewed: "read", oldArg: "the - lines", newArg: "the + lines",
	emptyOld:   "a chunk has no lines to find: give the lines to change as - lines and their context as space lines",
	taskOutput: "write_stdin", taskKill: "write_stdin with chars \"\\u0003\"", taskIDArg: "session_id", grep: "exec_command with rg", find: "exec_command with rg --files",
	waitHint: ", yield_time_ms to wait for more",
	more:     func(first, n int) string { return fmt.Sprintf("sed -n '%d,%dp'", first, first+n-1) },
	lines: func(path string, first, last int64) string {
		return fmt.Sprintf("exec_command: sed -n '%d,%dp' %s", first, last, shell.Quote(path))
	},
	start: func(n int) string { return fmt.Sprintf("line %d", n) },
	readPart: func(bool) string {
		return "; read part of it with exec_command (sed -n 'A,Bp' FILE), or search it with rg"
	},
	include: struct{ ignored, deps, hidden string }{
		"(exec_command with rg --no-ignore searches them)", "(exec_command with rg searches them)", "(exec_command with rg --hidden searches them)",
	},
}

// omitted says how to read what a truncated stream left out: with the file tool when
// whole lines were, else with a shell command.
func (f *face) omitted(o shell.Omitted) string {
	if f.view == "" {
		return f.bash + ": " + o.Command()
	}
	if o.FirstLine > 0 {
		return f.lines(o.Path, o.FirstLine, o.LastLine) + " or " + f.bash + ": " + o.Command()
	}
	return f.bash + ": " + o.Command()
}

// face returns the naming of the tool set this server offers.
func (h *handlers) face() *face {
	switch {
	case h.Config.Tools == toolsClaudeCode:
		return &claudeFace
	case h.Config.Tools == toolsCodex:
		return &codexFace
	case h.Config.AnthropicCompat:
		return &editorFace
	}
	return &borisFace
}
