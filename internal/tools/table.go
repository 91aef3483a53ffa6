package tools

// table lists every tool Boris can offer, in the order tools/list shows them. Names,
// descriptions and schemas are API: testdata/tools_list*.golden snapshot them.
var table = []entry{
	{"bash", shellTools, addBash},
	{"task_output", shellTools, addTaskOutput},
	{"task_kill", shellTools, addTaskKill},
	{"task_list", shellTools, addTaskList},
}
