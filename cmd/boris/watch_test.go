package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// watcher runs `boris watch args...` and returns its output lines.
func watcher(t *testing.T, args ...string) <-chan string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"watch"}, args...)...)
	out, stderr := startPiped(t, cmd)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("boris watch stderr: %s", stderr.String())
		}
	})
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

// expect reads lines until one matches re, and returns it.
func expect(t *testing.T, lines <-chan string, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var seen []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("boris watch ended before %q; it printed:\n%s", re, strings.Join(seen, "\n"))
			}
			if rx.MatchString(l) {
				return l
			}
			seen = append(seen, l)
		case <-timeout:
			t.Fatalf("no line matching %q; boris watch printed:\n%s", re, strings.Join(seen, "\n"))
		}
	}
}

func TestWatchFollowsHTTPServer(t *testing.T) {
	t.Parallel()
	base, _, stderr := httpServer(t, "--token", "watch-tok", "--workdir", t.TempDir(), "--state-dir", t.TempDir())
	lines := watcher(t, base+"/watch", "--token", "watch-tok")
	cs := httpClient(t, base, "watch-tok")
	// Output is only gathered while someone watches: see the watcher follow first.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	// The SDK client speaks the stateless protocol: its calls share one workspace.
	expect(t, lines, `session opened \(e2e 1, http( \(stateless\))?\)`)
	expect(t, lines, `bash true  → exit 0`)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo one; echo two >&2; printf '\\033[31mred\\033[0m\\n'; exit 2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "exit_code: 2") {
		t.Fatalf("bash: %v", res.Content)
	}
	expect(t, lines, `^\d\d:\d\d:\d\d e2e·\S+ bash echo one; echo two >&2;`)
	var got []string
	for len(got) < 3 {
		got = append(got, expect(t, lines, `^    `))
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"    one", "    ! two", "    red"} {
		if !strings.Contains(joined, want) {
			t.Errorf("output lines %q lack %q", got, want)
		}
	}
	expect(t, lines, `→ exit 2 \(`)
	// A call that changes a file names its checkpoint, and how to rewind to it.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo watched > watched.txt"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, lines, `→ exit 0 \(.*\) \[checkpoint cp-\d+, 1 changed; rewind \{"to": "cp-\d+"\}\]$`)
	if strings.Contains(stderr.String(), "watch-tok") {
		t.Errorf("the token is in the server's log: %s", stderr.String())
	}
}

func TestWatchNeedsToken(t *testing.T) {
	t.Parallel()
	base, _, _ := httpServer(t, "--token", "tok-needed")
	out, err := exec.Command(binary, "watch", base).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the server needs its token") {
		t.Errorf("boris watch without the token: %v\n%s", err, out)
	}
	out, err = exec.Command(binary, "watch", "--token", "not-the-token", base).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the server refused the token") {
		t.Errorf("boris watch with a wrong token: %v\n%s", err, out)
	}
}

func TestStdioWatchListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cs := stdioClient(t, "--watch", addr)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo from-stdio"}}); err != nil {
		t.Fatal(err)
	}
	lines := watcher(t, addr)
	expect(t, lines, `bash echo from-stdio  → exit 0`)
	res, err := http.Get("http://" + addr + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "/watch/app.js") {
		t.Errorf("GET /watch on the --watch listener: %d\n%s", res.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/watch", nil)
	req.Host = fmt.Sprintf("rebind.example:%d", ln.Addr().(*net.TCPAddr).Port)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host on the --watch listener: %v %v", res.StatusCode, err)
	}
}
