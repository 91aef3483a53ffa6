package tools

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// Tool sets (--tools).
const (
	toolsBoris      = "boris"
	toolsClaudeCode = "claude-code"
)

// face names the tools and parameters that hints in results point to, so that a hint
// shown by a Claude Code-named tool names Claude Code's tools.
type face struct {
	taskOutput, taskKill string // tools that read and stop a background task
	taskIDArg            string // their parameter naming the task
	taskList             string // the tool that lists tasks, or ""
	grep, find           string // the search tools
	waitHint             string // how to wait for more output, after the task id
	// more says how to ask for the lines from line first on, n at a time.
	more func(first, n int) string
	// output rewords the follow-ups named in truncated command output.
	output func(string) string
	// readPart says what to read of a file too large to read (whole, when it may be
	// viewed in part).
	readPart func(whole bool) string
	// include says how to search what a search skipped, by reason.
	include struct{ ignored, deps, hidden string }
}

var borisFace = face{
	taskOutput: "task_output", taskKill: "task_kill", taskIDArg: "task_id", taskList: "task_list", grep: "grep", find: "find", waitHint: ", wait_ms to wait for more",
	more:   func(first, n int) string { return fmt.Sprintf("view_range [%d, %d]", first, first+n-1) },
	output: func(s string) string { return s },
	readPart: func(whole bool) string {
		if whole {
			return "view part of it with view_range [start, end], or search it with grep"
		}
		return "view part of it with view_range, or search it with grep"
	},
	include: struct{ ignored, deps, hidden string }{
		"(no_ignore: true includes them)", "(no_ignore: true, or a path inside one, includes them)", "(hidden: true includes them)",
	},
}

var claudeFace = face{
	taskOutput: "BashOutput", taskKill: "KillShell", taskIDArg: "bash_id", grep: "Grep", find: "Glob",
	more:   func(first, n int) string { return fmt.Sprintf("offset %d, limit %d", first, n) },
	output: claudeFollowUp,
	readPart: func(bool) string {
		return "Read part of it with offset and limit, or search it with Grep"
	},
	include: struct{ ignored, deps, hidden string }{
		"(Bash with grep -r or find searches them)", "(a path inside one searches it)", "(Bash with grep -r or find searches them)",
	},
}

// viewFollowUp is the follow-up a truncation marker names for reading omitted lines,
// compiled when first needed rather than at every start.
var viewFollowUp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Read them with view \(path (\S+), view_range \[(\d+), (\d+)\]\) or bash:`)
})

// claudeFollowUp names Read and Bash in truncation markers instead of view and bash.
func claudeFollowUp(s string) string {
	re := viewFollowUp()
	if !re.MatchString(s) {
		return s
	}
	return re.ReplaceAllStringFunc(s, func(m string) string {
		g := re.FindStringSubmatch(m)
		first, _ := strconv.Atoi(g[2])
		last, _ := strconv.Atoi(g[3])
		return fmt.Sprintf("Read them with Read (file_path %s, offset %d, limit %d) or Bash:", g[1], first, last-first+1)
	})
}

// face returns the naming of the tool set this server offers.
func (h *handlers) face() *face {
	if h.Config.Tools == toolsClaudeCode {
		return &claudeFace
	}
	return &borisFace
}
