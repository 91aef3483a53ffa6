package watch_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/testutil"
	"github.com/mjkoo/boris/internal/watch"
)

const viewToken = "rewind-test-token"

// viewServer serves Boris over HTTP with a token and checkpoints on, as `boris --token`
// does: /mcp for the client, /watch for the person watching.
func viewServer(t *testing.T, edit func(*config.Config)) (*httptest.Server, *server.Server, config.Config) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Transport, cfg.Host, cfg.Token = "http", "127.0.0.1", viewToken
	cfg.Checkpoints, cfg.StateDir = true, t.TempDir()
	cfg.CheckpointMaxFileSize = 1 << 20
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(&cfg, quietLog(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return ts, srv, cfg
}

func httpClient(t *testing.T, ts *httptest.Server) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: testutil.Bearer(viewToken, nil)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// postView sends body to a POST action of the view as the page does (same origin, the
// token), with hdr changing or removing ("") headers; it returns the status and the body.
func postView(t *testing.T, ts *httptest.Server, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+viewToken)
	req.Header.Set("Origin", ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func rewindView(t *testing.T, ts *httptest.Server, to string, dry, force bool) watch.Rewind {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"to": to, "dry_run": dry, "force": force})
	code, out := postView(t, ts, "/watch/rewind", string(body), nil)
	if code != http.StatusOK {
		t.Fatalf("rewind to %s (dry run %v): %d %s", to, dry, code, out)
	}
	var r watch.Rewind
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("rewind answer %q: %v", out, err)
	}
	return r
}

var checkpointLine = regexp.MustCompile(`(?m)^checkpoint: (cp-\d+) \((\d+) files? changed\)$`)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A command's changes show as its call's checkpoint; the view's dry run lists them and
// changes nothing; the rewind puts the files back byte for byte, shows as a call of its
// own, and its rescue checkpoint, rewound to from the view, undoes it.
func TestRewindFromTheView(t *testing.T) {
	orig := []byte("line one\r\nβ\x00 binary\n\ttail without newline")
	ts, srv, cfg := viewServer(t, func(cfg *config.Config) {
		if err := os.WriteFile(filepath.Join(cfg.Workdir, "keep.txt"), orig, 0o640); err != nil {
			t.Fatal(err)
		}
	})
	keep, made := filepath.Join(cfg.Workdir, "keep.txt"), filepath.Join(cfg.Workdir, "made.txt")
	f := follow(t, srv.Watch())
	cs := httpClient(t, ts)

	if res := getView(t, ts.URL+"/watch", map[string]string{"Authorization": "Bearer " + viewToken}); !strings.Contains(readAll(t, res), `<body data-rewind="on">`) {
		t.Error("the page does not offer rewind on a server with checkpoints")
	}

	res := <-callAsync(t, cs, "bash", map[string]any{"command": "printf 'changed\\n' > keep.txt; chmod 600 keep.txt; echo new > made.txt"})
	m := checkpointLine.FindStringSubmatch(textOf(res))
	if m == nil || m[2] != "2" {
		t.Fatalf("bash result:\n%s\nwant a checkpoint line for 2 files", textOf(res))
	}
	id := m[1]
	end := f.until("bash end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd && e.Tool == "bash" })
	if end.Checkpoint != id || end.Files != 2 {
		t.Errorf("bash call's end shows checkpoint %q (%d files), want %s (2 files)", end.Checkpoint, end.Files, id)
	}
	changed := readFile(t, keep)

	dry := rewindView(t, ts, id, true, false)
	want := []watch.RewindAction{{Path: "keep.txt", Do: "restore"}, {Path: "made.txt", Do: "remove file"}}
	if !dry.DryRun || dry.Rescue != "" || !equalActions(dry.Actions, want) || !strings.Contains(dry.Text, "This was a dry run") {
		t.Errorf("dry run = %+v, want actions %+v", dry, want)
	}
	if got := readFile(t, keep); !bytes.Equal(got, changed) {
		t.Fatalf("the dry run changed keep.txt to %q", got)
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the dry run removed made.txt: %v", err)
	}

	done := rewindView(t, ts, id, false, false)
	if done.DryRun || done.Rescue == "" || done.RescueFiles != 2 || !equalActions(done.Actions, want) || len(done.Failed) > 0 {
		t.Errorf("rewind = %+v", done)
	}
	if got := readFile(t, keep); !bytes.Equal(got, orig) {
		t.Errorf("keep.txt after the rewind = %q, want %q", got, orig)
	}
	if fi, err := os.Stat(keep); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("keep.txt's mode after the rewind: %v, %v; want 0640", fi.Mode(), err)
	}
	if _, err := os.Lstat(made); !os.IsNotExist(err) {
		t.Errorf("made.txt after the rewind: %v, want it gone", err)
	}
	start := f.until("the rewind's call", func(e watch.Event) bool { return e.Kind == watch.KindCall })
	rend := f.until("the rewind's end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if start.Tool != "rewind" || start.Client != "live view" || !strings.Contains(start.Args, id) || rend.Call != start.Call || rend.Error || rend.Checkpoint != done.Rescue || rend.Files != 2 {
		t.Errorf("the rewind in the view: %+v then %+v", start, rend)
	}

	// The rescue checkpoint undoes the rewind.
	undo := rewindView(t, ts, done.Rescue, false, false)
	if undo.Rescue == "" {
		t.Errorf("undoing the rewind made no rescue checkpoint: %+v", undo)
	}
	if got := readFile(t, keep); !bytes.Equal(got, changed) {
		t.Errorf("keep.txt after undoing the rewind = %q, want %q", got, changed)
	}
	if got := readFile(t, made); string(got) != "new\n" {
		t.Errorf("made.txt after undoing the rewind = %q", got)
	}
	// And the agent sees the view's rewinds among the checkpoints.
	if list := textOf(<-callAsync(t, cs, "checkpoint_list", map[string]any{})); !strings.Contains(list, done.Rescue+" ") || !strings.Contains(list, "rewind to "+id) {
		t.Errorf("checkpoint_list does not show the view's rewind %s:\n%s", done.Rescue, list)
	}
}

