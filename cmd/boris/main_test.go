package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mjkoo/boris/internal/confine"
	"github.com/mjkoo/boris/internal/testutil"
)

// binary is the boris executable built once for every end-to-end test.
var binary string

func TestMain(m *testing.M) {
	if confine.IsLauncher() { // tests that run Boris in this process confine its commands
		os.Exit(confine.RunLauncher())
	}
	dir, err := os.MkdirTemp("", "boris-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "boris")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building boris:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestScripts runs the CLI scripts in testdata/script against the built binary.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(binary)+string(os.PathListSeparator)+env.Getenv("PATH"))
			return nil
		},
	})
}

// stdioClient starts boris over STDIO with args and returns a connected client.
func stdioClient(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--transport", "stdio"}, args...)...)
	cmd.Stderr = &bytes.Buffer{}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v (stderr: %s)", err, cmd.Stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// httpServer starts boris over HTTP on a free port and returns its base URL and process.
func httpServer(t *testing.T, args ...string) (string, *exec.Cmd, *syncBuffer) {
	t.Helper()
	return httpServerEnv(t, nil, args...)
}

// httpServerEnv is httpServer with extra environment variables for the server.
func httpServerEnv(t *testing.T, env []string, args ...string) (string, *exec.Cmd, *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	stderr := &syncBuffer{}
	cmd := exec.Command(binary, append([]string{"--port", fmt.Sprint(port)}, args...)...)
	cmd.Stderr = stderr
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	// Wait for the listener: the server logs its URL once it is listening.
	if !stderr.waitFor("serving http", 20*time.Second) {
		t.Fatalf("server did not start: %s", stderr.String())
	}
	return base, cmd, stderr
}

// startPiped starts cmd with its stdout on a pipe, which it returns, and its stderr
// collected in the buffer it returns.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.ReadCloser, *syncBuffer) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdout, stderr
}

// syncBuffer is a bytes.Buffer safe for a process's output goroutine and the test.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // signalled after each write, for waitFor
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{}, 1)
	}
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

// waitFor waits until the buffer holds s, or timeout passes; it reports which.
func (b *syncBuffer) waitFor(s string, timeout time.Duration) bool {
	b.mu.Lock()
	if b.changed == nil {
		b.changed = make(chan struct{}, 1)
	}
	changed := b.changed
	b.mu.Unlock()
	expired := time.After(timeout)
	for !strings.Contains(b.String(), s) {
		select {
		case <-changed:
		case <-expired:
			return false
		}
	}
	return true
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func httpClient(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = testutil.Bearer(token, nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestStdioRoundTrip(t *testing.T) {
	t.Parallel()
	cs := stdioClient(t, "--workdir", t.TempDir())
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("tools/list over stdio returned no tools")
	}
	if cs.InitializeResult().ServerInfo.Name != "boris" {
		t.Errorf("serverInfo = %+v", cs.InitializeResult().ServerInfo)
	}
}

func TestStdioKeepsStdoutForProtocol(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "--transport", "stdio", "--log-level", "debug", "--workdir", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := startPiped(t, cmd)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatalf("no response on stdout (stderr: %s)", stderr.String())
	}
	first := sc.Text()
	stdin.Close()
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("boris exit after EOF: %v (%s)", err, stderr.String())
	}
	if !strings.HasPrefix(first, `{"jsonrpc":"2.0","id":1,"result"`) || len(rest) != 0 {
		t.Errorf("stdout = %q then %q, want only the initialize response", first, rest)
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("no logs on stderr at debug level: %q", stderr.String())
	}
}

func TestHTTPRoundTrip(t *testing.T) {
	t.Parallel()
	base, _, _ := httpServer(t, "--token", "e2e-token", "--workdir", t.TempDir())
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /health = %d, want 200", resp.StatusCode)
	}
	cs := httpClient(t, base, "e2e-token")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list over HTTP = %v, %v", res, err)
	}
}

