package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestFleet runs a small fleet of real Borises, each in its own network namespace, behind
// the router-contract proxy with a short deadline, and checks Boris's side of the contract
// end to end: warm pods that take their token from /init once, many concurrent stateless
// clients with no error, a call longer than the router's deadline answered in time, a
// token of another sandbox refused, and a Boris stopped with SIGTERM and started again on
// the same state directory that answers for its workspaces and tasks.
func TestFleet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: each Boris gets a network namespace of its own")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	bin := filepath.Join(t.TempDir(), "boris")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mjkoo/boris/cmd/boris").CombinedOutput(); err != nil {
		t.Fatalf("building boris: %v\n%s", err, out)
	}
	dir := t.TempDir()
	const deadline = 4 * time.Second
	f, err := NewFleet(bin, dir, deadline)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for i := range 3 {
		sb, err := f.Add(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sb.Dir, "workspace", "file.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.Start(sb); err != nil {
			t.Fatal(err)
		}
		if err := f.Claim(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	sb0, sb1 := f.Sandboxes[0], f.Sandboxes[1]

	// A second /init, with another token, is refused: the pod is claimed.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.RouterURL+"/init", strings.NewReader(`{"token":"another-token-0123456789"}`))
	req.Header.Set("X-Sandbox-ID", sb0.Name)
	req.Header.Set("Boris-Init", f.Bootstrap)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("a second /init: %v %v, want 409", resp, err)
	} else {
		resp.Body.Close()
	}
	// Another sandbox's token is refused.
	stranger := f.Client(sb0, "x")
	stranger.token = sb1.Token
	if _, _, err := stranger.Tool(ctx, "bash", map[string]any{"command": "true"}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("another sandbox's token: %v, want 401", err)
	}

	// Many concurrent stateless clients: no error.
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for c := range 24 {
		sb := f.Sandboxes[c%3]
		cl := f.Client(sb, fmt.Sprintf("c%d", c))
		wg.Go(func() {
			for k := range 10 {
				tool, args := "bash", map[string]any{"command": "echo ok-" + sb.Name}
				want := "ok-" + sb.Name
				if k%2 == 1 {
					tool, args, want = "view", map[string]any{"path": "file.txt"}, "two"
				}
				text, isErr, err := cl.Tool(ctx, tool, args)
				if err != nil || isErr || !strings.Contains(text, want) {
					errs <- fmt.Errorf("%s %s: %v %q", sb.Name, tool, err, text)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Longer than the router's deadline: answered before it, as a task.
	cl := f.Client(sb0, "persist")
	t0 := time.Now()
	text, _, err := cl.Tool(ctx, "bash", map[string]any{"command": "sleep 6; echo late"})
	if err != nil || time.Since(t0) >= deadline {
		t.Fatalf("a call longer than the router's deadline: %v after %s", err, time.Since(t0))
	}
	m := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("a call longer than the router's deadline answered %q, want a task", text)
	}
	if text, _, err := cl.Tool(ctx, "task_output", map[string]any{"task_id": m[1], "until": "late", "wait_ms": 20000}); err != nil || !strings.Contains(text, "late") {
		t.Errorf("task_output after the deadline: %v %q", err, text)
	}

	// Suspend and resume: SIGTERM, then the same state directory.
	if _, _, err := cl.Tool(ctx, "bash", map[string]any{"command": "mkdir -p sub && cd sub && export MARK=kept"}); err != nil {
		t.Fatal(err)
	}
	text, _, err = cl.Tool(ctx, "bash", map[string]any{"command": "echo begun; sleep 600", "run_in_background": true})
	bg := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(text)
	if err != nil || bg == nil {
		t.Fatalf("background task: %v %q", err, text)
	}
	if _, _, err := cl.Tool(ctx, "task_output", map[string]any{"task_id": bg[1], "until": "begun", "wait_ms": 20000}); err != nil {
		t.Fatal(err)
	}
	if err := f.Stop(sb0, syscall.SIGTERM); err != nil {
		t.Errorf("Boris after SIGTERM: %v\n%s", err, sb0.stderr)
	}
	if err := f.Start(sb0); err != nil {
		t.Fatal(err)
	}
	// No /init: the claim was kept on the volume. Wait until it serves.
	for ctx.Err() == nil {
		resp, err := http.Get("http://" + sb0.IP + ":8888/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(5 * time.Millisecond) // polling a process's start
	}
	text, _, err = cl.Tool(ctx, "bash", map[string]any{"command": `echo "pwd=$PWD mark=$MARK"`})
	if err != nil || !strings.Contains(text, "pwd="+filepath.Join(sb0.Dir, "workspace", "sub")+" mark=kept") {
		t.Errorf("the workspace after SIGTERM and a restart: %v %q", err, text)
	}
	_, _, err = cl.Tool(ctx, "task_output", map[string]any{"task_id": bg[1]})
	text, isErr, err2 := cl.Tool(ctx, "task_output", map[string]any{"task_id": bg[1]})
	if err2 != nil || !isErr || !strings.Contains(text, "shut down") || !strings.Contains(text, "begun") {
		t.Errorf("task_output of a task the SIGTERM ended: %v %v %q", err, err2, text)
	}
}
