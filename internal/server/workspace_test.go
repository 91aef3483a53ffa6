package server

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

// named adds a workspace name to every request a client makes.
type named struct {
	name string
	next http.RoundTripper
}

func (n named) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(WorkspaceHeader, n.name)
	return n.next.RoundTrip(r)
}

func dialWorkspace(t *testing.T, url, token, name string) *mcp.ClientSession {
	t.Helper()
	var rt http.RoundTripper = http.DefaultTransport
	if token != "" {
		rt = testutil.Bearer(token, rt)
	}
	if name != "" {
		rt = named{name, rt}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: stateless})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != stateless {
		t.Fatalf("negotiated %s, want %s", got, stateless)
	}
	return cs
}

// TestBothProtocolsOneServer: one server serves a sessionful and a stateless client; the
// stateless requests share a workspace whose cwd, environment and background tasks persist
// across requests, apart from the sessionful client's own state.
func TestBothProtocolsOneServer(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Token = "tok-both"
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(cfg.Workdir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, ts := start(t, cfg)
	old, err := dialAt(t, ts.URL, cfg.Token, sessionful)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if old.ID() == "" || old.InitializeResult().ProtocolVersion != sessionful {
		t.Fatalf("sessionful client: session %q, version %s", old.ID(), old.InitializeResult().ProtocolVersion)
	}
	first := dialWorkspace(t, ts.URL, cfg.Token, "")
	if first.ID() != "" {
		t.Errorf("stateless client got a session id %q", first.ID())
	}

	bashText(t, old, "cd a && export WHO=old")
	bashText(t, first, "cd b && export WHO=new")
	res, err := first.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 30", "run_in_background": true}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %s", err, text(res))
	}
	id := taskID(text(res))

	// Another stateless client with the same credential: the same workspace.
	second := dialWorkspace(t, ts.URL, cfg.Token, "")
	if got := bashText(t, second, `echo "$(basename "$PWD") $WHO"`); !strings.Contains(got, "b new") {
		t.Errorf("stateless workspace lost its state across requests: %q", got)
	}
	res, err = second.CallTool(t.Context(), &mcp.CallToolParams{Name: "task_list", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(text(res), id) {
		t.Errorf("task %q not listed in a later stateless request: %v %s", id, err, text(res))
	}
	if got := bashText(t, old, `echo "$(basename "$PWD") $WHO"`); !strings.Contains(got, "a old") {
		t.Errorf("sessionful state mixed with the workspace: %q", got)
	}

	// A named workspace is separate.
	other := dialWorkspace(t, ts.URL, cfg.Token, "other")
	if got := bashText(t, other, `echo "$(basename "$PWD") $WHO"`); strings.Contains(got, "b new") {
		t.Errorf("named workspace shares the default one's state: %q", got)
	}
}

// taskID picks the background task id from a bash result.
func taskID(out string) string {
	m := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		return "(no task id in " + out + ")"
	}
	return m[1]
}

func text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestStatelessOnly: with --stateless, a client of either revision is served without a
// session, in the shared workspace.
func TestStatelessOnly(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Stateless = true
	_, ts := start(t, cfg)
	resp := post(t, ts.URL+"/mcp", initBody, nil)
	_, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize with --stateless = %d, session %q; want 200 and no session", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	old, err := dialAt(t, ts.URL, "", sessionful)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	bashText(t, old, "mkdir -p x && cd x")
	if got := bashText(t, dialWorkspace(t, ts.URL, "", ""), "pwd"); !strings.HasSuffix(strings.TrimSpace(got), "/x") {
		t.Errorf("stateless server: the 2025-11-25 client's cd is not in the shared workspace: %q", got)
	}
}

// TestWorkspaceLimit: workspaces are bounded; a full table closes the least recently used
// idle one.
func TestWorkspaceLimit(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.MaxSessions = 2
	srv, ts := start(t, cfg)
	for _, name := range []string{"one", "two", "three"} {
		cs := dialWorkspace(t, ts.URL, "", name)
		bashText(t, cs, "mkdir -p "+name+" && cd "+name)
	}
	n := srv.workspaces.len()
	if n > 2 {
		t.Errorf("%d workspaces open, limit 2", n)
	}
	if got := bashText(t, dialWorkspace(t, ts.URL, "", "three"), "pwd"); !strings.HasSuffix(strings.TrimSpace(got), "/three") {
		t.Errorf("the newest workspace lost its state: %q", got)
	}
	if got := bashText(t, dialWorkspace(t, ts.URL, "", "one"), "pwd"); strings.HasSuffix(strings.TrimSpace(got), "/one") {
		t.Errorf("the least recently used workspace was kept: %q", got)
	}
}

// TestIdleWorkspaceReaped: a workspace left idle is closed and its background processes die.
func TestIdleWorkspaceReaped(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.SessionIdleTimeout = 300 * time.Millisecond
	srv, ts := start(t, cfg)
	cs := dialWorkspace(t, ts.URL, "", "")
	gone := fifo(t, filepath.Join(cfg.Workdir, "gone"))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "exec 3> gone; exec sleep 300", "run_in_background": true,
	}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %s", err, text(res))
	}
	receive(t, gone, "the idle workspace's processes to end") // the server's own idle timer
	n := srv.workspaces.len()
	if n != 0 {
		t.Fatalf("idle workspace not forgotten: %d open", n)
	}
}