// TestHTTPBothProtocols: the binary serves a sessionful (2025-11-25) and a stateless
// (2026-07-28) client on one endpoint, and a silent call longer than the client's wait for
// response headers completes, because the response starts at once.
func TestHTTPBothProtocols(t *testing.T) {
	t.Parallel()
	base, _, _ := httpServer(t, "--token", "e2e-token", "--workdir", t.TempDir())
	tr := &http.Transport{ResponseHeaderTimeout: time.Second} // gives up on headers late by a second
	defer tr.CloseIdleConnections()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		hc := &http.Client{Transport: testutil.Bearer("e2e-token", tr)}
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Errorf("negotiated %s, want %s", got, version)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 2; echo slept"}})
		if err != nil || res.IsError {
			t.Errorf("%s: a 2 s call through a 1 s header timeout: %v %v", version, err, res)
		}
		cs.Close()
	}
}

func TestGeneratedTokenPrintedOnce(t *testing.T) {
	t.Parallel()
	base, cmd, stderr := httpServer(t, "--generate-token", "--workdir", t.TempDir())
	m := regexp.MustCompile(`(?m)^  export BORIS_TOKEN=([0-9a-f]{64})$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no generated token on stderr: %s", stderr.String())
	}
	// The live view's link carries the token, ready to open.
	link := regexp.MustCompile(`(?m)^boris: live view: (http://\S+/watch\?token=` + m[1] + `)$`).FindStringSubmatch(stderr.String())
	if link == nil {
		t.Fatalf("no live view link on stderr: %s", stderr.String())
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(link[1])
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Set-Cookie") == "" {
		t.Errorf("GET %s = %s, want a redirect that signs the browser in", link[1], res.Status)
	}
	cs := httpClient(t, base, m[1])
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	// Printed once as the export and once in the link, never in a log line.
	if n := strings.Count(stderr.String(), m[1]); n != 2 {
		t.Errorf("token appears %d times on stderr, want twice (export and link)", n)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "level=") && strings.Contains(line, m[1]) {
			t.Errorf("the token is in a log line: %s", line)
		}
	}
}

// TestPipedStdinServesStdio: a client that starts boris without --transport (stdin a
// pipe) is served on stdio, and boris exits when the client closes stdin, rather than
// serving HTTP to no one after the client has gone. Its first log line, a warning as
// STDIO logs only those, says it chose stdio and why.
func TestPipedStdinServesStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "--workdir", t.TempDir(), "--tools", "codex")
	cmd.Stderr = &syncBuffer{}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting over stdio without --transport: %v (stderr: %s)", err, cmd.Stderr)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Errorf("boris still running after its client closed stdin: %v", cmd.ProcessState)
	}
	if strings.Contains(cmd.Stderr.(*syncBuffer).String(), "serving http") {
		t.Errorf("boris served HTTP with a pipe as stdin: %s", cmd.Stderr)
	}
	first, _, _ := strings.Cut(cmd.Stderr.(*syncBuffer).String(), "\n")
	if want := `level=WARN msg="transport stdio" why="stdin is a pipe and no HTTP flag was given (--transport http or --port serves HTTP)"`; !strings.Contains(first, want) {
		t.Errorf("first log line = %q, want it to hold %q", first, want)
	}
}

