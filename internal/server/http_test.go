package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

func testConfig(t *testing.T) config.Config { return newConfig(t) }

func newConfig(t testing.TB) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Workdir = t.TempDir()
	cfg.Timeout = 30 * time.Second
	cfg.MaxSessions = 8
	cfg.MaxBackgroundTasks = 4
	cfg.MaxRequestBytes = 1 << 20
	cfg.SessionIdleTimeout = time.Minute
	cfg.LogLevel = slog.LevelWarn
	cfg.Shell = "/bin/bash"
	cfg.Version = "test"
	return cfg
}

func start(t testing.TB, cfg config.Config) (*Server, *httptest.Server) {
	t.Helper()
	return startWith(t, cfg, nil)
}

// startWith is start with a chance to adjust the server before it serves.
func startWith(t testing.TB, cfg config.Config, adjust func(*Server)) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if adjust != nil {
		adjust(srv)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, ts
}

// bearer adds a token to every request a client makes.
// sessionful is the newest protocol revision with sessions.
const sessionful = "2025-11-25"

// dial opens a sessionful client session.
func dial(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	return dialAt(t, url, token, sessionful)
}

// dialAt connects a client speaking the given protocol revision.
func dialAt(t testing.TB, url, token, version string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = testutil.Bearer(token, nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url string, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHealth(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "sekrit-token"
	_, ts := start(t, cfg)
	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Errorf("GET /health = %d %q, want 200 JSON with status ok", resp.StatusCode, body)
	}
	if strings.Contains(string(body), cfg.Token) || strings.Contains(string(body), cfg.Workdir) {
		t.Errorf("GET /health reveals configuration: %s", body)
	}
}

// TestNotFoundNamesTheEndpoints: a path the server lacks (a client set up for the older
// SSE transport, a person trying URLs) gets a 404 that names the ones it has.
func TestNotFoundNamesTheEndpoints(t *testing.T) {
	t.Parallel()
	_, ts := start(t, testConfig(t))
	for _, path := range []string{"/", "/sse", "/mcp/x"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "POST /mcp") || !strings.Contains(string(body), "/watch") {
			t.Errorf("GET %s = %d %q, want 404 naming /mcp and /watch", path, resp.StatusCode, body)
		}
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "correct-horse"
	_, ts := start(t, cfg)
	tests := []struct {
		name    string
		headers map[string]string
		url     string
		want    int
	}{
		{"no token", nil, ts.URL + "/mcp", 401},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong"}, ts.URL + "/mcp", 401},
		{"prefix of token", map[string]string{"Authorization": "Bearer correct"}, ts.URL + "/mcp", 401},
		{"basic scheme", map[string]string{"Authorization": "Basic correct-horse"}, ts.URL + "/mcp", 401},
		{"token in query", nil, ts.URL + "/mcp?token=correct-horse&access_token=correct-horse", 401},
		{"right token", map[string]string{"Authorization": "Bearer correct-horse"}, ts.URL + "/mcp", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := post(t, tt.url, initBody, tt.headers)
			if resp.StatusCode != tt.want {
				t.Fatalf("POST /mcp = %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer WWW-Authenticate header")
			}
		})
	}
	if _, err := dial(t, ts.URL, "correct-horse"); err != nil {
		t.Errorf("client with the token: %v", err)
	}
	if cs, err := dial(t, ts.URL, ""); err == nil {
		cs.Close()
		t.Errorf("client without the token connected")
	}
}

