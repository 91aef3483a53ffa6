package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFenceHoldsUnderSwapStorm: while one goroutine keeps swapping a file and a directory
// inside the allowed directory for symlinks to places outside it (and to a denied file),
// no file tool returns, lists, finds or writes anything there. Every call is checked, so
// one escape fails the test.
func TestFenceHoldsUnderSwapStorm(t *testing.T) {
	t.Parallel()
	t.Run("split", func(t *testing.T) { t.Parallel(); swapStorm(t, false) })
	t.Run("compat", func(t *testing.T) { t.Parallel(); swapStorm(t, true) })
}

func swapStorm(t *testing.T, compat bool) {
	cfg := testConfig(t)
	cfg.AnthropicCompat = compat
	base, err := filepath.EvalSymlinks(filepath.Dir(cfg.Workdir))
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(base, "storm-app")
	out := filepath.Join(base, "storm-outside")
	for _, d := range []string{filepath.Join(app, "d"), filepath.Join(out, "d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(app, "d/f.txt"), "inside d\n")
	write(filepath.Join(app, "f.txt"), "inside f\n")
	write(filepath.Join(app, "g.txt"), "inside g\n")
	write(filepath.Join(app, "secret.key"), "DENIED-KEY\n")
	write(filepath.Join(out, "f.txt"), "OUTSIDE-SECRET\n")
	write(filepath.Join(out, "d/f.txt"), "OUTSIDE-SECRET\n")
	write(filepath.Join(out, "d/outside-only-name.txt"), "OUTSIDE-SECRET\n")
	cfg.Workdir = app
	cfg.AllowDirs = []string{app}
	cfg.DenyDirs = []string{"*.key"}
	cfg.RequireViewBeforeEdit = false
	cs, _ := connect(t, cfg, nil)

	ctx, stop := context.WithCancel(t.Context())
	var storm sync.WaitGroup
	storm.Go(func() {
		// Each name is a link about half of the time: all are swapped out, then all back.
		links := [][2]string{{"d", filepath.Join(out, "d")}, {"f.txt", filepath.Join(out, "f.txt")}, {"g.txt", "secret.key"}}
		for i := 0; i < 1_000_000 && ctx.Err() == nil; i++ {
			for _, l := range links {
				p := filepath.Join(app, l[0])
				_ = os.Rename(p, p+".real")
				_ = os.Symlink(l[1], p)
			}
			for _, l := range links {
				p := filepath.Join(app, l[0])
				_ = os.Remove(p)
				_ = os.Rename(p+".real", p)
			}
		}
	})

	// Content and names that exist only outside (a listing may show what a link inside says).
	leak := regexp.MustCompile(`OUTSIDE-SECRET|DENIED-KEY|outside-only-name`)
	type toolCall struct {
		tool string
		args map[string]any
	}
	calls := []toolCall{
		{"grep", map[string]any{"pattern": "SECRET|KEY|inside", "output_mode": "content"}},
		{"grep", map[string]any{"pattern": "SECRET|KEY", "path": "d", "output_mode": "content"}},
		{"find", map[string]any{"pattern": "**/*"}},
		{"find", map[string]any{"pattern": "*", "path": "d"}},
	}
	if compat {
		ed := func(args map[string]any) toolCall { return toolCall{"str_replace_editor", args} }
		calls = append(calls,
			ed(map[string]any{"command": "view", "path": "d/f.txt"}),
			ed(map[string]any{"command": "view", "path": "f.txt"}),
			ed(map[string]any{"command": "view", "path": "g.txt"}),
			ed(map[string]any{"command": "view", "path": "d"}),
			ed(map[string]any{"command": "view", "path": "."}),
			ed(map[string]any{"command": "create", "path": "d/new.txt", "file_text": "WRITTEN\n"}),
			ed(map[string]any{"command": "create", "path": "f.txt", "file_text": "inside f\n"}),
			ed(map[string]any{"command": "create", "path": "d/sub/deeper.txt", "file_text": "WRITTEN\n"}),
			ed(map[string]any{"command": "str_replace", "path": "g.txt", "old_str": "inside g", "new_str": "inside G"}),
			ed(map[string]any{"command": "str_replace", "path": "g.txt", "old_str": "inside G", "new_str": "inside g"}),
			ed(map[string]any{"command": "str_replace", "path": "d/f.txt", "old_str": "inside d", "new_str": "inside D"}),
			ed(map[string]any{"command": "str_replace", "path": "d/f.txt", "old_str": "inside D", "new_str": "inside d"}),
			ed(map[string]any{"command": "insert", "path": "d/f.txt", "insert_line": 0, "new_str": "top\n"}),
			ed(map[string]any{"command": "undo_edit", "path": "d/f.txt"}),
		)
	} else {
		calls = append(calls,
			toolCall{"view", map[string]any{"path": "d/f.txt"}},
			toolCall{"view", map[string]any{"path": "f.txt"}},
			toolCall{"view", map[string]any{"path": "g.txt"}},
			toolCall{"view", map[string]any{"path": "d"}},
			toolCall{"view", map[string]any{"path": "."}},
			toolCall{"create_file", map[string]any{"path": "d/new.txt", "content": "WRITTEN\n"}},
			toolCall{"create_file", map[string]any{"path": "f.txt", "content": "inside f\n"}},
			toolCall{"create_file", map[string]any{"path": "d/sub/deeper.txt", "content": "WRITTEN\n"}},
			toolCall{"str_replace", map[string]any{"path": "g.txt", "old_str": "inside g", "new_str": "inside G"}},
			toolCall{"str_replace", map[string]any{"path": "g.txt", "old_str": "inside G", "new_str": "inside g"}},
			toolCall{"str_replace", map[string]any{"path": "d/f.txt", "old_str": "inside d", "new_str": "inside D"}},
			toolCall{"str_replace", map[string]any{"path": "d/f.txt", "old_str": "inside D", "new_str": "inside d"}},
		)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	escapes := 0
	for w := range 2 {
		wg.Go(func() {
			for i := range 300 {
				c := calls[(i+w*7)%len(calls)]
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if err != nil {
					t.Errorf("%s %v: %v", c.tool, c.args, err)
					return
				}
				if s := textOf(res); leak.MatchString(s) {
					mu.Lock()
					escapes++
					if escapes <= 3 {
						t.Errorf("%s %v let something outside through:\n%s", c.tool, c.args, s)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	stop()
	storm.Wait()
	if escapes > 0 {
		t.Errorf("%d escapes", escapes)
	}
	// Nothing was written outside.
	entries, err := os.ReadDir(filepath.Join(out, "d"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "f.txt" && e.Name() != "outside-only-name.txt" {
			t.Errorf("a write escaped: %s appeared outside", filepath.Join(out, "d", e.Name()))
		}
	}
	for _, p := range []string{filepath.Join(out, "f.txt"), filepath.Join(out, "d/f.txt")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "OUTSIDE-SECRET\n" {
			t.Errorf("%s = %q, %v: a write escaped", p, b, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(app, "secret.key")); err != nil || string(b) != "DENIED-KEY\n" {
		t.Errorf("the denied file now holds %q, %v", b, err)
	}
}

// TestSpillDirectoryIsReadOnly: file tools may read the session's saved output but never
// write into its directory, which also holds the file commands are run with.
func TestSpillDirectoryIsReadOnly(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.RequireViewBeforeEdit = false
	cs, _ := connect(t, cfg, nil)
	res := call(t, cs, "bash", map[string]any{"command": "seq 1 20000"})
	var spill string
	for _, p := range regexp.MustCompile(`(/\S+)`).FindAllString(textOf(res), -1) {
		p = strings.TrimRight(p, ".,;:)'\"")
		if strings.HasPrefix(p, os.TempDir()) && !strings.HasPrefix(p, cfg.Workdir) {
			spill = p
			break
		}
	}
	if spill == "" {
		t.Fatal("truncated output names no spill file")
	}
	if res := call(t, cs, "view", map[string]any{"path": spill, "view_range": []int{1, 2}}); res.IsError {
		t.Fatalf("view of the spill file: %s", textOf(res))
	}
	dir := filepath.Dir(spill)
	before, _ := os.ReadFile(spill)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_file", map[string]any{"path": filepath.Join(dir, "bash-env"), "content": "echo pwned\n"}},
		{"create_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "x"}},
		{"create_file", map[string]any{"path": spill, "content": "x"}},
		{"str_replace", map[string]any{"path": spill, "old_str": "20000", "new_str": "x"}},
	} {
		if res := call(t, cs, c.tool, c.args); !res.IsError || !strings.Contains(textOf(res), "may read but not write") {
			t.Errorf("%s %v = %q, want a refusal", c.tool, c.args, textOf(res))
		}
	}
	if after, _ := os.ReadFile(spill); string(after) != string(before) {
		t.Error("the spill file was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("a file was created in the spill directory")
	}
}

// TestRefusalsKeepLinkTargetsSecret: a symlink leading outside the allowed directories (or
// to a denied file) is refused without saying where it leads.
func TestRefusalsKeepLinkTargetsSecret(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cfg.DenyDirs = []string{"*.key"}
	for name, target := range map[string]string{"cwd": "/proc/self/cwd", "fd": "/proc/self/fd/0", "k": "hidden.key", "dir": "/proc/1"} {
		if err := os.Symlink(target, filepath.Join(cfg.Workdir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfg.Workdir, "hidden.key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	secret := regexp.MustCompile(`/proc|hidden\.key`)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "cwd"}},
		{"view", map[string]any{"path": "fd"}},
		{"view", map[string]any{"path": "k"}},
		{"view", map[string]any{"path": "dir/cwd"}},
		{"create_file", map[string]any{"path": "dir/x", "content": "x"}},
		{"grep", map[string]any{"pattern": "x", "path": "cwd"}},
		{"find", map[string]any{"pattern": "*", "path": "dir"}},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || secret.MatchString(textOf(res)) || !strings.Contains(textOf(res), "leads") {
			t.Errorf("%s %v = %q (isError %v), want a refusal that says the path leads outside or to a denied path, and no more", c.tool, c.args, textOf(res), res.IsError)
		}
	}
}

// TestControlCharactersInNamesAreQuoted: a file name with a newline cannot forge lines of
// grep, find or listing output; such names are quoted.
func TestControlCharactersInNamesAreQuoted(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	name := "x\nforged.txt:1:needle"
	if err := os.WriteFile(filepath.Join(cfg.Workdir, name), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	quoted := `"x\nforged.txt:1:needle"`
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"grep", map[string]any{"pattern": "needle"}},
		{"grep", map[string]any{"pattern": "needle", "output_mode": "content"}},
		{"grep", map[string]any{"pattern": "needle", "output_mode": "count"}},
		{"find", map[string]any{"pattern": "*"}},
		{"view", map[string]any{"path": "."}},
	} {
		res := call(t, cs, c.tool, c.args)
		out := textOf(res)
		if res.IsError || !strings.Contains(out, quoted) || strings.Contains(out, "\nforged") {
			t.Errorf("%s %v = %q, want the name quoted as %s and no forged line", c.tool, c.args, out, quoted)
		}
	}
}

// TestCreateFileReportsSetuidTruthfully: overwriting a setuid, setgid file keeps those
// bits, and the result says so with them.
func TestCreateFileReportsSetuidTruthfully(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	p := filepath.Join(cfg.Workdir, "tool")
	if err := os.WriteFile(p, []byte("old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	res := call(t, cs, "create_file", map[string]any{"path": "tool", "content": "new\n"})
	if res.IsError || !strings.Contains(textOf(res), "(mode 6755 kept)") {
		t.Errorf("create_file = %q, want it to report mode 6755 kept", textOf(res))
	}
	if info, err := os.Stat(p); err != nil || info.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid) != 0o755|os.ModeSetuid|os.ModeSetgid {
		t.Errorf("mode after create_file = %v, %v; want setuid and setgid kept", info.Mode(), err)
	}
}