// TestTransportChoice: a flag only HTTP uses means HTTP whatever stdin is (a pipe, as a
// program's child gets by default, /dev/null or a terminal), and the first log line says
// so; with no such flag, a pipe means STDIO, whatever variables only HTTP uses say, and
// anything else HTTP, and the first line says why. A command line naming stdio and a flag
// only HTTP uses is refused before anything is served.
func TestTransportChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stdin string // "pipe", "null" or "terminal"
		args  []string
		env   []string
		first string // what the first line of the log holds
		serve bool   // the server listens on the port it was given
	}{
		{"pipe and port", "pipe", []string{"--port", "{port}"}, nil, `level=INFO msg="transport http" why="--port is for HTTP"`, true},
		{"pipe and port variable", "pipe", nil, []string{"BORIS_PORT={port}"}, `level=WARN msg="transport stdio" why="stdin is a pipe and no HTTP flag was given ($BORIS_PORT ignored; --transport http or --port serves HTTP)"`, false},
		{"null and port", "null", []string{"--port", "{port}"}, nil, `level=INFO msg="transport http" why="--port is for HTTP"`, true},
		{"terminal and port", "terminal", []string{"--port", "{port}"}, nil, `level=INFO msg="transport http" why="--port is for HTTP"`, true},
		{"null", "null", nil, nil, `level=INFO msg="transport http" why="stdin is not a pipe"`, false},
		{"terminal", "terminal", nil, nil, `level=INFO msg="transport http" why="stdin is not a pipe"`, false},
		{"pipe, port and stdio named", "pipe", []string{"--transport", "stdio", "--port", "{port}"}, nil, "boris: --port is for HTTP, but --transport names stdio", false},
		{"pipe, port and stdio variable", "pipe", []string{"--port", "{port}"}, []string{"BORIS_TRANSPORT=stdio"}, "boris: --port is for HTTP, but $BORIS_TRANSPORT names stdio", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := fmt.Sprint(freePort(t))
			args := []string{"--workdir", t.TempDir()}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{port}", port))
			}
			cmd := exec.Command(binary, args...)
			cmd.Env = os.Environ()
			for _, e := range tc.env {
				cmd.Env = append(cmd.Env, strings.ReplaceAll(e, "{port}", port))
			}
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			switch tc.stdin {
			case "pipe":
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
			case "terminal":
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Skipf("no pseudo-terminal: %v", err)
				}
				defer ptmx.Close()
				defer tty.Close()
				cmd.Stdin = tty
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-exited
			}()
			if !stderr.waitFor("\n", 20*time.Second) {
				t.Fatalf("boris logged nothing: %q", stderr.String())
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if !strings.Contains(first, tc.first) {
				t.Errorf("first line of the log = %q, want it to hold %q", first, tc.first)
			}
			if tc.serve {
				if !stderr.waitFor("url=http://127.0.0.1:"+port+"/mcp", 20*time.Second) {
					t.Errorf("boris does not serve HTTP on port %s: %s", port, stderr.String())
				}
				return
			}
			if strings.HasPrefix(tc.first, "boris: ") {
				select {
				case err := <-exited:
					exited <- err
					if cmd.ProcessState.ExitCode() != 1 {
						t.Errorf("boris exited with %v, want status 1", err)
					}
				case <-time.After(20 * time.Second):
					t.Errorf("boris still runs after refusing its command line: %s", stderr.String())
				}
			}
		})
	}
}

// TestTokenWarnings: a short token, or one on the command line, is warned about at start.
func TestTokenWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
		not  []string
	}{
		{"short on the command line", nil, []string{"--token", "short"}, []string{"token is short", "given with --token"}, nil},
		{"long in the environment", []string{"BORIS_TOKEN=0123456789abcdef0123"}, nil, nil, []string{"token is short", "given with --token"}},
		{"short in the environment", []string{"BORIS_TOKEN=abc"}, nil, []string{"token is short"}, []string{"given with --token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, cmd, stderr := httpServerEnv(t, tc.env, append([]string{"--workdir", t.TempDir()}, tc.args...)...)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("no warning %q: %s", w, stderr.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(stderr.String(), w) {
					t.Errorf("warning %q given: %s", w, stderr.String())
				}
			}
		})
	}
}

// TestStartupAndShutdownLogged: the start-up line names the URLs served and whether a
// token is needed; the end is logged too.
func TestStartupAndShutdownLogged(t *testing.T) {
	t.Parallel()
	base, cmd, stderr := httpServer(t, "--workdir", t.TempDir())
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	for _, want := range []string{"url=" + base + "/mcp", "watch=" + base + "/watch", "token_required=false", `msg=stopped reason=signal`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q: %s", want, stderr.String())
		}
	}
}

