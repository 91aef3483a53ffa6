package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

// tasksExt is the Tasks extension's name, as clients declare it.
const tasksExt = "io.modelcontextprotocol/tasks"

// rpc sends one raw 2026-07-28 request and returns its result or its error.
type rpc interface {
	call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error)
}

// requestMeta is the _meta of a 2026-07-28 request, declaring the Tasks extension or not.
func requestMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{tasksExt: map[string]any{}}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    stateless,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
}

// memRPC speaks to a server over an in-memory connection, one request at a time.
type memRPC struct {
	conn mcp.Connection
	next atomic.Int64
}

func dialMem(t *testing.T, srv *Server) *memRPC {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		_ = ss.Wait()
	})
	return &memRPC{conn: conn}
}

func (c *memRPC) call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(c.next.Add(1)))
	if err := c.conn.Write(t.Context(), &jsonrpc.Request{ID: id, Method: method, Params: body}); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := c.conn.Read(t.Context())
		if err != nil {
			t.Fatalf("%s: reading the response: %v", method, err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
			return resp.Result, wireError(t, resp.Error)
		}
	}
}

func wireError(t *testing.T, err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return we
}

// httpRPC speaks stateless HTTP to a server, in a workspace of its own name.
type httpRPC struct {
	url, workspace string
	next           atomic.Int64
}

func (c *httpRPC) call(t *testing.T, method string, params map[string]any) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next.Add(1), "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.url+"/mcp", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := params["name"].(string)
	if id, ok := params["taskId"].(string); ok {
		name = id
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": stateless, "Mcp-Method": method, "Mcp-Name": name, WorkspaceHeader: c.workspace} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		data := strings.TrimPrefix(lines.Text(), "data: ")
		if !strings.HasPrefix(data, "{") {
			continue
		}
		var msg struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("%s: response %q: %v", method, data, err)
		}
		if msg.Result != nil || msg.Error != nil {
			return msg.Result, msg.Error
		}
	}
	t.Fatalf("%s: no response (HTTP %d): %v", method, resp.StatusCode, lines.Err())
	return nil, nil
}

// taskState is what tools/call (as a task) and tasks/get return.
type taskState struct {
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          *int64              `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs"`
	Result         *mcp.CallToolResult `json:"result"`
	Content        []json.RawMessage   `json:"content"` // set when a call was answered inline
}

func decodeState(t *testing.T, raw json.RawMessage, rpcErr *jsonrpc.Error) taskState {
	t.Helper()
	if rpcErr != nil {
		t.Fatalf("protocol error %d: %s", rpcErr.Code, rpcErr.Message)
	}
	var s taskState
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return s
}

// bashCall is tools/call of bash, declaring the Tasks extension or not.
func bashCall(t *testing.T, c rpc, declare bool, args map[string]any) (taskState, json.RawMessage) {
	t.Helper()
	raw, rpcErr := c.call(t, "tools/call", map[string]any{"name": "bash", "arguments": args, "_meta": requestMeta(declare)})
	return decodeState(t, raw, rpcErr), raw
}