func TestHostAndOrigin(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.AllowOrigins = []string{"https://app.example.com"}
	_, ts := start(t, cfg)
	host := strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"rebinding host", map[string]string{"Host": "evil.example.com", "Origin": "http://evil.example.com"}, 403},
		{"rebinding host no origin", map[string]string{"Host": "evil.example.com:80"}, 403},
		{"foreign origin", map[string]string{"Origin": "http://evil.example.com"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"localhost origin", map[string]string{"Host": host, "Origin": "http://" + host}, 200},
		{"localhost name", map[string]string{"Host": "localhost" + host[strings.LastIndex(host, ":"):]}, 200},
		{"allowed origin", map[string]string{"Origin": "https://app.example.com"}, 200},
		{"other localhost port", map[string]string{"Origin": "http://localhost:6274"}, 200},
		{"loopback ip origin", map[string]string{"Origin": "http://127.0.0.1:3000", "Sec-Fetch-Site": "cross-site"}, 200},
		{"look-alike origin", map[string]string{"Origin": "http://localhost.evil.example.com"}, 403},
		{"no origin", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := post(t, ts.URL+"/mcp", initBody, tt.headers)
			if resp.StatusCode != tt.want {
				t.Fatalf("POST /mcp with %v = %d, want %d", tt.headers, resp.StatusCode, tt.want)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got == "*" {
				t.Errorf("wildcard CORS header")
			}
		})
	}
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Token = "tok"
	cfg.AllowOrigins = []string{"https://app.example.com"}
	_, ts := start(t, cfg)
	for origin, want := range map[string]int{"https://app.example.com": 204, "https://evil.example.com": 403} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, ts.URL+"/mcp", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("preflight from %s = %d, want %d", origin, resp.StatusCode, want)
		}
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if (want == 204 && acao != origin) || (want != 204 && acao != "") {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin = %q", origin, acao)
		}
	}
}