func getView(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func equalActions(got, want []watch.RewindAction) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A file changed outside Boris's calls is named in the dry run and refused without force,
// leaving it alone; force overwrites it.
func TestRewindFromTheViewConflict(t *testing.T) {
	ts, srv, cfg := viewServer(t, nil)
	f := follow(t, srv.Watch())
	cs := httpClient(t, ts)
	res := <-callAsync(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "one\n"})
	m := checkpointLine.FindStringSubmatch(textOf(res))
	if m == nil {
		t.Fatalf("create_file result:\n%s", textOf(res))
	}
	if end := f.until("create end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd }); end.Checkpoint != m[1] || end.Files != 1 {
		t.Errorf("create_file's end = %+v, want checkpoint %s", end, m[1])
	}
	a := filepath.Join(cfg.Workdir, "a.txt")
	if err := os.WriteFile(a, []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dry := rewindView(t, ts, m[1], true, false)
	if len(dry.Actions) != 1 || dry.Actions[0].Path != "a.txt" || dry.Actions[0].Conflict == "" {
		t.Fatalf("dry run over a hand edit = %+v, want a.txt named as a conflict", dry)
	}
	code, body := postView(t, ts, "/watch/rewind", `{"to":"`+m[1]+`","dry_run":false}`, nil)
	if code != http.StatusConflict || !strings.Contains(body, "a.txt") || !strings.Contains(body, "force") {
		t.Errorf("rewind over a hand edit without force: %d %s", code, body)
	}
	if got := readFile(t, a); string(got) != "edited by hand\n" {
		t.Errorf("a refused rewind changed a.txt to %q", got)
	}
	refused := f.until("the refused rewind's end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	if refused.Tool != "rewind" || !refused.Error || refused.Checkpoint != "" {
		t.Errorf("the refused rewind in the view = %+v", refused)
	}
	done := rewindView(t, ts, m[1], false, true)
	if done.Rescue == "" {
		t.Errorf("forced rewind = %+v", done)
	}
	if _, err := os.Lstat(a); !os.IsNotExist(err) {
		t.Errorf("a.txt after the forced rewind: %v, want it gone", err)
	}
}

// The rewind action is refused, changing nothing, without the token, from another site,
// from a browser that hides its origin, and for ids that name no checkpoint; without
// "dry_run": false it only says what it would do.
func TestRewindFromTheViewRefused(t *testing.T) {
	ts, _, cfg := viewServer(t, nil)
	cs := httpClient(t, ts)
	res := <-callAsync(t, cs, "bash", map[string]any{"command": "echo x > x.txt"})
	m := checkpointLine.FindStringSubmatch(textOf(res))
	if m == nil {
		t.Fatalf("bash result:\n%s", textOf(res))
	}
	real := `{"to":"` + m[1] + `","dry_run":false}`
	for _, c := range []struct {
		name string
		body string
		hdr  map[string]string
		code int
		says string
	}{
		{"no token", real, map[string]string{"Authorization": ""}, http.StatusUnauthorized, "token"},
		{"wrong token", real, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized, "token"},
		{"forged cookie", real, map[string]string{"Authorization": "", "Cookie": "boris_watch=forged"}, http.StatusUnauthorized, "token"},
		{"cross origin", real, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, "cross-origin"},
		{"cross site", real, map[string]string{"Origin": "", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "cross-site"},
		{"browser without origin", real, map[string]string{"Origin": ""}, http.StatusForbidden, "Origin"},
		{"a dry run unless told", `{"to":"` + m[1] + `"}`, nil, http.StatusOK, "This was a dry run"},
		{"unknown id", `{"to":"cp-999","dry_run":false}`, nil, http.StatusNotFound, `no such checkpoint "cp-999"`},
		{"not an id", `{"to":"../../etc","dry_run":true}`, nil, http.StatusNotFound, "no such checkpoint"},
		{"no id", `{"dry_run":true}`, nil, http.StatusBadRequest, `"to"`},
		{"not json", `rewind please`, nil, http.StatusBadRequest, `"to"`},
		{"unknown field", `{"to":"` + m[1] + `","paths":["x.txt"]}`, nil, http.StatusBadRequest, `"to"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := postView(t, ts, "/watch/rewind", c.body, c.hdr)
			if code != c.code || !strings.Contains(body, c.says) {
				t.Errorf("%d %q, want %d saying %q", code, body, c.code, c.says)
			}
		})
	}
	if got := readFile(t, filepath.Join(cfg.Workdir, "x.txt")); string(got) != "x\n" {
		t.Errorf("a refused rewind changed x.txt to %q", got)
	}
	// GET is not an action.
	if res := getView(t, ts.URL+"/watch/rewind?to="+m[1], map[string]string{"Authorization": "Bearer " + viewToken}); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /watch/rewind: %d", res.StatusCode)
	}
}

// A server that keeps no checkpoints, or does not offer the rewind tool, offers no rewind
// in its view either.
func TestRewindNotOffered(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"checkpoints off", func(cfg *config.Config) { cfg.Checkpoints = false }},
		{"rewind disabled", func(cfg *config.Config) { cfg.DisableTools = []string{"rewind"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, _, _ := viewServer(t, c.edit)
			if body := readAll(t, getView(t, ts.URL+"/watch", map[string]string{"Authorization": "Bearer " + viewToken})); !strings.Contains(body, "<body>") || strings.Contains(body, "data-rewind") {
				t.Error("the page offers rewind")
			}
			if code, body := postView(t, ts, "/watch/rewind", `{"to":"cp-1"}`, nil); code != http.StatusNotFound || !strings.Contains(body, "offers no rewind") {
				t.Errorf("POST /watch/rewind: %d %s", code, body)
			}
		})
	}
}

// Changes made between calls (here by hand) show, as the next call starts, as a checkpoint
// of their own that the view rewinds to like a call's; being outside Boris's calls, only
// with force.
func TestBetweenCallsCheckpointShown(t *testing.T) {
	ts, srv, cfg := viewServer(t, nil)
	f := follow(t, srv.Watch())
	cs := httpClient(t, ts)
	<-callAsync(t, cs, "bash", map[string]any{"command": "true"}) // the baseline is built
	f.until("first end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd })
	hand := filepath.Join(cfg.Workdir, "hand.txt")
	if err := os.WriteFile(hand, []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	<-callAsync(t, cs, "bash", map[string]any{"command": "true"})
	start := f.until("second call", func(e watch.Event) bool { return e.Kind == watch.KindCall })
	between := f.until("between calls", func(e watch.Event) bool { return e.Kind == watch.KindCheckpoint || e.Kind == watch.KindCallEnd })
	if between.Kind != watch.KindCheckpoint || between.Call != start.Call || between.Files != 1 || between.Checkpoint == "" || between.Session != start.Session {
		t.Fatalf("after the call's start = %+v, want the checkpoint of the change made by hand", between)
	}
	if end := f.until("second end", func(e watch.Event) bool { return e.Kind == watch.KindCallEnd }); end.Checkpoint != "" {
		t.Errorf("bash true's end names checkpoint %s", end.Checkpoint)
	}
	dry := rewindView(t, ts, between.Checkpoint, true, false)
	if len(dry.Actions) != 1 || dry.Actions[0].Path != "hand.txt" || dry.Actions[0].Conflict == "" {
		t.Errorf("dry run = %+v, want hand.txt refused without force", dry)
	}
	rewindView(t, ts, between.Checkpoint, false, true)
	if _, err := os.Lstat(hand); !os.IsNotExist(err) {
		t.Errorf("hand.txt after the rewind: %v, want it gone", err)
	}
}