// toolText is the text of an inline tools/call result of tool.
func toolText(t *testing.T, c rpc, tool string, args map[string]any) string {
	t.Helper()
	raw, rpcErr := c.call(t, "tools/call", map[string]any{"name": tool, "arguments": args, "_meta": requestMeta(true)})
	if rpcErr != nil {
		t.Fatalf("%s: protocol error %s", tool, rpcErr.Message)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func taskCall(t *testing.T, c rpc, method, id string, declare bool) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	return c.call(t, method, map[string]any{"taskId": id, "_meta": requestMeta(declare)})
}

func getTask(t *testing.T, c rpc, id string) taskState {
	t.Helper()
	raw, rpcErr := taskCall(t, c, "tasks/get", id, true)
	return decodeState(t, raw, rpcErr)
}

// awaitEnd waits, with task_output, until background task id has ended.
func awaitEnd(t *testing.T, c rpc, id string) {
	t.Helper()
	deadline := time.Now().Add(testutil.Within)
	for time.Now().Before(deadline) {
		if !strings.Contains(toolText(t, c, "task_output", map[string]any{"task_id": id, "wait_ms": 5000}), "status: running") {
			return
		}
	}
	t.Fatalf("task %s still runs after %v", id, testutil.Within)
}

func tasksConfig(t *testing.T) config.Config {
	cfg := newConfig(t)
	cfg.KillGrace = 2 * time.Second
	return cfg
}

// TestTasksBackground: over STDIO-like and stateless HTTP connections, a background bash
// from a client declaring the extension is a task; tasks/get shows it working, then
// completed with the output, and the same task is Boris's background task, which
// task_output reads by its id.
func TestTasksBackground(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			cfg := tasksConfig(t)
			srv, ts := start(t, cfg)
			var c rpc = &httpRPC{url: ts.URL, workspace: "a"}
			if transport == "memory" {
				c = dialMem(t, srv)
			}
			ready, release := filepath.Join(cfg.Workdir, "ready"), filepath.Join(cfg.Workdir, "release")
			testutil.Fifo(t, ready)
			testutil.Fifo(t, release)
			created, raw := bashCall(t, c, true, map[string]any{"command": "echo started; echo ok > " + ready + "; read x < " + release + "; echo finished $x", "run_in_background": true})
			if created.ResultType != "task" || created.Status != "working" || created.TTLMs == nil || created.PollIntervalMs <= 0 || created.CreatedAt == "" {
				t.Fatalf("background call = %s, want a working task", raw)
			}
			local, random, _ := strings.Cut(created.TaskID, ".")
			if !strings.HasPrefix(local, "task-") || len(random) < 20 {
				t.Errorf("task id %q: want a background task id, a dot and a random part", created.TaskID)
			}
			testutil.ReadFifo(t, ready)
			if got := getTask(t, c, created.TaskID); got.Status != "working" || got.ResultType != "complete" || got.Result != nil {
				t.Errorf("tasks/get while it runs = %+v, want working with no result", got)
			}
			if got := toolText(t, c, "task_output", map[string]any{"task_id": local, "wait_ms": 10000}); !strings.Contains(got, "started") {
				t.Errorf("task_output of %s = %q, want its output so far", local, got)
			}
			if err := os.WriteFile(release, []byte("now\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			awaitEnd(t, c, created.TaskID)
			done := getTask(t, c, created.TaskID)
			if done.Status != "completed" || done.Result == nil || done.Result.IsError {
				t.Fatalf("tasks/get after the end = %+v, want completed with a result", done)
			}
			text := done.Result.Content[0].(*mcp.TextContent).Text
			for _, want := range []string{"exit_code: 0", "started\nfinished now", local} {
				if !strings.Contains(text, want) {
					t.Errorf("task result %q lacks %q", text, want)
				}
			}
		})
	}
}

