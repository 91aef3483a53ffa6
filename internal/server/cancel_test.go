package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeper is a tools/call of bash, request id 2, that writes its shell's pid to the fifo
// at pidPath and then sleeps.
func sleeper(pidPath string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > %s; sleep 30"}}}`, pidPath)
}

const cancelCall2 = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timed out"}}`

// checkStopped checks that the process whose pid came through the fifo is gone.
func checkStopped(t *testing.T, pid []byte) {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(n, 0) == nil {
		t.Errorf("the cancelled command (pid %d) still runs", n)
	}
}

// TestStdioCancelledCallGetsNoResponse: over STDIO, a tool call the client cancels with
// notifications/cancelled is stopped and gets no response, while the requests around it
// are answered.
func TestStdioCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel()
	pidPath := filepath.Join(t.TempDir(), "pid")
	pid := fifo(t, pidPath)
	c := stdioPipes(t, []string{"PATH=/usr/bin:/bin"})
	c.write(initBody + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	if line := c.read(); !strings.Contains(line, `"id":1,`) {
		t.Fatalf("got %s; want the answer to initialize", line)
	}
	c.write(sleeper(pidPath) + "\n")
	got := receive(t, pid, "the command's pid")
	c.write(cancelCall2 + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n")
	lines := make(chan string)
	go func() {
		defer close(lines)
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				return
			}
			lines <- line
		}
	}()
	closed := make(chan error, 1)
	answered := false
	for line := range lines {
		switch {
		case strings.Contains(line, `"id":2,`):
			t.Errorf("the cancelled call was answered: %s", line)
		case strings.Contains(line, `"id":3,`) && !answered:
			answered = true
			go func() { closed <- c.close() }()
		default:
			t.Errorf("unexpected message: %s", line)
		}
	}
	if !answered {
		t.Fatal("the ping after the cancellation was not answered")
	}
	if err := <-closed; err != nil {
		t.Errorf("RunStdio: %v", err)
	}
	checkStopped(t, got)
}

// TestHTTPCancelledCallGetsNoResponse: over HTTP, a tool call the client cancels with
// notifications/cancelled (in a POST of its own, as Codex sends it when its timer runs
// out) is stopped, and its stream ends without a response.
func TestHTTPCancelledCallGetsNoResponse(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	_, ts := start(t, cfg)
	url := ts.URL + "/mcp"
	init := post(t, url, initBody, nil)
	io.Copy(io.Discard, init.Body)
	h := map[string]string{"Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	if r := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s", r.Status)
	}
	pidPath := filepath.Join(cfg.Workdir, "pid")
	pid := fifo(t, pidPath)
	call := post(t, url, sleeper(pidPath), h)
	body := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(call.Body)
		body <- string(b)
	}()
	got := receive(t, pid, "the command's pid")
	if r := post(t, url, cancelCall2, h); r.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %s", r.Status)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	select {
	case b := <-body:
		if strings.Contains(b, `"id":2`) {
			t.Errorf("the cancelled call was answered: %s", b)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call's stream did not end")
	}
	checkStopped(t, got)
}

func TestCancelledMatchesIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, call, cancel, reply string
		drop                      bool
	}{
		{"number", `1`, `1`, `1`, true},
		{"number written otherwise", `1`, `1.0`, `1`, true},
		{"string", `"a"`, `"a"`, `"a"`, true},
		{"string is not a number", `1`, `"1"`, `1`, false},
		{"other request", `1`, `2`, `1`, false},
		{"not cancelled", `1`, ``, `1`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c cancelled
			c.read([]byte(`{"jsonrpc":"2.0","id":` + tc.call + `,"method":"tools/call"}`))
			if tc.cancel != "" {
				c.read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.cancel + `}}`))
			}
			reply := []byte(`{"jsonrpc":"2.0","id":` + tc.reply + `,"result":{}}` + "\n")
			if got := c.drop(reply); got != tc.drop {
				t.Errorf("drop = %v, want %v", got, tc.drop)
			}
			if c.drop(reply) || len(c.calls) != 0 {
				t.Errorf("the answered request is still kept: %v", c.calls)
			}
		})
	}
}
