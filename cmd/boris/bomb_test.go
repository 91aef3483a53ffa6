package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
)

// bombLimit is the pids limit the server under test runs under, as a container or a
// systemd unit (TasksMax) would set it.
const bombLimit = 400

// limitedServer starts boris over HTTP in a cgroup of its own whose pids.max is max, and
// returns its base URL and process.
func limitedServer(t *testing.T, max int, args ...string) (string, *exec.Cmd, *syncBuffer) {
	t.Helper()
	procs := testutil.PidsCgroup(t, max)
	if procs == "" {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "needs root and a pids controller to put the server under a process limit")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	stderr := &syncBuffer{}
	argv := append([]string{binary, "--port", fmt.Sprint(port)}, args...)
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, procs}, argv...)...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if !stderr.waitFor("serving http", 20*time.Second) {
		t.Fatalf("server did not start: %s", stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), cmd, stderr
}

// bomb is a fork bomb, followed by then; every process of it has BOMB=tag in its
// environment.
func bomb(tag, then string) string {
	return "BOMB=" + tag + " bash -c 'bomb() { bomb | bomb & }; bomb" + then + "'"
}

// callers keeps n other clients calling bash and view until stop is closed, and returns
// a function that waits for them and reports the calls that failed.
func callers(t *testing.T, base, dir string, n int, stop chan struct{}) func() []string {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	for i := range n {
		cs := httpClient(t, base, "")
		wg.Go(func() {
			for calls := 0; ; calls++ {
				select {
				case <-stop:
					if calls > 0 {
						return
					}
				default:
				}
				name, args := "bash", map[string]any{"command": fmt.Sprintf("echo caller %d", i)}
				if calls%2 == 1 {
					name, args = "view", map[string]any{"path": filepath.Join(dir, "hello.txt")}
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil || res.IsError {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s: %v %s", name, err, resultText(res)))
					mu.Unlock()
					return
				}
			}
		})
	}
	return func() []string {
		wg.Wait()
		return failed
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// assertBombGone waits, bounded, until no process of the bomb tagged tag runs.
func assertBombGone(t *testing.T, tag, after string) {
	t.Helper()
	deadline := time.Now().Add(testutil.Within)
	for {
		left := testutil.WithEnv(t, "BOMB="+tag)
		if len(left) == 0 {
			return
		}
		if !testutil.Exited(left[0], deadline) {
			t.Fatalf("%d processes of the fork bomb survived %s", len(left), after)
		}
	}
}

// TestForkBomb: a fork bomb in one session, in a server that runs under a process limit
// (as in a container or a systemd unit), neither kills the server nor keeps other
// sessions from being served, and nothing of it survives its command's end, its session's
// end, or the server's SIGTERM.
func TestForkBomb(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"command", "session", "SIGTERM"} {
		t.Run(end, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			base, cmd, stderr := limitedServer(t, bombLimit, "--workdir", dir, "--max-sessions", "64")
			stop := make(chan struct{})
			wait := callers(t, base, dir, 30, stop)
			cs := httpClient(t, base, "")
			tag := fmt.Sprint("bomb", time.Now().UnixNano())
			// In the foreground it waits, so that the call ends once the bomb has hit its
			// limit, not before: one that returned at once is killed later, unannounced
			// (TestProcessLimit in internal/shell).
			args := map[string]any{"command": bomb(tag, "; sleep 300")}
			if end != "command" {
				args = map[string]any{"command": bomb(tag, ""), "run_in_background": true}
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: args})
			if err != nil {
				t.Fatalf("bash(bomb): %v (server: %s)", err, stderr.String())
			}
			text := resultText(res)
			switch end {
			case "command":
				if !strings.Contains(text, "process limit") {
					t.Errorf("bash(bomb) = %s, want it to say that the command hit its process limit", text)
				}
				assertBombGone(t, tag, "its command's end")
			case "session":
				// Once it has hit its limit, the task has ended.
				_ = cs.Close()
				assertBombGone(t, tag, "its session's end")
			}
			close(stop)
			if failed := wait(); len(failed) > 0 {
				t.Errorf("other sessions' calls failed during the bomb: %q", failed)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitExit(t, cmd, "SIGTERM: "+stderr.String())
			if !cmd.ProcessState.Success() {
				t.Errorf("the server exited with %v after SIGTERM: %s", cmd.ProcessState, stderr.String())
			}
			assertBombGone(t, tag, "the server's SIGTERM")
		})
	}
}

// TestProcessLimitWithoutCgroups: where Boris cannot make cgroups (here, as an
// unprivileged user), a command's shell sets RLIMIT_NPROC to the commands' share of
// Boris's own, keeping a reserve for the server.
func TestProcessLimitWithoutCgroups(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testutil.Missing(t, "BORIS_REQUIRE_CGROUP", "needs root, to run the server as another user")
	}
	// The server runs as nobody: it must reach its binary and its working directory.
	if err := os.Chmod(filepath.Dir(binary), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "boris-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", "-c", `ulimit -u 300 && exec "$0" --transport stdio --workdir "$1"`, binary, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = &syncBuffer{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v (stderr: %s)", err, cmd.Stderr)
	}
	defer cs.Close()
	for _, command := range []string{"ulimit -u", "cd . && ulimit -u"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatal(err)
		}
		// 300 less the server's reserve: an eighth, at least 64.
		if text := resultText(res); !strings.Contains(text, "stdout:\n236\n") {
			t.Errorf("bash(%q) = %s, want the limit 236", command, text)
		}
	}
}