// TestTasksForeground: a foreground bash still running after the threshold becomes a task
// whose result is the command's; one that ends sooner is answered inline, as is a call
// that does not declare the extension, however long it runs.
func TestTasksForeground(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	cfg.TaskAfter = 2 * time.Second // long enough for the short commands on a loaded machine
	srv, _ := start(t, cfg)
	c := dialMem(t, srv)
	if got, raw := bashCall(t, c, true, map[string]any{"command": "cd /; echo quick"}); got.ResultType == "task" || !strings.Contains(string(raw), "quick") {
		t.Errorf("short command = %s, want an inline result", raw)
	}
	if got := toolText(t, c, "bash", map[string]any{"command": "pwd"}); !strings.Contains(got, "stdout:\n/\n") {
		t.Errorf("after an inline cd /, pwd = %q: the cd should have held", got)
	}
	release := filepath.Join(cfg.Workdir, "release")
	testutil.Fifo(t, release)
	created, raw := bashCall(t, c, true, map[string]any{"command": "echo waiting; read x < " + release + "; echo got $x; exit 3"})
	if created.ResultType != "task" || created.Status != "working" {
		t.Fatalf("long command = %s, want a task", raw)
	}
	if err := os.WriteFile(release, []byte("it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, c, created.TaskID)
	done := getTask(t, c, created.TaskID)
	if done.Status != "completed" || done.Result == nil {
		t.Fatalf("tasks/get = %+v, want completed", done)
	}
	if text := done.Result.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "exit_code: 3") || !strings.Contains(text, "waiting\ngot it") {
		t.Errorf("task result = %q, want exit code 3 and the whole output", text)
	}

	// Undeclared: inline, after the threshold too, and tasks/get is refused.
	testutil.Fifo(t, release+"2")
	go func() { _ = os.WriteFile(release+"2", []byte("late\n"), 0o600) }()
	got, raw := bashCall(t, c, false, map[string]any{"command": "sleep 2.5; read x < " + release + "2; echo got $x"})
	if got.ResultType == "task" || !strings.Contains(string(raw), "got late") {
		t.Errorf("undeclared long command = %s, want an inline result", raw)
	}
	if got, raw := bashCall(t, c, false, map[string]any{"command": "sleep 5", "run_in_background": true}); got.ResultType == "task" || !strings.Contains(string(raw), "task_id: task-") {
		t.Errorf("undeclared background command = %s, want the inline start", raw)
	}
	if _, rpcErr := taskCall(t, c, "tasks/get", created.TaskID, false); rpcErr == nil || rpcErr.Code != -32021 {
		t.Errorf("undeclared tasks/get = %v, want error -32021", rpcErr)
	}
}

// TestTasksCancel: tasks/cancel, sent twice as Claude Code does, is acknowledged both
// times and stops the command; the task ends cancelled. (That the work is asked to stop
// once is TestCancelOnce's.)
func TestTasksCancel(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	srv, _ := start(t, cfg)
	c := dialMem(t, srv)
	ready := filepath.Join(cfg.Workdir, "ready")
	testutil.Fifo(t, ready)
	created, _ := bashCall(t, c, true, map[string]any{"run_in_background": true,
		"command": "echo $$ > " + ready + "; while :; do sleep 0.05; done"})
	pid, err := strconv.Atoi(strings.TrimSpace(testutil.ReadFifo(t, ready)))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if raw, rpcErr := taskCall(t, c, "tasks/cancel", created.TaskID, true); rpcErr != nil || !strings.Contains(string(raw), `"resultType":"complete"`) {
			t.Fatalf("tasks/cancel = %s, %v; want an acknowledgement", raw, rpcErr)
		}
	}
	if !testutil.Exited(pid, time.Now().Add(testutil.Within)) {
		t.Fatalf("the command (pid %d) still runs after tasks/cancel", pid)
	}
	awaitEnd(t, c, created.TaskID)
	if got := getTask(t, c, created.TaskID); got.Status != "cancelled" {
		t.Errorf("tasks/get after cancel = %+v, want cancelled", got)
	}
	if _, rpcErr := taskCall(t, c, "tasks/cancel", created.TaskID, true); rpcErr != nil {
		t.Errorf("tasks/cancel of an ended task: %v, want an acknowledgement", rpcErr)
	}
}