func TestShutdownIsPrompt(t *testing.T) {
	t.Parallel()
	_, cmd, stderr := httpServer(t, "--workdir", t.TempDir())
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v (%s)", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("server still running 15s after SIGTERM")
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// pidPipes makes a named pipe in dir for each name, for a command to write its pid to
// with echo $$ > name. Opening a pipe to read blocks until a writer opens it, so wait
// learns the pids without polling.
func pidPipes(t *testing.T, dir string, names ...string) (wait func() []int) {
	t.Helper()
	for _, n := range names {
		if err := syscall.Mkfifo(filepath.Join(dir, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func() []int {
		t.Helper()
		type read struct {
			i   int
			pid int
			err error
		}
		got := make(chan read, len(names))
		for i, n := range names {
			go func() {
				b, err := os.ReadFile(filepath.Join(dir, n))
				var pid int
				if err == nil {
					_, err = fmt.Sscan(string(b), &pid)
				}
				got <- read{i, pid, err}
			}()
		}
		pids := make([]int, len(names))
		expired := time.After(20 * time.Second)
		for range names {
			select {
			case r := <-got:
				if r.err != nil || r.pid <= 0 {
					t.Fatalf("reading the pid in %s: %v", names[r.i], r.err)
				}
				pids[r.i] = r.pid
			case <-expired:
				for _, n := range names { // unblock the readers still waiting
					if f, err := os.OpenFile(filepath.Join(dir, n), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				}
				t.Fatalf("the command never wrote its pids to %q", names)
			}
		}
		return pids
	}
}

// waitExit waits, bounded, for the server process to exit after what was done to it.
func waitExit(t *testing.T, cmd *exec.Cmd, after string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("server still running 20s after %s", after)
	}
}

// assertGone fails for each process in pids still alive.
func assertGone(t *testing.T, pids []int, after string) {
	t.Helper()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d survived %s", pid, after)
		}
	}
}

// TestShutdownKillsChildren runs a foreground command with a grandchild and a background
// task, sends SIGTERM (or SIGHUP) to the server, and checks that every one of those
// processes is gone.
func TestShutdownKillsChildren(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("an escaped process is tracked only on Linux") // see internal/shell/procs_darwin.go
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { testShutdownKillsChildren(t, sig) })
	}
}

func testShutdownKillsChildren(t *testing.T, sig syscall.Signal) {
	dir := t.TempDir()
	wait := pidPipes(t, dir, "child", "grandchild", "task", "escaped")
	base, cmd, stderr := httpServer(t, "--workdir", dir)
	cs := httpClient(t, base, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "sleep 301 & echo $! > grandchild; echo $$ > child; sleep 300",
		}})
	}()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "echo $$ > task; exec sleep 302", "run_in_background": true,
	}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %+v", err, res)
	}
	// One that left its group and dropped the marker variable, orphaned at once.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "(setsid env -i /bin/sh -c 'echo $$ > escaped; exec sleep 304' >/dev/null 2>&1 &)",
	}})
	if err != nil || res.IsError {
		t.Fatalf("escaping bash: %v %+v", err, res)
	}
	pids := wait()
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d not running before shutdown", pid)
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, sig.String()+": "+stderr.String())
	assertGone(t, pids, "server shutdown")
}

