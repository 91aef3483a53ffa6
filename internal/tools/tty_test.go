package tools_test

import (
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/shell"
)

// ttyOut is the structured result of a terminal command or task.
type ttyOut struct {
	TaskID   string `json:"task_id"`
	Status   string `json:"status"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Reason   string `json:"reason"`
	Screen   string `json:"screen"`
}

// startTTY starts script in a terminal in the background and returns its task id and
// the pid of its shell, which it prints first (so its process group's id too).
func startTTY(t *testing.T, cs *mcp.ClientSession, script string) (string, int) {
	t.Helper()
	res, out := callFor[ttyOut](t, cs, "bash", map[string]any{"command": "echo pid=$$; " + script, "tty": true, "run_in_background": true})
	if res.IsError || out.TaskID == "" {
		t.Fatalf("bash tty: %s", textOf(res))
	}
	m := regexpPID.FindStringSubmatch(out.Stdout)
	if m == nil {
		t.Fatalf("no pid in %q", out.Stdout)
	}
	pid, _ := strconv.Atoi(m[1])
	return out.TaskID, pid
}

var regexpPID = regexp.MustCompile(`pid=(\d+)`)

// TestTTYTasksEndWithTheSession: closing the session, and shutting the server down, end
// every terminal task, the programs in them included.
func TestTTYTasksEndWithTheSession(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"session", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cs, srv := connect(t, testConfig(t), nil)
			_, shellPID := startTTY(t, cs, "PS1='$ ' exec bash --norc --noprofile -i")
			_, replPID := startTTY(t, cs, "exec python3 -q")
			if how == "session" {
				_ = cs.Close()
			}
			srv.Close()
			for _, pid := range []int{shellPID, replPID} {
				if shell.GroupAlive(pid) || processRunning(pid) {
					t.Errorf("terminal task %d survived the %s's end", pid, how)
				}
			}
		})
	}
}

// TestTTYKillEndsInteractiveShell: task_kill ends a terminal task even when its program
// ignores SIGTERM, as an interactive shell does.
func TestTTYKillEndsInteractiveShell(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	id, pid := startTTY(t, cs, "PS1='$ ' exec bash --norc --noprofile -i")
	res, out := callFor[ttyOut](t, cs, "task_kill", map[string]any{"task_id": id})
	if res.IsError || out.Running {
		t.Fatalf("task_kill: %s", textOf(res))
	}
	if !strings.Contains(out.Status, "SIGHUP") {
		t.Errorf("task_kill status %q, want the hang-up that ends an interactive shell at once", out.Status)
	}
	if processRunning(pid) {
		t.Errorf("shell %d still runs after task_kill", pid)
	}
}

// TestTTYLimit: past the cap on running terminal tasks, a new one is refused with a
// clear error, and background tasks without a terminal do not count towards it.
func TestTTYLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cs, _ := connect(t, cfg, nil)
	for range 8 {
		startTTY(t, cs, "exec cat")
	}
	res := call(t, cs, "bash", map[string]any{"command": "cat", "tty": true})
	if !res.IsError || !strings.Contains(textOf(res), "LIMIT_REACHED: too many terminal tasks running: 8 of 8; stop one with task_kill") {
		t.Errorf("ninth terminal task: %s", textOf(res))
	}
	if res := call(t, cs, "bash", map[string]any{"command": "sleep 100", "run_in_background": true}); res.IsError {
		t.Errorf("a background task without a terminal was refused: %s", textOf(res))
	}
}

// TestTTYFloodBoundedMemory: a program that prints 50 MB to its terminal is read to its
// end, its screen shows the last lines, no escape byte reaches the result, and the
// server's heap stays bounded.
func TestTTYFloodBoundedMemory(t *testing.T) {
	cs, _ := connect(t, testConfig(t), nil)
	var peak uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond) // sampling, not synchronisation
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	res, out := callFor[ttyOut](t, cs, "bash", map[string]any{
		"command": `head -c 50000000 /dev/zero | tr '\0' 'x' | fold -w 99 | sed 's/^/\x1b[32m/'; echo; echo THE END`,
		"tty":     true, "timeout": 600000,
	})
	close(done)
	wg.Wait()
	if res.IsError || out.ExitCode == nil || *out.ExitCode != 0 {
		t.Fatalf("flood: %s", textOf(res)[:min(2000, len(textOf(res)))])
	}
	text := textOf(res)
	if !strings.Contains(text, "THE END") || strings.ContainsRune(text, 0x1b) {
		t.Errorf("flood result lacks its end or has escape bytes: %q", text[len(text)-min(500, len(text)):])
	}
	if peak > 200<<20 {
		t.Errorf("heap reached %d MB while a terminal printed 50 MB", peak>>20)
	}
	t.Logf("peak heap %d MB", peak>>20)
}

// TestTTYCtrlCStopsSleep: Ctrl-C typed at a bash session in a terminal stops the sleep
// running in its foreground, and the session still answers. The sleep is known to own the
// terminal once a task_input that runs out of time names it as the foreground program.
func TestTTYCtrlCStopsSleep(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	id, _ := startTTY(t, cs, "PS1='$ ' exec bash --norc --noprofile -i")
	res, out := callFor[ttyOut](t, cs, "task_input", map[string]any{"task_id": id, "input": "sleep 100\n", "wait_ms": 50})
	for i := 0; !strings.Contains(out.Reason, "sleep runs in the foreground"); i++ {
		if res.IsError || !out.Running || i > 1000 {
			t.Fatalf("task_input: %s", textOf(res))
		}
		res, out = callFor[ttyOut](t, cs, "task_input", map[string]any{"task_id": id, "wait_ms": 50})
	}
	res, out = callFor[ttyOut](t, cs, "task_input", map[string]any{"task_id": id, "keys": []string{"ctrl-c"}})
	if res.IsError || out.Reason != "waiting for input" || !strings.HasSuffix(out.Stdout, "$ ") {
		t.Fatalf("after Ctrl-C: %s", textOf(res))
	}
	res, out = callFor[ttyOut](t, cs, "task_input", map[string]any{"task_id": id, "input": "echo ok\n"})
	if res.IsError || !strings.Contains(out.Stdout, "\nok\n$ ") {
		t.Errorf("the session after Ctrl-C: %s", textOf(res))
	}
}
