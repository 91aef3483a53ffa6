package server

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// randomValue returns a JSON value of a random shape, often the wrong one for a parameter.
func randomValue(r *rand.Rand, depth int) any {
	switch r.IntN(9) {
	case 0:
		return nil
	case 1:
		return r.IntN(3) == 0
	case 2:
		return r.NormFloat64() * 1e9
	case 3:
		return -r.IntN(1 << 20)
	case 4:
		return strings.Repeat("\u00e9\x00/..", r.IntN(40))
	case 5:
		return ""
	case 6:
		if depth > 2 {
			return "x"
		}
		var a []any
		for range r.IntN(4) {
			a = append(a, randomValue(r, depth+1))
		}
		return a
	case 7:
		if depth > 2 {
			return 0
		}
		return map[string]any{"k": randomValue(r, depth+1)}
	}
	return "/etc/../" + strings.Repeat("a", r.IntN(300))
}

// TestMalformedArguments sends 1,000 malformed argument payloads to the tools; every call
// must be answered (a tool error or a result, never a dropped connection) and the server
// must keep serving.
func TestMalformedArguments(t *testing.T) {
	cfg := newConfig(t)
	cfg.Timeout = 2_000_000_000
	cfg.AllowDirs = []string{cfg.Workdir} // random paths must not write outside the test's directory
	_, ts := start(t, cfg)
	cs, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list = %v, %v", list, err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	params := []string{"command", "path", "pattern", "old_str", "new_str", "view_range", "timeout",
		"run_in_background", "task_id", "content", "file_text", "insert_line", "output_mode", "glob", "bogus"}
	for i := range 1000 {
		tool := list.Tools[r.IntN(len(list.Tools))]
		args := map[string]any{}
		for range r.IntN(4) {
			args[params[r.IntN(len(params))]] = randomValue(r, 0)
		}
		// Keep commands harmless: only malformed shapes, never a real script.
		if s, ok := args["command"].(string); ok && tool.Name == "bash" {
			args["command"] = "true " + strings.Map(func(c rune) rune {
				if c >= 'a' && c <= 'z' {
					return c
				}
				return -1
			}, s)
		}
		if v, ok := args["run_in_background"].(bool); ok && v {
			args["run_in_background"] = false
		}
		var raw any = args
		if i%10 == 0 {
			raw = randomValue(r, 0) // not even an object
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.Name, Arguments: raw})
		if err != nil {
			// A non-object argument list is a malformed request: a protocol error is right.
			if _, isObj := raw.(map[string]any); isObj {
				t.Fatalf("call %d: %s(%v): protocol error %v, want a result", i, tool.Name, raw, err)
			}
			continue
		}
		if res == nil {
			t.Fatalf("call %d: %s(%v): no result", i, tool.Name, raw)
		}
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("server stopped answering after malformed calls: %v", err)
	}
}