// startStdio starts boris over STDIO in dir, initializes it and sends requests (JSON-RPC
// lines) without reading replies; stdin stays open for the caller to close.
func startStdio(t *testing.T, dir string, requests ...string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(binary, "--transport", "stdio", "--workdir", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := append([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}, requests...)
	if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin
}

// TestStdioEOFKillsChildren closes the client side of a STDIO server while a command runs:
// the server must kill the command and exit.
func TestStdioEOFKillsChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wait := pidPipes(t, dir, "child")
	cmd, stdin := startStdio(t, dir, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > child; sleep 300"}}}`)
	pids := wait()
	stdin.Close()
	waitExit(t, cmd, "its stdin closed")
	assertGone(t, pids, "the client disconnecting")
}

// TestStdioSignalKillsChildren: SIGTERM, SIGINT or SIGHUP to a STDIO server kills a running command, what it
// left running with &, and background tasks, before the server exits.
func TestStdioSignalKillsChildren(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		dir := t.TempDir()
		wait := pidPipes(t, dir, "task", "left", "child")
		cmd, _ := startStdio(t, dir,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > task; exec sleep 303","run_in_background":true}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 301 & echo $! > left; echo $$ > child; sleep 300"}}}`)
		pids := wait()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, sig.String())
		assertGone(t, pids, "the server's "+sig.String())
	}
}

// TestStdioPipedBatchIsAnswered: requests piped in before stdin closes all get replies.
func TestStdioPipedBatchIsAnswered(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "--transport", "stdio", "--workdir", t.TempDir())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 0.2; echo piped-ok"}}}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("boris: %v", err)
	}
	for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `"id":3,"result"`, "piped-ok"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
}

func TestContainerMemory(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			if v, ok := m[name]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	for _, tc := range []struct {
		files map[string]string
		want  int64
	}{
		{map[string]string{"/sys/fs/cgroup/memory.max": "268435456\n"}, 256 << 20},
		{map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0},
		{map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "134217728\n"}, 128 << 20},
		{map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{nil, 0},
	} {
		if got := containerMemory(files(tc.files)); got != tc.want {
			t.Errorf("containerMemory(%v) = %d, want %d", tc.files, got, tc.want)
		}
	}
}

// TestCommandsCannotReadToken: a command cannot read the server's token out of the
// server's /proc files, however the token was passed.
func TestCommandsCannotReadToken(t *testing.T) {
	t.Parallel()
	const token = "tok-e2e-5ecret-4c1d"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--token", token}},
		{"env", []string{"BORIS_TOKEN=" + token}, nil},
		{"file", nil, []string{"--token-file", file}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, cmd, _ := httpServerEnv(t, tc.env, append([]string{"--workdir", t.TempDir()}, tc.args...)...)
			cs := httpClient(t, base, token)
			pid := cmd.Process.Pid
			script := fmt.Sprintf(`test "$PPID" = %d || echo "parent $PPID is not the server"
for f in environ cmdline mem; do echo "== $f"; head -c 1000000 /proc/%d/$f 2>&1 | tr '\0' '\n'; done`, pid, pid)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": script}})
			if err != nil || res.IsError {
				t.Fatalf("bash: %v %v", err, res)
			}
			var out strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					out.WriteString(tc.Text)
				}
			}
			if strings.Contains(out.String(), token) || strings.Contains(out.String(), "is not the server") {
				t.Errorf("a command read the token from the server's /proc files:\n%s", out.String())
			}
		})
	}
}

// TestConfinedCommands: the built binary confines commands to --allow-dir where the kernel
// has Landlock, and stays unconfined itself.
func TestConfinedCommands(t *testing.T) {
	t.Parallel()
	var landlock bytes.Buffer
	version := exec.Command(binary, "--version")
	version.Stdout = &landlock
	if err := version.Run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(landlock.String(), "Landlock ABI") {
		testutil.Missing(t, "BORIS_REQUIRE_LANDLOCK", "no Landlock: "+landlock.String())
	}
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := stdioClient(t, "--allow-dir", dir, "--workdir", dir)
	for command, wantOK := range map[string]bool{
		"cat " + secret:                           false,
		"echo x > " + outside + "/f":              false,
		"echo in > f && cat f && ls / >/dev/null": true,
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.HasPrefix(text, "exit_code: 0\n") != wantOK || strings.Contains(text, "top secret") {
			t.Errorf("bash(%q) = %s", command, text)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Errorf("a confined command wrote outside the allowed directory")
	}
	// Boris is the command's parent; no thread of it shares the command's domain, so
	// none can be signalled.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": `cat /proc/$PPID/comm; for t in /proc/$PPID/task/*; do kill -0 ${t##*/} 2>/dev/null && echo reached ${t##*/}; done; echo checked`}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, filepath.Base(binary)+"\nchecked\n") {
		t.Errorf("signalling Boris's threads from a confined command: %s", text)
	}
}

