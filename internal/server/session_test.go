package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	// The command holds the write end of "gone" open, as does the sleep it becomes, so a
	// read of it ends when they have all exited.
	pid := fifo(t, filepath.Join(cfg.Workdir, "pid"))
	gone := fifo(t, filepath.Join(cfg.Workdir, "gone"))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "exec 3> gone; echo $$ > pid; exec sleep 300", "run_in_background": true,
	}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %+v", err, res)
	}
	var p int
	if _, err := fmt.Sscan(string(receive(t, pid, "the background command's pid")), &p); err != nil {
		t.Fatal(err)
	}
	receive(t, gone, "the idle session's processes to end") // the server's own idle timer
	// The processes may end a moment before the pool forgets the session: a client that
	// sees its session end deletes it, and the DELETE kills them at once.
	if n := forgotten(t, srv.pool); n != 0 {
		t.Fatalf("idle session not forgotten: %d sessions (its process %d has ended)", n, p)
	}
}

// forgotten waits, bounded, until the pool holds no session state, and returns how many
// it holds when the wait ends.
func forgotten(t *testing.T, p *sessionPool) int {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		p.mu.Lock()
		n, changed := len(p.states), p.changed
		p.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-changed:
		case <-timeout:
			return n
		}
	}
}

// fifo makes a named pipe at path and reads it in the background until every writer has
// closed it; the channel then gets what was written. Opening a pipe blocks until the other
// end is opened, so a test learns what a command wrote, and when, without polling.
func fifo(t *testing.T, path string) <-chan []byte {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	c := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(path)
		c <- b
	}()
	return c
}

// receive waits, bounded, for what a fifo delivers.
func receive(t *testing.T, c <-chan []byte, what string) []byte {
	t.Helper()
	select {
	case b := <-c:
		return b
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		return nil
	}
}
