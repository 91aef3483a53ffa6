package watch_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

func testConfig(t testing.TB) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Transport = "stdio"
	cfg.WatchAddr = "127.0.0.1:0" // over STDIO the stream is kept only for --watch
	cfg.Workdir = t.TempDir()
	cfg.MaxSessions = 8
	cfg.MaxBackgroundTasks = 4
	cfg.LogLevel = slog.LevelWarn
	cfg.Shell = "/bin/bash"
	cfg.Version = "test"
	return cfg
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newServer(cfg config.Config) (*server.Server, error) {
	return server.New(&cfg, quietLog(), os.Environ())
}

// connect starts a server and a client talking to it in memory.
func connect(t testing.TB, cfg config.Config) (*mcp.ClientSession, *server.Server) {
	t.Helper()
	srv, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return testutil.Connect(t, srv.MCP(), nil), srv
}

// follower reads a subscription event by event.
type follower struct {
	t   *testing.T
	sub *watch.Subscription
	buf []watch.Event
}

func follow(t *testing.T, h *watch.Hub) *follower {
	s := h.Subscribe(0)
	t.Cleanup(s.Close)
	return &follower{t: t, sub: s}
}

// until returns the first event, from now on, that ok accepts, failing after 20 s.
func (f *follower) until(what string, ok func(watch.Event) bool) watch.Event {
	f.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for len(f.buf) > 0 {
			e := f.buf[0]
			f.buf = f.buf[1:]
			if ok(e) {
				return e
			}
		}
		evs, wait := f.sub.Next(100)
		f.buf = evs
		if wait != nil {
			select {
			case <-wait:
			case <-deadline:
				f.t.Fatalf("no event: %s", what)
			}
		}
	}
}

func callAsync(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) <-chan *mcp.CallToolResult {
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		ch <- res
	}()
	return ch
}

func textOf(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].(*mcp.TextContent).Text
}

func TestCallOutputStreamsWhileRunning(t *testing.T) {
	cfg := testConfig(t)
	cs, srv := connect(t, cfg)
	f := follow(t, srv.Watch())
	done := callAsync(t, cs, "bash", map[string]any{"command": "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second >&2; exit 3"})
	sess := f.until("session", func(e watch.Event) bool { return e.Kind == watch.KindSession })
	if sess.Client != "test" || sess.Version != "1" || sess.Transport != "stdio" || sess.Cwd != cfg.Workdir {
		t.Errorf("session event = %+v", sess)
	}
	start := f.until("call start", func(e watch.Event) bool { return e.Kind == watch.KindCall })
	if start.Tool != "bash" || !strings.HasPrefix(start.Args, "echo first;") || start.Session != sess.Session || start.Stop == "" {
		t.Errorf("call event = %+v", start)
	}
	// The command cannot end before the file exists: this output came while it ran.
	out := f.until("first line", func(e watch.Event) bool { return e.Kind == watch.KindOutput || e.Kind == watch.KindCallEnd })
	if out.Kind != watch.KindOutput || out.Text != "first\n" || out.Stream != "stdout" || out.Call != start.Call {
		t.Fatalf("first event after start = %+v", out)
	}
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	errOut := f.until("stderr", func(e watch.Event) bool { return e.Kind == watch.KindOutput })
	if errOut.Stream != "stderr" || errOut.Text != "second\n" {
		t.Errorf("stderr event = %+v", errOut)
	}
	end := f.until("call end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if end.Outcome != "exit 3" || end.Call != start.Call || end.Cwd != cfg.Workdir {
		t.Errorf("end event = %+v", end)
	}
	<-done
}

func TestStopCommandAndTask(t *testing.T) {
	cs, srv := connect(t, testConfig(t))
	h := srv.Watch()
	f := follow(t, h)
	done := callAsync(t, cs, "bash", map[string]any{"command": "echo started; sleep 100"})
	start := f.until("call start", func(e watch.Event) bool { return e.Kind == watch.KindCall })
	f.until("output", func(e watch.Event) bool { return e.Kind == watch.KindOutput }) // running now
	if !h.Stop(start.Stop) {
		t.Fatal("Stop found nothing to stop")
	}
	res := <-done
	if !strings.Contains(textOf(res), "stopped: stopped by the user") {
		t.Errorf("stopped command's result:\n%s", textOf(res))
	}
	end := f.until("call end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if !strings.HasPrefix(end.Outcome, "stopped by the user") {
		t.Errorf("outcome = %q", end.Outcome)
	}
	if h.Stop(start.Stop) {
		t.Error("a finished call could still be stopped")
	}

	<-callAsync(t, cs, "bash", map[string]any{"command": "echo task; sleep 100", "run_in_background": true})
	task := f.until("task", func(e watch.Event) bool { return e.Kind == watch.KindTask })
	if task.Task != "task-1" || task.Args != "echo task; sleep 100" {
		t.Errorf("task event = %+v", task)
	}
	if out := f.until("task output", func(e watch.Event) bool { return e.Kind == watch.KindOutput }); out.Task != "task-1" || out.Text != "task\n" {
		t.Errorf("task output = %+v", out)
	}
	if !h.Stop(task.Stop) {
		t.Fatal("Stop found no task")
	}
	tend := f.until("task end", func(e watch.Event) bool { return e.Kind == watch.KindTaskEnd })
	if !strings.Contains(tend.Outcome, "stopped by the user") {
		t.Errorf("task end = %+v", tend)
	}
	res = <-callAsync(t, cs, "task_output", map[string]any{"task_id": "task-1"})
	if !strings.Contains(textOf(res), "(stopped by the user)") {
		t.Errorf("task_output after stop:\n%s", textOf(res))
	}
}

func TestEditsShowDiffs(t *testing.T) {
	cs, srv := connect(t, testConfig(t))
	f := follow(t, srv.Watch())
	<-callAsync(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "one\ntwo\nthree\n"})
	created := f.until("create end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if !strings.Contains(created.Diff, "+one\n+two\n+three\n") || !strings.HasPrefix(created.Summary, "Created ") {
		t.Errorf("create_file event = %+v", created)
	}
	<-callAsync(t, cs, "str_replace", map[string]any{"path": "a.txt", "old_str": "two", "new_str": "2"})
	edit := f.until("edit end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if !strings.Contains(edit.Diff, "-two\n+2\n") || edit.Error {
		t.Errorf("str_replace event = %+v", edit)
	}
	<-callAsync(t, cs, "grep", map[string]any{"pattern": "three"})
	search := f.until("grep end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if !strings.HasPrefix(search.Summary, "Found 1 file") {
		t.Errorf("grep summary = %q", search.Summary)
	}
	<-callAsync(t, cs, "view", map[string]any{"path": "missing.txt"})
	failed := f.until("view end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if !failed.Error || !strings.HasPrefix(failed.Outcome, "error NOT_FOUND") {
		t.Errorf("failed view = %+v", failed)
	}
}

func TestNoWatch(t *testing.T) {
	cfg := testConfig(t)
	cfg.NoWatch = true
	cs, srv := connect(t, cfg)
	if srv.Watch() != nil {
		t.Fatal("--no-watch still has an event stream")
	}
	if res := <-callAsync(t, cs, "bash", map[string]any{"command": "echo ok"}); !strings.Contains(textOf(res), "ok") {
		t.Errorf("bash without watch: %s", textOf(res))
	}
}
