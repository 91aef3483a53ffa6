package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log destination that handlers may write to from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestRefusalsLogged: each refused request (no token, a wrong token, a foreign Host, a
// foreign Origin, an unknown session) is logged at the default level with its reason and
// never the token, once per client and reason however often the client retries.
func TestRefusalsLogged(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "the-right-token-1234"
	var logs syncBuffer
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name, reason string
		header       map[string]string
	}{
		{"no token", "reason=\"no bearer token\"", nil},
		{"wrong token", "reason=\"wrong bearer token\"", map[string]string{"Authorization": "Bearer wrong-token-secret"}},
		{"foreign host", "host \\\"evil.example\\\" refused", map[string]string{"Authorization": "Bearer the-right-token-1234", "Host": "evil.example"}},
		{"foreign origin", "origin \\\"https://evil.example\\\" refused", map[string]string{"Authorization": "Bearer the-right-token-1234", "Origin": "https://evil.example"}},
		{"unknown session", "reason=\"unknown MCP session\"", map[string]string{"Authorization": "Bearer the-right-token-1234", "Mcp-Session-Id": "gone"}},
	}
	for _, tc := range tests {
		for range 3 {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
				if k == "Host" {
					req.Host = v
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Fatalf("%s: status %d, want a refusal", tc.name, resp.StatusCode)
			}
		}
	}
	// A path the server does not have is no refusal.
	resp, err := http.Get(ts.URL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := logs.String()
	for _, tc := range tests {
		if n := strings.Count(got, tc.reason); n != 1 {
			t.Errorf("%s: %q logged %d times, want once:\n%s", tc.name, tc.reason, n, got)
		}
	}
	if n := strings.Count(got, "level=WARN msg=\"refused a request\""); n != len(tests) {
		t.Errorf("%d refusals logged, want %d:\n%s", n, len(tests), got)
	}
	if strings.Contains(got, "wrong-token-secret") || strings.Contains(got, "the-right-token-1234") {
		t.Errorf("a token reached the log:\n%s", got)
	}
}