func TestRequestLimits(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxRequestBytes = 4096
	_, ts := start(t, cfg)
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 10000) + `"}}`
	if resp := post(t, ts.URL+"/mcp", big, nil); resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("oversized body = %d, want 4xx", resp.StatusCode)
	}
	for _, junk := range []string{"", "{", "[]", `{"jsonrpc":"2.0"}`, "\x00\x01", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`} {
		if resp := post(t, ts.URL+"/mcp", junk, nil); resp.StatusCode == 200 && junk == "" || resp.StatusCode >= 500 {
			t.Errorf("POST %q = %d, want a 4xx (or a JSON-RPC error), never a 5xx", junk, resp.StatusCode)
		}
	}
	if cs, err := dial(t, ts.URL, ""); err != nil {
		t.Fatalf("server did not survive malformed requests: %v", err)
	} else {
		cs.Close()
	}
}

// TestSessionLimit: a full session table closes the least recently used idle session to
// admit a new client, and refuses only while every session is busy.
func TestSessionLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxSessions = 2
	_, ts := startWith(t, cfg, func(s *Server) { s.pool.openWait, s.pool.idleGrace = time.Second, 50*time.Millisecond })
	call := func(cs *mcp.ClientSession, command string) error {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}
	var open []*mcp.ClientSession
	for range 3 {
		cs, err := dial(t, ts.URL, "")
		if err != nil {
			t.Fatalf("opening a session past the limit with idle sessions: %v", err)
		}
		defer cs.Close()
		if err := call(cs, "true"); err != nil {
			t.Fatal(err)
		}
		open = append(open, cs)
	}
	if err := call(open[0], "true"); err == nil {
		t.Error("the least recently used session still works after a third one opened")
	}
	if err := call(open[2], "true"); err != nil {
		t.Errorf("the newest session: %v", err)
	}

	// Both live sessions busy: a new one is refused.
	release := filepath.Join(cfg.Workdir, "release")
	var wg sync.WaitGroup
	for i, cs := range open[1:] {
		started := filepath.Join(cfg.Workdir, fmt.Sprintf("started%d", i))
		if err := syscall.Mkfifo(started, 0o600); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			_ = call(cs, fmt.Sprintf("echo > %s; while [ ! -e %s ]; do sleep 0.05; done", started, release))
		})
		// Returns once the command has written to the fifo: it is running.
		if _, err := os.ReadFile(started); err != nil {
			t.Fatal(err)
		}
	}
	resp := post(t, ts.URL+"/mcp", initBody, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "--max-sessions") {
		t.Errorf("new session while every session is busy = %d %s, want 503 naming --max-sessions", resp.StatusCode, body)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if cs, err := dial(t, ts.URL, ""); err != nil {
		t.Errorf("after the calls finished, a new session fails: %v", err)
	} else {
		cs.Close()
	}
}

// TestSessionCyclesFreeEverything opens and closes many sessions and checks that neither
// goroutines nor session state pile up.
func TestSessionCyclesFreeEverything(t *testing.T) {
	cfg := testConfig(t)
	srv, ts := start(t, cfg)
	cycle := func() {
		cs, err := dial(t, ts.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
		if err != nil || res.IsError {
			t.Fatalf("bash true: %v %v", res, err)
		}
		cs.Close()
	}
	for range 20 {
		cycle()
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	before := settledGoroutines(t, -1)
	fdsBefore := testutil.OpenFDs(t)
	for range 1000 {
		cycle()
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	after := settledGoroutines(t, before)
	if fds := testutil.OpenFDs(t); fds > fdsBefore+10 {
		t.Errorf("open file descriptors grew from %d to %d over 1000 session cycles", fdsBefore, fds)
	}
	t.Logf("goroutines: %d before, %d after", before, after)
	if after > before+10 {
		t.Errorf("goroutines grew from %d to %d over 1000 session cycles", before, after)
	}
	n := srv.pool.len()
	if n != 0 {
		t.Errorf("%d session states left after every client closed", n)
	}
}

// settledGoroutines waits (by polling with yields, bounded) for the goroutine count to drop
// to at most target, and returns it.
func settledGoroutines(t *testing.T, target int) int {
	t.Helper()
	n := runtime.NumGoroutine()
	deadline := time.Now().Add(5 * time.Second)
	for (target < 0 || n > target) && time.Now().Before(deadline) {
		runtime.Gosched()
		runtime.GC()
		prev := n
		n = runtime.NumGoroutine()
		if target < 0 && n == prev {
			break
		}
	}
	return n
}

func TestInstructionsState(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.DenyDirs = []string{"**/.env"}
	_, ts := start(t, cfg)
	cs, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got := cs.InitializeResult().Instructions
	for _, want := range []string{cfg.Workdir, "**/.env", "before editing"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions %q lack %q", got, want)
		}
	}
}

// TestDeleteEndsRunningCommands: closing a session (HTTP DELETE) while a command runs
// kills the command at once, rather than waiting for it to finish.
func TestDeleteEndsRunningCommands(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	_, ts := start(t, cfg)
	cs, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	pidPipe := fifo(t, filepath.Join(cfg.Workdir, "pid"))
	called := make(chan struct{})
	go func() {
		defer close(called)
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > pid; sleep 60"}})
	}()
	pid, err := strconv.Atoi(strings.TrimSpace(string(receive(t, pidPipe, "the command's pid"))))
	if err != nil {
		t.Fatal(err)
	}
	// A raw DELETE: the SDK's client would first wait for its own call to return.
	deleted := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			deleted <- -1
			return
		}
		resp.Body.Close()
		deleted <- resp.StatusCode
	}()
	select {
	case code := <-deleted:
		if code < 200 || code >= 300 {
			t.Errorf("DELETE = %d, want 2xx", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("DELETE waited for the running command")
	}
	<-called
	cs.Close()
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the command (pid %d) survived its session", pid)
	}
}

// TestManyClientsNeverDelete: 200 clients that each open a session, call a tool and never
// close it are all served by a server that keeps at most 64 sessions.
func TestManyClientsNeverDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("200 sessions")
	}
	cfg := testConfig(t)
	cfg.MaxSessions = 64
	// A loaded machine (race detector, parallel tests) serves the queue slowly: let new
	// clients wait longer than they would in production.
	srv, ts := startWith(t, cfg, func(s *Server) { s.pool.openWait = 2 * time.Minute })
	file := filepath.Join(cfg.Workdir, "small.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
		open   []*mcp.ClientSession
	)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 200 {
		wg.Go(func() {
			cs, err := dialAt(t, ts.URL, "", sessionful)
			if err == nil {
				var res *mcp.CallToolResult
				res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": file}})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %s", text(res))
				}
				mu.Lock()
				open = append(open, cs)
				mu.Unlock()
			}
			if err != nil {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("client %d: %v", i, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	live := srv.pool.httpLen()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("heap in use: %d KiB before, %d KiB after 200 clients; %d sessions live", before.HeapInuse>>10, after.HeapInuse>>10, live)
	if len(failed) > 0 {
		t.Errorf("%d of 200 clients failed, first: %s", len(failed), failed[0])
	}
	if live > cfg.MaxSessions {
		t.Errorf("%d sessions live, limit %d", live, cfg.MaxSessions)
	}
	for _, cs := range open {
		cs.Close()
	}
}
