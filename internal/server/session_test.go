package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func bashText(t *testing.T, cs *mcp.ClientSession, command string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
	if err != nil {
		t.Fatalf("bash %q: %v", command, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("bash %q: %s", command, b.String())
	}
	return b.String()
}

// TestSessionsAreIsolated: two HTTP clients each keep their own cwd and environment.
func TestSessionsAreIsolated(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(cfg.Workdir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, ts := start(t, cfg)
	a, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bashText(t, a, "cd a && export WHO=alice")
	bashText(t, b, "cd b && export WHO=bob")
	for cs, want := range map[*mcp.ClientSession]string{a: "a alice", b: "b bob"} {
		got := bashText(t, cs, `echo "$(basename "$PWD") $WHO"`)
		if !strings.Contains(got, want) {
			t.Errorf("session sees %q, want %q", got, want)
		}
	}
}

// TestIdleSessionReaped: a session left idle is closed and its background processes die.
func TestIdleSessionReaped(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.SessionIdleTimeout = 500 * time.Millisecond
	srv, ts := start(t, cfg)
	cs, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	pidFile := filepath.Join(cfg.Workdir, "pid")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "echo $$ > " + pidFile + "; exec sleep 300", "run_in_background": true,
	}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %+v", err, res)
	}
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		time.Sleep(5 * time.Millisecond) // polling a file the command writes, bounded
	}
	if pid == 0 {
		t.Fatal("background command never started")
	}
	for time.Now().Before(deadline.Add(10 * time.Second)) {
		srv.mu.Lock()
		n := len(srv.sessions)
		srv.mu.Unlock()
		if n == 0 && !processAlive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond) // waiting on the server's own idle timer, bounded
	}
	t.Fatalf("idle session not reaped (process %d alive: %v)", pid, processAlive(pid))
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
