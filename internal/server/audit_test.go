package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAuditLog: every tool call is logged with session, tool, a summary free of file
// contents and secrets, duration and outcome.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Token = "tok-1234567890"
	calls := []mcp.CallToolParams{
		{Name: "create_file", Arguments: map[string]any{"path": "a.txt", "content": "TOP-SECRET-CONTENT"}},
		{Name: "bash", Arguments: map[string]any{"command": "echo tok-1234567890"}},
		{Name: "view", Arguments: map[string]any{"path": "missing.txt"}},
	}
	entries, _, logs := auditEntries(t, cfg, calls)
	for i, e := range entries {
		if e["tool"] != calls[i].Name || e["session"] == "" || e["duration_ms"] == nil || e["level"] != "INFO" {
			t.Errorf("entry %d = %v, want tool %s with session, duration at info level", i, e, calls[i].Name)
		}
	}
	// A path is logged as it is; file contents only as their length.
	if args, _ := entries[0]["args"].(map[string]any); args["path"] != "a.txt" || args["content"] != "(18 chars)" {
		t.Errorf("args of create_file = %v, want the path and the content's length", args)
	}
	if got := entries[2]["outcome"]; got != "error NOT_FOUND" {
		t.Errorf("outcome of a failed view = %v, want error NOT_FOUND", got)
	}
	for _, secret := range []string{"TOP-SECRET-CONTENT", cfg.Token} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains %q:\n%s", secret, logs)
		}
	}
}

// auditEntries runs calls through a server with cfg and returns the tool call log entries,
// their lines, and the whole log.
func auditEntries(t *testing.T, cfg config.Config, calls []mcp.CallToolParams) ([]map[string]any, []string, string) {
	t.Helper()
	log := auditLog(t, cfg, func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }, calls)
	var entries []map[string]any
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err == nil && e["msg"] == "tool call" {
			entries = append(entries, e)
			lines = append(lines, line)
		}
	}
	if len(entries) != len(calls) {
		t.Fatalf("%d tool call log entries, want %d:\n%s", len(entries), len(calls), log)
	}
	return entries, lines, log
}

// auditLog runs calls through a server with cfg logging through the handler newHandler
// makes, and returns the log.
func auditLog(t *testing.T, cfg config.Config, newHandler func(io.Writer) slog.Handler, calls []mcp.CallToolParams) string {
	t.Helper()
	var logs lockedBuffer
	srv, err := New(&cfg, slog.New(newHandler(&logs)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cs := testutil.Connect(t, srv.MCP(), nil)
	for _, c := range calls {
		if _, err := cs.CallTool(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
	}
	return logs.String()
}

// TestAuditRedactsEscapedToken: a token with characters JSON escapes is still redacted.
func TestAuditRedactsEscapedToken(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Token = `s3<cr&t>"tok"`
	_, lines, _ := auditEntries(t, cfg, []mcp.CallToolParams{
		{Name: "bash", Arguments: map[string]any{"command": "echo " + cfg.Token}},
		{Name: "grep", Arguments: map[string]any{"pattern": cfg.Token, cfg.Token: 1}},
	})
	escaped, _ := json.Marshal(cfg.Token)
	for _, line := range lines {
		var e map[string]any
		_ = json.Unmarshal([]byte(line), &e)
		if args := fmt.Sprint(e["args"]); strings.Contains(args, cfg.Token) || strings.Contains(line, string(escaped[1:len(escaped)-1])) || !strings.Contains(args, "[token]") {
			t.Errorf("log line does not redact the token: %s", line)
		}
	}
}

// TestAuditLineBounded: one huge request writes a short log line that says it was cut.
func TestAuditLineBounded(t *testing.T) {
	t.Parallel()
	args := map[string]any{"command": strings.Repeat("x", 1<<20)}
	for i := range 20000 {
		args[fmt.Sprintf("extra%05d", i)] = i
	}
	_, lines, _ := auditEntries(t, newConfig(t), []mcp.CallToolParams{{Name: "bash", Arguments: args}})
	if len(lines[0]) > 8<<10 || !strings.Contains(lines[0], "more_arguments") {
		t.Errorf("log line of %d bytes, want at most 8 KiB saying what was left out: %.300s", len(lines[0]), lines[0])
	}
}

// TestAuditStoppedOutcome: a command that timed out is not logged as ok.
func TestAuditStoppedOutcome(t *testing.T) {
	t.Parallel()
	entries, _, _ := auditEntries(t, newConfig(t), []mcp.CallToolParams{
		{Name: "bash", Arguments: map[string]any{"command": "sleep 30", "timeout": 100}},
		{Name: "bash", Arguments: map[string]any{"command": "true"}},
	})
	if got := entries[0]["outcome"]; got != "timed_out" {
		t.Errorf("outcome of a timed-out command = %v, want timed_out", got)
	}
	if got := entries[1]["outcome"]; got != "ok" {
		t.Errorf("outcome of a command that ran = %v, want ok", got)
	}
}

// TestAuditReadable: a command is logged as written, escaped once by the log format (no
// JSON escapes inside quotes), and a command's exit status or signal is its outcome.
func TestAuditReadable(t *testing.T) {
	t.Parallel()
	var calls []mcp.CallToolParams
	for _, cmd := range []string{`echo "a" && ls > /dev/null; exit 3`, `kill -SEGV $$`, `true`} {
		calls = append(calls, mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": cmd}})
	}
	got := auditLog(t, newConfig(t), func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }, calls)
	for _, want := range []string{
		`args.command="echo \"a\" && ls > /dev/null; exit 3"`, `outcome="exit 3"`,
		`args.command="kill -SEGV $$"`, `outcome="killed by SIGSEGV (exit 139)"`,
		`args.command=true`, `outcome=ok`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `\u00`) {
		t.Errorf("log has JSON escapes:\n%s", got)
	}
}

// TestAuditLogsViewRewind: a rewind done from the live view is logged beside the tool
// calls, with the checkpoint rewound to and the one that undoes it; a dry run is not.
func TestAuditLogsViewRewind(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Checkpoints, cfg.StateDir = true, t.TempDir()
	var logs lockedBuffer
	srv, err := New(&cfg, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cs := testutil.Connect(t, srv.MCP(), nil)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "create_file", Arguments: map[string]any{"path": "a.txt", "content": "x"}}); err != nil {
		t.Fatal(err)
	}
	rewind := srv.viewRewinder()
	if _, err := rewind(t.Context(), "cp-1", true, false); err != nil {
		t.Fatal(err)
	}
	res, err := rewind(t.Context(), "cp-1", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rewind(t.Context(), "cp-99", false, false); err == nil {
		t.Fatal("a rewind to cp-99 was not refused")
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == "rewind from the live view" {
			got = append(got, fmt.Sprintf("%v %v %v", e["to"], e["outcome"], e["rescue"]))
		}
	}
	want := []string{"cp-1 ok " + res.Rescue, "cp-99 refused <nil>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("logged rewinds %q, want %q", got, want)
	}
}
