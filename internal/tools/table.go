package tools

// table lists every tool Boris can offer, in the order tools/list shows them. Names,
// descriptions and schemas are API: testdata/tools_list*.golden snapshot them.
var table = []entry{
	{"bash", shellTools, addBash},
	{"task_output", shellTools, addTaskOutput},
	{"task_input", shellTools, addTaskInput},
	{"task_kill", shellTools, addTaskKill},
	{"task_list", shellTools, addTaskList},
	{"view", split, addView},
	{"str_replace", split, addStrReplace},
	{"create_file", split, addCreateFile},
	{"str_replace_editor", compat, addEditor},
	{"grep", always, addGrep},
	{"find", always, addFind},

	// --tools claude-code: Claude Code's names and parameters, on the same handlers.
	{"Bash", ccShell, addCCBash},
	{"BashOutput", ccShell, addBashOutput},
	{"KillShell", ccShell, addKillShell},
	{"TaskOutput", ccShell, addTaskOutputAlias},
	{"TaskStop", ccShell, addTaskStop},
	{"Read", ccFiles, addRead},
	{"Write", ccFiles, addWrite},
	{"Edit", ccFiles, addEdit},
	{"MultiEdit", ccFiles, addMultiEdit},
	{"Glob", ccFiles, addGlob},
	{"Grep", ccFiles, addCCGrep},
}
