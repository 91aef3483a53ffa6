package tools

// table lists every tool Boris can offer, in the order tools/list shows them. Names,
// descriptions and schemas are API: testdata/tools_list*.golden snapshot them.
var table = []entry{
	{"grep", always, addGrep},
	{"find", always, addFind},
}