// TestStatelessCallsInTheLiveView: the live view shows the stateless calls of one client
// in their workspace, which opens once; no call gets a state of its own.
func TestStatelessCallsInTheLiveView(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, newConfig(t))
	cs := dialWorkspace(t, ts.URL, "", "")
	for range 3 {
		bashText(t, cs, "true")
	}
	sub := srv.Watch().Subscribe(0)
	defer sub.Close()
	evs, _ := sub.Next(1000)
	var opened []string
	var shown []string
	for _, e := range evs {
		switch e.Kind {
		case watch.KindSession, watch.KindSessionEnd:
			opened = append(opened, e.Kind+" "+e.Session)
			if e.Transport != "http (stateless)" {
				t.Errorf("session %q opened over %q, want a stateless workspace", e.Session, e.Transport)
			}
		case watch.KindCall:
			shown = append(shown, e.Session)
		}
	}
	if len(shown) != 3 || len(opened) != 1 || slices.ContainsFunc(shown, func(s string) bool { return watch.KindSession+" "+s != opened[0] }) {
		t.Errorf("live view: calls in sessions %q, sessions %q; want 3 calls in one workspace opened once", shown, opened)
	}
}

// header sets a header on every request a client makes, as given.
type header struct {
	key, value string
	next       http.RoundTripper
}

func (h header) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header[h.key] = []string{h.value}
	return h.next.RoundTrip(r)
}

// dialStateless connects a stateless client through rt.
func dialStateless(t *testing.T, url string, rt http.RoundTripper) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: stateless})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestWorkspaceHeaderBlank: a Boris-Workspace header that is present but blank, or given
// twice, is refused with 400, not taken as no header (the shared workspace).
func TestWorkspaceHeaderBlank(t *testing.T) {
	t.Parallel()
	_, ts := start(t, newConfig(t))
	post := func(names ...string) (int, string) {
		req, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+stateless+`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", stateless)
		req.Header.Set("Mcp-Method", "tools/list")
		if names != nil {
			req.Header[WorkspaceHeader] = names
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(); code != http.StatusOK {
		t.Fatalf("stateless tools/list without %s = %d %s", WorkspaceHeader, code, body)
	}
	for _, names := range [][]string{{""}, {"   "}, {"\t"}, {"a", "b"}} {
		if code, body := post(names...); code != http.StatusBadRequest || !strings.Contains(body, WorkspaceHeader) {
			t.Errorf("%s: %q = %d %s, want 400 saying why", WorkspaceHeader, names, code, body)
		}
	}
}

// TestWorkspaceKeyedOnToken: one token spelt two ways (scheme case, spaces) is one
// credential, and so one workspace.
func TestWorkspaceKeyedOnToken(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.Token = "tok-spelling"
	if err := os.Mkdir(filepath.Join(cfg.Workdir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, ts := start(t, cfg)
	a, err := dialStateless(t, ts.URL, header{"Authorization", "Bearer tok-spelling", http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	bashText(t, a, "cd sub")
	b, err := dialStateless(t, ts.URL, header{"Authorization", "bearer   tok-spelling ", http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	if got := bashText(t, b, "pwd"); !strings.HasSuffix(strings.TrimSpace(got), "/sub") {
		t.Errorf("the same token spelt otherwise is in another workspace: pwd = %q", got)
	}
}

// from makes requests from the loopback address ip.
func from(ip string) http.RoundTripper {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Transport{DialContext: d.DialContext}
}

// TestWorkspaceOwnerQuota: a client opening many workspace names pushes out its own idle
// workspaces, not the other clients'.
func TestWorkspaceOwnerQuota(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.MaxSessions = 4 // one workspace a client
	_, ts := start(t, cfg)
	victims := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	for _, ip := range victims {
		cs, err := dialStateless(t, ts.URL, named{"mine-" + ip, from(ip)})
		if err != nil {
			t.Fatal(err)
		}
		bashText(t, cs, "mkdir -p "+ip+" && cd "+ip)
	}
	for i := range 10 {
		cs, err := dialStateless(t, ts.URL, named{"flood" + strconv.Itoa(i), from("127.0.0.1")})
		if err != nil {
			t.Fatal(err)
		}
		bashText(t, cs, "true")
	}
	for _, ip := range victims {
		cs, err := dialStateless(t, ts.URL, named{"mine-" + ip, from(ip)})
		if err != nil {
			t.Fatal(err)
		}
		if got := bashText(t, cs, "pwd"); !strings.HasSuffix(strings.TrimSpace(got), "/"+ip) {
			t.Errorf("the workspace of %s was pushed out by another client: pwd = %q", ip, got)
		}
	}
}

// TestBusyWorkspaceKept: a client at its share of workspaces whose workspace runs a
// background task is refused a new one; the task's workspace is not closed for it.
func TestBusyWorkspaceKept(t *testing.T) {
	t.Parallel()
	cfg := newConfig(t)
	cfg.MaxSessions = 4 // one workspace a client
	_, ts := start(t, cfg)
	busy, err := dialStateless(t, ts.URL, named{"busy", http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	res, err := busy.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 300", "run_in_background": true}})
	if err != nil || res.IsError {
		t.Fatalf("background bash: %v %s", err, text(res))
	}
	next, err := dialStateless(t, ts.URL, named{"next", http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	res, err = next.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "background task running") {
		t.Errorf("a new workspace past the client's share: %v %s; want it refused", err, text(res))
	}
	if got := bashText(t, busy, "jobs; echo alive"); !strings.Contains(got, "alive") {
		t.Errorf("the busy workspace: %q", got)
	}
	res, err = busy.CallTool(t.Context(), &mcp.CallToolParams{Name: "task_list", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(text(res), "running") {
		t.Errorf("the busy workspace's task after another name was refused: %v %s", err, text(res))
	}
}
