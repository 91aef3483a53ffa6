package tools

// table lists every tool Boris can offer, in the order tools/list shows them. Names,
// descriptions and schemas are API: testdata/tools_list*.golden snapshot them. Each row
// also says how the tool's calls read in the live view and the audit log (see report):
// adding a tool is adding its row.
var table = []entry{
	{"bash", shellTools, addBash, report{summary: commandLine, quiet: quiet, stoppable: foreground,
		logged: []string{"command", "timeout", "run_in_background"}}},
	{"task_output", shellTools, addTaskOutput, report{shows: "task_id", quiet: quiet, logged: []string{"task_id", "wait_ms", "until", "screen"}}},
	{"task_input", shellTools, addTaskInput, report{summary: inputLine, quiet: quiet, logged: []string{"task_id", "keys", "wait_ms"}}},
	{"task_kill", shellTools, addTaskKill, report{shows: "task_id", quiet: quiet, logged: []string{"task_id"}}},
	{"task_list", shellTools, addTaskList, report{quiet: quiet}},
	{"view", split, addView, report{shows: "path", quiet: quiet, logged: []string{"path", "view_range"}}},
	{"str_replace", split, addStrReplace, report{shows: "path", diff: strReplaceDiff,
		logged: []string{"path", "replace_all"}}},
	{"create_file", split, addCreateFile, report{shows: "path", diff: createFileDiff, logged: []string{"path"}}},
	{"str_replace_editor", compat, addEditor, report{summary: editorLine, diff: editorDiff, quiet: editorQuiet,
		logged: []string{"command", "path", "view_range", "replace_all", "insert_line"}}},
	{"grep", always, addGrep, report{summary: searchLine,
		logged: []string{"pattern", "path", "glob", "type", "output_mode"}}},
	{"find", always, addFind, report{summary: searchLine, logged: []string{"pattern", "path", "type"}}},

	// --tools claude-code: Claude Code's names and parameters, on the same handlers.
	{"Bash", ccShell, addCCBash, report{summary: commandLine, quiet: quiet, stoppable: foreground,
		logged: []string{"command", "timeout", "run_in_background"}}},
	{"BashOutput", ccShell, addBashOutput, report{shows: "bash_id", quiet: quiet, logged: []string{"bash_id"}}},
	{"KillShell", ccShell, addKillShell, report{shows: "shell_id", quiet: quiet, logged: []string{"shell_id"}}},
	{"TaskOutput", ccShell, addTaskOutputAlias, report{shows: "task_id", quiet: quiet,
		logged: []string{"task_id", "block", "timeout"}}},
	{"TaskStop", ccShell, addTaskStop, report{summary: taskStopLine, quiet: quiet, logged: []string{"task_id", "shell_id"}}},
	{"Read", ccFiles, addRead, report{shows: "file_path", quiet: quiet, logged: []string{"file_path", "offset", "limit"}}},
	{"Write", ccFiles, addWrite, report{shows: "file_path", diff: writeDiff, logged: []string{"file_path"}}},
	{"Edit", ccFiles, addEdit, report{shows: "file_path", diff: editDiff, logged: []string{"file_path", "replace_all"}}},
	{"MultiEdit", ccFiles, addMultiEdit, report{shows: "file_path", diff: multiEditDiff, logged: []string{"file_path"}}},
	{"Glob", ccFiles, addGlob, report{summary: searchLine, logged: []string{"pattern", "path"}}},
	{"Grep", ccFiles, addCCGrep, report{summary: searchLine,
		logged: []string{"pattern", "path", "glob", "type", "output_mode"}}},

	// --tools codex: Codex's names and parameters, on the same core.
	{"exec_command", cxShell, addExecCommand, report{summary: execLine, quiet: quiet,
		logged: []string{"cmd", "workdir", "tty", "yield_time_ms", "max_output_tokens", "sandbox_permissions", "prefix_rule", "shell", "login"}}},
	{"write_stdin", cxShell, addWriteStdin, report{summary: stdinLine, quiet: quiet,
		logged: []string{"session_id", "yield_time_ms", "max_output_tokens"}}},
	{"apply_patch", cxFiles, addApplyPatch, report{summary: patchLine, diff: patchDiff}},
	{"view_image", cxFiles, addViewImage, report{shows: "path", quiet: quiet, logged: []string{"path"}}},

	// Checkpoints and rewind, under the same names in every face (checkpoint.go).
	{"checkpoint_list", undo, addCheckpointList, report{quiet: quiet, logged: []string{"limit"}}},
	{"checkpoint_diff", undo, addCheckpointDiff, report{summary: checkpointDiffLine, quiet: quiet, logged: []string{"id", "to"}}},
	{"rewind", undo, addRewind, report{summary: rewindLine, logged: []string{"to", "paths", "dry_run", "force"}}},
	{"checkpoint", undo, addCheckpoint, report{shows: "label", logged: []string{"label"}}},
}
