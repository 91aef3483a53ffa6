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
)

// stateless is the first protocol revision without sessions.
const stateless = "2026-07-28"

// TestLongCallFirstByteTimeout: a client that gives up on a response whose headers have not
// arrived within a limit still completes a silent call that runs longer than the limit, in
// both protocol models.
func TestLongCallFirstByteTimeout(t *testing.T) {
	t.Parallel()
	for _, version := range []string{sessionful, stateless} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig(t)
			cfg.StreamKeepAlive = 100 * time.Millisecond
			_, ts := start(t, cfg)
			hc := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 500 * time.Millisecond}}
			client := mcp.NewClient(&mcp.Implementation{Name: "impatient", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			if got := bashText(t, cs, "sleep 2; echo finished"); !strings.Contains(got, "finished") {
				t.Errorf("long call returned %q", got)
			}
		})
	}
}

// statelessCall is a raw 2026-07-28 tools/call request.
func statelessCall(ctx context.Context, t *testing.T, url, tool string, args map[string]any, headers map[string]string) *http.Response {
	t.Helper()
	resp, err := statelessRequest(ctx, url, tool, args, headers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func statelessRequest(ctx context.Context, url, tool string, args map[string]any, headers map[string]string) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    stateless,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}},
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", stateless)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// TestStreamStartsAtOnce: the headers of a tool call's event stream, and comments that keep
// it alive, arrive while the command runs, before the result.
func TestStreamStartsAtOnce(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.StreamKeepAlive = 50 * time.Millisecond
	_, ts := start(t, cfg)
	release := filepath.Join(cfg.Workdir, "release")
	resp := statelessCall(t.Context(), t, ts.URL, "bash", map[string]any{
		"command": "while [ ! -e " + release + " ]; do sleep 0.05; done; echo done",
	}, nil)
	// The headers are here while the command waits for the release file.
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("response = %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	keepalives := 0
	for keepalives < 2 && lines.Scan() {
		if strings.HasPrefix(lines.Text(), "data:") {
			t.Fatalf("result before the command was released: %s", lines.Text())
		}
		if lines.Text() == ": keepalive" {
			keepalives++
		}
	}
	if keepalives < 2 {
		t.Fatalf("stream ended without keepalive comments: %v", lines.Err())
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var result string
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			result = data
			break
		}
	}
	if !strings.Contains(result, `"result"`) || !strings.Contains(result, "done") {
		t.Errorf("result event = %q", result)
	}
}

// TestUnknownToolKeepsStatus: a call to a tool that does not exist is answered with its
// protocol error and HTTP status, not a started stream.
func TestUnknownToolKeepsStatus(t *testing.T) {
	t.Parallel()
	_, ts := start(t, newConfig(t))
	resp := statelessCall(t.Context(), t, ts.URL, "no_such_tool", map[string]any{}, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(string(body), ":") {
		t.Errorf("unknown tool started a stream: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(string(body), "no_such_tool") {
		t.Errorf("unknown tool answer = %d %s", resp.StatusCode, body)
	}
}

// rawSession opens a sessionful session with raw requests and returns its id.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	resp := post(t, url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	_, _ = io.ReadAll(resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize = %d, session %q", resp.StatusCode, id)
	}
	resp = post(t, url+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": sessionful})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized = %d", resp.StatusCode)
	}
	return id
}

// TestDisconnectStopsCall: a client that drops the connection mid-call, without cancelling,
// stops the command, and the server says so in its log.
func TestDisconnectStopsCall(t *testing.T) {
	t.Parallel()
	for _, version := range []string{sessionful, stateless} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig(t)
			var logs lockedBuffer
			srv, err := New(&cfg, slog.New(slog.NewTextHandler(&logs, nil)), []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			defer srv.Close()

			// The command holds "gone" open, so its read ends when the command has exited.
			pidPipe := fifo(t, filepath.Join(cfg.Workdir, "pid"))
			gone := fifo(t, filepath.Join(cfg.Workdir, "gone"))
			args := map[string]any{"command": "exec 3> gone; echo $$ > pid; exec sleep 60"}
			ctx, hangUp := context.WithCancel(t.Context())
			defer hangUp()
			var id string
			if version == sessionful {
				id = rawSession(t, ts.URL)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				var req *http.Request
				if version == stateless {
					if resp, err := statelessRequest(ctx, ts.URL, "bash", args, nil); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					return
				}
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
					"params": map[string]any{"name": "bash", "arguments": args}})
				req, _ = http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", sessionful)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			receive(t, pidPipe, "the command's pid")
			hangUp()
			<-done
			receive(t, gone, "the command to end after its client went away")
			// The server logs the hang-up before it stops the command.
			if !strings.Contains(logs.String(), "client went away") {
				t.Fatalf("no log line about the client going away:\n%s", logs.String())
			}
		})
	}
}

// TestStreamWriterLateError: a protocol error that asks for its own status after the stream
// has started reaches the client as an event, not as bytes outside the event framing.
func TestStreamWriterLateError(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w := newStreamWriter(rec, 0)
	w.Header().Set("Content-Type", "text/event-stream")
	w.start()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`))
	w.finish()
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("status %d, type %q; want the started 200 event stream", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := ": running\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}
