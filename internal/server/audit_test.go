package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	var logs lockedBuffer
	srv, err := New(&cfg, slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	calls := []mcp.CallToolParams{
		{Name: "create_file", Arguments: map[string]any{"path": "a.txt", "content": "TOP-SECRET-CONTENT"}},
		{Name: "bash", Arguments: map[string]any{"command": "echo tok-1234567890"}},
		{Name: "view", Arguments: map[string]any{"path": "missing.txt"}},
	}
	for _, c := range calls {
		if _, err := cs.CallTool(t.Context(), &c); err != nil {
			t.Fatal(err)
		}
	}
	var entries []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err == nil && e["msg"] == "tool call" {
			entries = append(entries, e)
		}
	}
	if len(entries) != len(calls) {
		t.Fatalf("%d tool call log entries, want %d:\n%s", len(entries), len(calls), logs.String())
	}
	for i, e := range entries {
		if e["tool"] != calls[i].Name || e["session"] == "" || e["duration_ms"] == nil || e["level"] != "INFO" {
			t.Errorf("entry %d = %v, want tool %s with session, duration at info level", i, e, calls[i].Name)
		}
	}
	if got := entries[2]["outcome"]; got != "error NOT_FOUND" {
		t.Errorf("outcome of a failed view = %v, want error NOT_FOUND", got)
	}
	for _, secret := range []string{"TOP-SECRET-CONTENT", cfg.Token} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log contains %q:\n%s", secret, logs.String())
		}
	}
}
