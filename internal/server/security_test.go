package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

// get sends a GET to url, with the bearer token when given, and returns the response.
func get(t *testing.T, ctx context.Context, url, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestWatchCarriesNoCredential: the live view's stream shows sessions by a label that
// /mcp does not take as a session id, never the session id itself, and its stop keys
// cannot be guessed without it.
func TestWatchCarriesNoCredential(t *testing.T) {
	t.Parallel()
	_, ts := start(t, newConfig(t))
	cs, err := dial(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	bashText(t, cs, "echo hello")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 300", "run_in_background": true}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %s", err, text(res))
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp := get(t, ctx, ts.URL+"/watch/events", "")
	defer resp.Body.Close()
	var stream strings.Builder
	labels, stops := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	for tasks := 0; tasks == 0 && sc.Scan(); {
		line := sc.Text()
		stream.WriteString(line + "\n")
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e watch.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		labels[e.Session] = e.Session != ""
		stops[e.Stop] = e.Stop != ""
		if e.Kind == watch.KindTask {
			tasks++
		}
	}
	if strings.Contains(stream.String(), cs.ID()) {
		t.Errorf("the live view carries session id %s:\n%s", cs.ID(), stream.String())
	}
	for label, ok := range labels {
		if !ok {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", label)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("/mcp with the live view's session label %q as its session id = %d, want 404", label, resp.StatusCode)
		}
	}
	for _, guess := range []string{"c1", "c2", "c3", "t1", "t2", "t3", "t4"} {
		resp, err := http.Post(ts.URL+"/watch/stop", "application/json", strings.NewReader(`{"stop":"`+guess+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || stops[guess] {
			t.Errorf("/watch/stop key %q could be guessed: it was shown or stopped something (%d)", guess, resp.StatusCode)
		}
	}
}

// TestWatchKeyWhenConfined: without a token, a server whose commands are confined to paths
// but may open TCP connections asks a key of its own for the live view; one whose commands
// cannot reach it, or that has a token, does not.
func TestWatchKeyWhenConfined(t *testing.T) {
	t.Parallel()
	if confine.KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	cfg := newConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	srv, ts := start(t, cfg)
	key := srv.WatchKey()
	if key == "" {
		t.Fatal("no key for the live view, whose port confined commands can reach")
	}
	for _, path := range []string{"/watch", "/watch/events"} {
		resp := get(t, t.Context(), ts.URL+path, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the key = %d, want 401", path, resp.StatusCode)
		}
	}
	resp := get(t, t.Context(), ts.URL+"/watch", key)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /watch with the key = %d, want 200", resp.StatusCode)
	}
	if out := bashText(t, mustDial(t, ts.URL), "env; cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n'"); strings.Contains(out, key) {
		t.Errorf("a command sees the live view's key")
	}

	cfg.Token = "tok-watch"
	if srv, _ := start(t, cfg); srv.WatchKey() != "" {
		t.Errorf("a key for the live view besides the token")
	}
	if confine.KernelABI() >= 4 {
		cfg.Token, cfg.ConfineNetwork = "", true
		if srv, _ := start(t, cfg); srv.WatchKey() != "" {
			t.Errorf("a key for the live view, which commands cannot reach under --confine-network")
		}
	}
}

func mustDial(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := dial(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestStreamsBounded: /mcp holds at most streamsPerSession responses open for each session
// --max-sessions allows; past that, while none is stuck writing to a client that does not
// read, a new request gets 503 and never reaches the handler.
func TestStreamsBounded(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.MaxSessions = 1
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	entered, release := make(chan struct{}), make(chan struct{})
	ts := httptest.NewServer(srv.limitStreams(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})))
	t.Cleanup(ts.Close)
	done := make(chan int)
	for range streamsPerSession {
		go func() {
			resp, err := http.Post(ts.URL, "application/json", strings.NewReader("{}"))
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		<-entered
	}
	go func() {
		resp, err := http.Get(ts.URL)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case code := <-done:
		if code != http.StatusServiceUnavailable {
			t.Errorf("request past the bound = %d, want 503", code)
		}
	case <-entered:
		t.Error("a request past the bound reached the handler")
	}
	close(release)
	for range streamsPerSession {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a request within the bound = %d", code)
		}
	}
}

// TestTokenFileReadableWarned: a server whose confined commands can read its token file
// warns at startup; one whose token file lies out of their reach does not.
func TestTokenFileReadableWarned(t *testing.T) {
	t.Parallel()
	if confine.KernelABI() < 1 {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock")
	}
	for _, c := range []struct {
		dir  string
		warn bool
	}{{"workdir", true}, {"private", false}} {
		cfg := newConfig(t)
		cfg.AllowDirs = []string{cfg.Workdir}
		dir := t.TempDir()
		if c.dir == "workdir" {
			dir = cfg.Workdir
		}
		cfg.Token, cfg.TokenFile = "tok-file", filepath.Join(dir, "token")
		if err := os.WriteFile(cfg.TokenFile, []byte(cfg.Token), 0o600); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		srv, err := New(&cfg, slog.New(slog.NewTextHandler(&log, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if got := strings.Contains(log.String(), "confined commands can read the token file"); got != c.warn {
			t.Errorf("token file in the %s: warned %v, want %v; log:\n%s", c.dir, got, c.warn, log.String())
		}
	}
}
