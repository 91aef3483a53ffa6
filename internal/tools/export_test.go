package tools

import (
	"time"

	"github.com/mjkoo/boris/internal/clients"
)

// ClaudeTwins names, for each of Claude Code's tools, the Boris tool it shares its
// implementation with (docs/tools.md shows both faces in one table).
var ClaudeTwins = map[string]string{
	"Bash": "bash", "BashOutput": "task_output", "TaskOutput": "task_output", "KillShell": "task_kill",
	"TaskStop": "task_kill", "Read": "view", "Write": "create_file", "Edit": "str_replace",
	"MultiEdit": "str_replace", "Glob": "find", "Grep": "grep",
}

// CodexTwins names, for each of Codex's tools, what in Boris it is built on.
var CodexTwins = map[string]string{
	"exec_command": "bash", "write_stdin": "task_output", "apply_patch": "str_replace", "view_image": "view",
}

// CodexVersion is the Codex CLI release whose tool definitions the codex face matches.
const CodexVersion = codexVersion

// ShortenProfileDeadlines makes every profile's deadline that is not 0 last d instead,
// until the test ends.
func ShortenProfileDeadlines(t interface{ Cleanup(func()) }, d time.Duration) {
	old := profileDeadline
	profileDeadline = func(p clients.Profile) time.Duration {
		if p.Deadline == 0 {
			return 0
		}
		return d
	}
	t.Cleanup(func() { profileDeadline = old })
}