// TestInheritedDescriptorsStayHome: a descriptor Boris inherited, beyond stdin, stdout
// and stderr, does not reach its commands, where a background task would hold it open.
func TestInheritedDescriptorsStayHome(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fi, err := w.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pipe := fmt.Sprintf("pipe:[%d]", fi.Sys().(*syscall.Stat_t).Ino)
	cmd := exec.Command(binary, "--transport", "stdio")
	cmd.ExtraFiles = []*os.File{w}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, command := range []string{"ls -l /proc/self/fd/", "cd . && ls -l /proc/self/fd/"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError || !strings.Contains(text, "/dev/null") {
			t.Fatalf("%s: %s", command, text)
		}
		if strings.Contains(text, pipe) {
			t.Errorf("%s: the command has Boris's inherited %s:\n%s", command, pipe, text)
		}
	}
}

// TestShutdownKillsChainOutOfCgroup: a chain of 400 processes that ignore SIGTERM, each
// the parent of the next, that left their command's cgroup, session and group and
// cleared their mark (as a root command can), ends with the server's SIGTERM.
func TestShutdownKillsChainOutOfCgroup(t *testing.T) {
	t.Parallel()
	root := testutil.Cgroup2Root()
	if os.Geteuid() != 0 || root == "" {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "needs root and cgroup v2: only root can leave a cgroup")
	}
	dir := t.TempDir()
	base, cmd, stderr := httpServer(t, "--workdir", dir)
	cs := httpClient(t, base, "")
	tag := fmt.Sprint("e2e", time.Now().UnixNano())
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": testutil.ChainScript(filepath.Join(root, "cgroup.procs"), tag, 400),
	}})
	if err != nil || res.IsError {
		t.Fatalf("starting the chain: %v %+v", err, res)
	}
	pids := testutil.WithEnv(t, "CHAIN="+tag)
	if len(pids) != 401 {
		t.Fatalf("%d processes of the chain run, want 401", len(pids))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, "SIGTERM: "+stderr.String())
	assertGone(t, pids, "the server's SIGTERM")
}

// TestLeftoversOfKilledServerEnd: what a server that was SIGKILLed left running in its
// cgroups ends when the next server starts, and the commands of a server that still runs
// beside them are left alone.
//
// It does not run in parallel: any server another test starts meanwhile ends the killed
// server's leftovers too, before this test can see that the next server did.
func TestLeftoversOfKilledServerEnd(t *testing.T) {
	if os.Geteuid() != 0 || testutil.Cgroup2Root() == "" {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "needs cgroup v2 that Boris can write to")
	}
	// start starts a server, runs a background task and a command that leaves a process
	// running, and returns the server and the pids of both.
	start := func() (*exec.Cmd, []int) {
		dir := t.TempDir()
		base, cmd, _ := httpServer(t, "--workdir", dir)
		cs := httpClient(t, base, "")
		testutil.Fifo(t, filepath.Join(dir, "task"))
		for _, args := range []map[string]any{
			{"command": "echo $$ > task; exec sleep 302", "run_in_background": true},
			{"command": "sleep 301 >/dev/null 2>&1 & echo $! > left"},
		} {
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: args}); err != nil || res.IsError {
				t.Fatalf("bash %v: %v %+v", args, err, res)
			}
		}
		var pids []int
		for _, text := range []string{testutil.ReadFifo(t, filepath.Join(dir, "task")), readFile(t, filepath.Join(dir, "left"))} {
			var pid int
			if _, err := fmt.Sscan(text, &pid); err != nil {
				t.Fatalf("reading a pid in %q: %v", text, err)
			}
			pids = append(pids, pid)
		}
		return cmd, pids
	}
	killed, left := start()
	_, kept := start()
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitExit(t, killed, "SIGKILL")
	for _, pid := range left {
		if !alive(pid) {
			t.Fatalf("process %d ended with the server that was SIGKILLed: nothing to check", pid)
		}
	}
	httpServer(t, "--workdir", t.TempDir()) // it serves once what the killed one left has ended
	assertGone(t, left, "the next server's start")
	for _, pid := range kept {
		if !alive(pid) {
			t.Errorf("process %d of a server that still runs ended when another started", pid)
		}
	}
}

// readFile returns the content of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