// TestTasksUnknownExpiredOrOthers: tasks/get of an unknown task, of another workspace's
// task, or of a task past its TTL gets the invalid params error, never the task.
func TestTasksUnknownExpiredOrOthers(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	cfg.TaskTTL = 100 * time.Millisecond
	_, ts := start(t, cfg)
	a, b := &httpRPC{url: ts.URL, workspace: "a"}, &httpRPC{url: ts.URL, workspace: "b"}
	release := filepath.Join(cfg.Workdir, "release")
	testutil.Fifo(t, release)
	created, _ := bashCall(t, a, true, map[string]any{"command": "read x < " + release + "; echo secret", "run_in_background": true})
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		raw, rpcErr := taskCall(t, b, method, created.TaskID, true)
		if rpcErr == nil || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "not found") {
			t.Errorf("%s of another workspace's task = %s, %v; want invalid params, not found", method, raw, rpcErr)
		}
		if _, rpcErr := taskCall(t, a, method, "task-1.NOSUCHTASK", true); rpcErr == nil || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s of an unknown task = %v, want invalid params", method, rpcErr)
		}
	}
	// The TTL passes (time itself is what is tested): a running task does not expire,
	// an ended one does, a TTL after it ended.
	time.Sleep(2 * cfg.TaskTTL)
	if got := getTask(t, a, created.TaskID); got.Status != "working" {
		t.Fatalf("tasks/get of a running task past the TTL = %+v, want working", got)
	}
	if err := os.WriteFile(release, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, a, created.TaskID)
	time.Sleep(2 * cfg.TaskTTL)
	raw, rpcErr := taskCall(t, a, "tasks/get", created.TaskID, true)
	if rpcErr == nil || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "expired") {
		t.Errorf("tasks/get past the TTL = %s, %v; want invalid params, expired", raw, rpcErr)
	}
}

// TestTasksEndWithSession: a task's processes end when the session that made it ends.
func TestTasksEndWithSession(t *testing.T) {
	t.Parallel()
	cfg := tasksConfig(t)
	srv, _ := start(t, cfg)
	c := dialMem(t, srv)
	ready := filepath.Join(cfg.Workdir, "ready")
	testutil.Fifo(t, ready)
	created, _ := bashCall(t, c, true, map[string]any{"command": "echo $$ > " + ready + "; sleep 600", "run_in_background": true})
	if created.ResultType != "task" {
		t.Fatalf("want a task, got %+v", created)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(testutil.ReadFifo(t, ready)))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.conn.Close()
	if !testutil.Exited(pid, time.Now().Add(testutil.Within)) {
		t.Errorf("task process %d still runs after its session ended", pid)
	}
}

// TestTasksDiscover: server/discover lists the extension.
func TestTasksDiscover(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, tasksConfig(t))
	raw, rpcErr := dialMem(t, srv).call(t, "server/discover", map[string]any{"_meta": requestMeta(true)})
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	var res struct {
		Capabilities struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Capabilities.Extensions[tasksExt]; !ok {
		t.Errorf("server/discover = %s, want the %s extension", raw, tasksExt)
	}
}

// TestTasksLargeResult: a task's result keeps the budget of an inline one: the head and
// tail of a long output around a marker naming the file that holds all of it.
func TestTasksLargeResult(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, tasksConfig(t))
	c := dialMem(t, srv)
	created, _ := bashCall(t, c, true, map[string]any{"command": "seq 1 200000", "run_in_background": true})
	awaitEnd(t, c, created.TaskID)
	done := getTask(t, c, created.TaskID)
	if done.Status != "completed" || done.Result == nil {
		t.Fatalf("tasks/get = %+v, want completed", done)
	}
	text := done.Result.Content[0].(*mcp.TextContent).Text
	if len(text) > 40_000 || !strings.Contains(text, "stdout:\n1\n2\n") || !strings.Contains(text, "\n200000\n") || !strings.Contains(text, "characters omitted") {
		t.Fatalf("task result (%d bytes) is not the head and tail of the output around a marker:\n%.2000s", len(text), text)
	}
	m := regexp.MustCompile(`(/\S+\.stdout)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the marker names no file holding the output: %.2000s", text)
	}
	if b, err := os.ReadFile(m[1]); err != nil || !strings.HasSuffix(string(b), "\n199999\n200000\n") {
		t.Errorf("the spill file %s: %v, %d bytes", m[1], err, len(b))
	}
}
