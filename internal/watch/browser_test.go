package watch_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/server"
	"github.com/mjkoo/boris/internal/testutil"
)

var update = flag.Bool("update", false, "write the page's screenshot to docs/watch.png")

// browser finds Chromium, or skips the test saying how to get it.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BORIS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testutil.Missing(t, "BORIS_REQUIRE_BROWSER", "no browser: install Chromium (Debian: apt-get install -y chromium) or set BORIS_CHROMIUM to run the live view's browser test")
	return ""
}

// page is a headless Chromium tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

// newPage starts Chromium at exe, ended with the test.
func newPage(t *testing.T, exe string) *page {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return &page{t: t, ctx: ctx}
}

func (p *page) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

func (p *page) eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls the page until expr is true.
func (p *page) waitFor(what, expr string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// TestBrowser drives the page in headless Chromium while an MCP client works over HTTP:
// streamed lines appear while the command runs, then its exit status; an edit shows its
// diff; the stop buttons stop a command and a background task.
func TestBrowser(t *testing.T) {
	exe := browser(t)
	const token = "browser-test-token"
	cfg := testConfig(t)
	cfg.Transport, cfg.Host, cfg.Token = "http", "127.0.0.1", token
	srv, err := server.New(&cfg, quietLog(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})

	p := newPage(t, exe)
	ctx, run, eval, waitFor := p.ctx, p.run, p.eval, p.waitFor

	// The token is exchanged for a cookie; the address bar no longer shows it.
	run("open the page", chromedp.Navigate(ts.URL+"/watch?token="+token))
	waitFor("the stream is live", `document.querySelector("#conn.live") !== null`)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, token) {
		t.Errorf("the token stayed in the address: %s", loc)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.1.0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: testutil.Bearer(token, nil)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A stateless (2026-07-28) client has a workspace, listed from its first call.
	<-callAsync(t, cs, "view", map[string]any{"path": "."})
	waitFor("the session is listed", `document.querySelector("#sessions").textContent.includes("claude-code 2.1.0")`)

	// A command that prints a line every half second, then waits for the test: each line
	// must show while it still runs.
	done := callAsync(t, cs, "bash", map[string]any{"command": "for i in 1 2 3 4; do echo line-$i; sleep 0.5; done; echo warning >&2; while [ ! -e finish ]; do sleep 0.02; done; exit 5"})
	card := `document.querySelector(".call[data-tool=bash]")`
	for i := 1; i <= 4; i++ {
		waitFor(fmt.Sprintf("line-%d shown", i), fmt.Sprintf(`%s && %s.querySelector("pre.out").textContent.includes("line-%d\n")`, card, card, i))
		if status := eval(card + `.querySelector(".outcome").textContent`); status != "running" {
			t.Fatalf("line-%d appeared but the call shows %q, not running", i, status)
		}
	}
	waitFor("stderr shown apart", card+`.querySelector("pre.out span.stderr") !== null && `+card+`.querySelector("pre.out span.stderr").textContent.includes("warning")`)
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "finish"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("exit status shown", card+`.querySelector(".outcome").textContent === "exit 5"`)
	if res := <-done; res == nil || !strings.Contains(textOf(res), "exit_code: 5") {
		t.Fatalf("bash result: %s", textOf(res))
	}

	// An edit shows as a diff.
	<-callAsync(t, cs, "create_file", map[string]any{"path": "notes.txt", "content": "alpha\nbeta\ngamma\n"})
	<-callAsync(t, cs, "str_replace", map[string]any{"path": "notes.txt", "old_str": "beta", "new_str": "BETA"})
	waitFor("the edit's diff", `(() => { const d = document.querySelector(".call[data-tool=str_replace] pre.diff"); return d && d.textContent.includes("-beta\n") && d.textContent.includes("+BETA\n") && d.querySelector(".del") && d.querySelector(".add"); })()`)
	<-callAsync(t, cs, "grep", map[string]any{"pattern": "gamma"})
	waitFor("the search summary", `(() => { const s = document.querySelector(".call[data-tool=grep] .summary"); return s && s.textContent.startsWith("Found 1 file"); })()`)

	// The stop button stops a running command: the agent is told the user stopped it.
	stopped := callAsync(t, cs, "bash", map[string]any{"command": "echo waiting; sleep 100"})
	waitFor("the command runs", `Array.from(document.querySelectorAll(".call.running")).some(c => c.querySelector(".args").textContent.startsWith("echo waiting") && c.querySelector("pre.out").textContent.includes("waiting") && c.querySelector("button.stop"))`)
	run("stop the command", chromedp.Click(chromedp.CSS(`.call.running button.stop`)))
	select {
	case res := <-stopped:
		if !strings.Contains(textOf(res), "stopped by the user") {
			t.Errorf("stopped command's result:\n%s", textOf(res))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stop button did not stop the command")
	}
	waitFor("the stopped command's outcome", `Array.from(document.querySelectorAll(".call.bad .outcome")).some(o => o.textContent.startsWith("stopped by the user"))`)

	// And a background task.
	<-callAsync(t, cs, "bash", map[string]any{"command": "sleep 100", "run_in_background": true})
	waitFor("the task is listed", `document.querySelector("#tasks li.running button.stop") !== null`)
	run("stop the task", chromedp.Click(chromedp.CSS(`#tasks li.running button.stop`)))
	waitFor("the task's end", `(() => { const s = document.querySelector("#tasks li .status"); return s && s.textContent.includes("stopped by the user"); })()`)
	if res := <-callAsync(t, cs, "task_output", map[string]any{"task_id": "task-1"}); !strings.Contains(textOf(res), "stopped by the user") {
		t.Errorf("task_output after the stop button:\n%s", textOf(res))
	}

	eval(`window.scrollTo(0, 0), ""`)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("BORIS_WATCH_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "watch.png")
	}
	if *update {
		shot = filepath.Join("..", "..", "docs", "watch.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}

// TestBrowserRewind rewinds from the page: a command's call shows its checkpoint; "Rewind
// to here" lists the dry run and changes nothing until confirmed; the rewind puts the files
// back byte for byte and shows as a call of its own, whose checkpoint undoes it, refused
// over a hand edit until force is ticked.
func TestBrowserRewind(t *testing.T) {
	exe := browser(t)
	orig := []byte("line one\r\nβ\x00 binary\n")
	ts, _, cfg := viewServer(t, func(cfg *config.Config) {
		if err := os.WriteFile(filepath.Join(cfg.Workdir, "keep.txt"), orig, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	keep, made := filepath.Join(cfg.Workdir, "keep.txt"), filepath.Join(cfg.Workdir, "made.txt")
	p := newPage(t, exe)
	p.run("open the page", chromedp.Navigate(ts.URL+"/watch?token="+viewToken))
	p.waitFor("the stream is live", `document.querySelector("#conn.live") !== null`)
	cs := httpClient(t, ts)

	res := <-callAsync(t, cs, "bash", map[string]any{"command": "printf 'changed\\n' > keep.txt; echo new > made.txt"})
	m := checkpointLine.FindStringSubmatch(textOf(res))
	if m == nil {
		t.Fatalf("bash result:\n%s", textOf(res))
	}
	bash := `.call[data-tool=bash]`
	p.waitFor("the call's checkpoint", fmt.Sprintf(`(() => { const c = document.querySelector(%q); return c && c.querySelector(".cpid").textContent === %q && c.textContent.includes("2 files changed"); })()`, bash+" .checkpoint", m[1]))

	p.run("ask for the dry run", chromedp.Click(chromedp.CSS(bash+" button.rewind")))
	panel := bash + " .rewind-panel"
	p.waitFor("the dry run's list", fmt.Sprintf(`(() => { const l = document.querySelector(%q); return l && l.textContent.includes("restore keep.txt") && l.textContent.includes("remove file made.txt"); })()`, panel+" ul.actions"))
	if got := p.eval(fmt.Sprintf(`document.querySelector(%q) ? "force offered" : ""`, panel+" .force")); got != "" {
		t.Error("the force box shows though the dry run names no conflict")
	}
	if got := readFile(t, keep); string(got) != "changed\n" {
		t.Fatalf("the dry run changed keep.txt to %q", got)
	}

	p.run("confirm", chromedp.Click(chromedp.CSS(panel+" button.confirm")))
	p.waitFor("the rewind's result", fmt.Sprintf(`(() => { const r = document.querySelector(%q); return r && /checkpoint cp-\d+/.test(r.textContent); })()`, panel+".done .rescue"))
	if got := readFile(t, keep); !bytes.Equal(got, orig) {
		t.Errorf("keep.txt after the rewind = %q, want %q", got, orig)
	}
	if _, err := os.Lstat(made); !os.IsNotExist(err) {
		t.Errorf("made.txt after the rewind: %v, want it gone", err)
	}
	rescue := regexp.MustCompile(`cp-\d+`).FindString(p.eval(fmt.Sprintf(`document.querySelector(%q).textContent`, panel+" .rescue")))
	rw := `.call[data-tool=rewind]`
	p.waitFor("the rewind as a call of its own", fmt.Sprintf(`(() => { const c = document.querySelector(%q); return c && c.querySelector(".sess").textContent === "live view" && c.querySelector(".cpid") && c.querySelector(".cpid").textContent === %q; })()`, rw, rescue))

	// Undoing the rewind over a hand edit: named, refused, then forced.
	if err := os.WriteFile(keep, []byte("by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.run("ask to undo the rewind", chromedp.Click(chromedp.CSS(rw+" button.rewind")))
	undo := rw + " .rewind-panel"
	p.waitFor("the hand edit named", fmt.Sprintf(`(() => { const l = document.querySelector(%q); return l && l.textContent.includes("keep.txt (refused without force"); })()`, undo+" li.conflict"))
	p.run("confirm without force", chromedp.Click(chromedp.CSS(undo+" button.confirm")))
	p.waitFor("the refusal", fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.textContent.includes("keep.txt") && e.textContent.includes("force"); })()`, undo+" .error"))
	if got := readFile(t, keep); string(got) != "by hand\n" {
		t.Fatalf("a refused rewind changed keep.txt to %q", got)
	}
	p.run("tick force", chromedp.Click(chromedp.CSS(undo+" .force input")))
	p.run("confirm with force", chromedp.Click(chromedp.CSS(undo+" button.confirm")))
	p.waitFor("the forced rewind's result", fmt.Sprintf(`document.querySelector(%q) !== null`, undo+".done .rescue"))
	if got := readFile(t, keep); string(got) != "changed\n" {
		t.Errorf("keep.txt after undoing the rewind = %q", got)
	}
	if got, err := os.ReadFile(made); string(got) != "new\n" {
		t.Errorf("made.txt after undoing the rewind = %q, %v", got, err)
	}

	// A change made between calls shows, as the next call starts, with a button of its own.
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "hand.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-callAsync(t, cs, "bash", map[string]any{"command": "true"})
	p.waitFor("the change between calls", `(() => { const b = document.querySelector(".between"); return b && b.nextElementSibling && b.nextElementSibling.matches(".call[data-tool=bash]") && /cp-\d+/.test(b.querySelector(".cpid").textContent) && b.textContent.includes("1 file changed") && b.querySelector("button.rewind"); })()`)
}
