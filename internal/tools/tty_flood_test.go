package tools_test

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
)

// queryFlood puts its terminal in raw mode, asks it for the cursor position 20,000 times
// (80 KB of ESC [ 6 n) and reads none of the answers; then it waits, or ends.
const queryFlood = `python3 -c '
import os, sys, termios, tty, time
tty.setraw(0)
os.write(1, b"\x1b[6n" * 20000)
print("asked", flush=True)
time.sleep(float(sys.argv[1]))
' `

// TestTTYQueryFloodHoldsNothing: a program that floods its terminal with queries and reads
// no answer holds up no call, no kill, no end of its task and no end of the session: the
// answers that do not fit are dropped, and a dead program gets none.
func TestTTYQueryFloodHoldsNothing(t *testing.T) {
	for _, end := range []string{"timeout", "kill", "exit", "session"} {
		t.Run(end, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*testutil.Within)
			defer cancel()
			cs, srv := connect(t, testConfig(t), nil)
			callCtx := func(name string, args map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s %v: %v (within %v)", name, args, err, 2*testutil.Within)
				}
				return res
			}
			switch end {
			case "timeout": // in the foreground, until its timeout
				res := callCtx("bash", map[string]any{"command": queryFlood + "100", "tty": true, "timeout": 3000})
				if !strings.Contains(textOf(res), "timed out") {
					t.Errorf("bash: %s", textOf(res))
				}
			case "kill":
				id := floodTask(t, callCtx)
				if res := callCtx("task_kill", map[string]any{"task_id": id}); res.IsError {
					t.Fatalf("task_kill: %s", textOf(res))
				}
			case "exit": // it ends with its questions unanswered, and its task with it
				res := callCtx("bash", map[string]any{"command": queryFlood + "0", "tty": true, "timeout": 15000})
				if res.IsError || !strings.Contains(textOf(res), "asked") {
					t.Errorf("bash: %s", textOf(res))
				}
			case "session":
				floodTask(t, callCtx)
			}
			closed := make(chan struct{})
			go func() {
				_ = cs.Close()
				srv.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-ctx.Done():
				t.Fatalf("the session and server did not close within %v:\n%s", testutil.Within, screenGoroutines())
			}
			if g := screenGoroutines(); g != "" {
				t.Errorf("a screen's goroutines outlived the server:\n%s", g)
			}
		})
	}
}

// floodTask starts queryFlood in a terminal in the background and returns its task id
// once it has asked.
func floodTask(t *testing.T, call func(string, map[string]any) *mcp.CallToolResult) string {
	t.Helper()
	res := call("bash", map[string]any{"command": queryFlood + "100", "tty": true, "run_in_background": true})
	m := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(textOf(res))
	if res.IsError || m == nil {
		t.Fatalf("bash: %s", textOf(res))
	}
	if !strings.Contains(textOf(res), "asked") {
		res = call("task_output", map[string]any{"task_id": m[1], "until": "asked", "wait_ms": 30000})
		if !strings.Contains(textOf(res), "asked") {
			t.Fatalf("task_output: %s", textOf(res))
		}
	}
	return m[1]
}

// screenGoroutines returns the stacks of goroutines at work in a terminal's screen.
func screenGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "internal/term.(*Screen)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
