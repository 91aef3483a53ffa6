package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeTree creates files (path: content) under dir. Times are set in path order, the
// first oldest, so "newest first" has a known answer.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// lines returns the result text's lines that are not notes or headers.
func bodyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "Found ") || strings.HasPrefix(l, "No ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func TestGrepModes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	writeTree(t, cfg.Workdir, map[string]string{
		"a.go":         "package a\n\nfunc Alpha() {}\n// alpha again\n",
		"b/b.go":       "package b\nfunc Beta() { Alpha() }\n",
		"b/c.txt":      "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nAlpha\nten\n",
		"d/multi.txt":  "start\nfoo\nbar\nend\n",
		"d/crlf.txt":   "x\r\nAlpha\r\n",
		"z/newest.txt": "ALPHA\n",
	})
	cs, _ := connect(t, cfg, nil)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"files newest first", map[string]any{"pattern": "Alpha"}, []string{"d/crlf.txt", "b/c.txt", "b/b.go", "a.go"}},
		{"ignore case", map[string]any{"pattern": "alpha", "-i": true}, []string{"z/newest.txt", "d/crlf.txt", "b/c.txt", "b/b.go", "a.go"}},
		{"content", map[string]any{"pattern": "Alpha", "output_mode": "content", "path": "b"}, []string{"b/b.go:2:func Beta() { Alpha() }", "b/c.txt:9:Alpha"}},
		{"content without numbers", map[string]any{"pattern": "Beta", "output_mode": "content", "-n": false}, []string{"b/b.go:func Beta() { Alpha() }"}},
		{"context", map[string]any{"pattern": "^(two|Alpha)$", "output_mode": "content", "path": "b/c.txt", "-C": 1}, []string{
			"b/c.txt-1-one", "b/c.txt:2:two", "b/c.txt-3-three", "--", "b/c.txt-8-eight", "b/c.txt:9:Alpha", "b/c.txt-10-ten"}},
		{"before and after", map[string]any{"pattern": "five", "output_mode": "content", "path": "b/c.txt", "-B": 2, "-A": 1}, []string{
			"b/c.txt-3-three", "b/c.txt-4-four", "b/c.txt:5:five", "b/c.txt-6-six"}},
		{"overlapping context merges", map[string]any{"pattern": "^(two|three)$", "output_mode": "content", "path": "b/c.txt", "context": 1}, []string{
			"b/c.txt-1-one", "b/c.txt:2:two", "b/c.txt:3:three", "b/c.txt-4-four"}},
		{"count", map[string]any{"pattern": "(?i)alpha", "output_mode": "count"}, []string{"a.go:2", "b/b.go:1", "b/c.txt:1", "d/crlf.txt:1", "z/newest.txt:1"}},
		{"multiline", map[string]any{"pattern": `foo\nbar`, "multiline": true, "output_mode": "content"}, []string{"d/multi.txt:2:foo", "d/multi.txt:3:bar"}},
		{"multiline dot matches newline", map[string]any{"pattern": `start.*end`, "multiline": true, "output_mode": "count"}, []string{"d/multi.txt:4"}},
		{"without multiline a class never matches newline", map[string]any{"pattern": `foo\sbar`}, nil},
		{"glob", map[string]any{"pattern": "Alpha", "glob": "*.go"}, []string{"b/b.go", "a.go"}},
		{"glob braces", map[string]any{"pattern": "Alpha", "glob": "*.{txt,md}"}, []string{"d/crlf.txt", "b/c.txt"}},
		{"glob with slash", map[string]any{"pattern": "Alpha", "glob": "b/*.go"}, []string{"b/b.go"}},
		{"negated glob", map[string]any{"pattern": "Alpha", "glob": "!*.txt"}, []string{"b/b.go", "a.go"}},
		{"type", map[string]any{"pattern": "Alpha", "type": "go"}, []string{"b/b.go", "a.go"}},
		{"single file", map[string]any{"pattern": "Alpha", "path": "a.go"}, []string{"a.go"}},
		{"dollar at CRLF line end", map[string]any{"pattern": `^Alpha\r?$`, "output_mode": "content", "path": "d"}, []string{"d/crlf.txt:2:Alpha"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, cs, "grep", tc.args)
			got := textOf(res)
			if res.IsError {
				t.Fatalf("grep(%v) failed: %s", tc.args, got)
			}
			if lines := bodyLines(got); !slices.Equal(lines, tc.want) {
				t.Errorf("grep(%v) lines = %q, want %q\nfull text:\n%s", tc.args, lines, tc.want, got)
			}
			if !strings.Contains(got, "[Searched ") {
				t.Errorf("grep(%v) has no transparency note:\n%s", tc.args, got)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	writeTree(t, cfg.Workdir, map[string]string{"a.txt": "hello\n"})
	cs, _ := connect(t, cfg, nil)
	tests := []struct {
		name string
		args map[string]any
		want []string // substrings of the error text
	}{
		{"invalid regexp", map[string]any{"pattern": "foo("}, []string{"INVALID_ARGUMENT", "RE2", "missing closing )"}},
		{"lookahead", map[string]any{"pattern": "foo(?=bar)"}, []string{"INVALID_ARGUMENT", "lookahead"}},
		{"newline without multiline", map[string]any{"pattern": "a\nb"}, []string{"INVALID_ARGUMENT", "multiline"}},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, []string{"NOT_FOUND", "nope does not exist"}},
		{"unknown type", map[string]any{"pattern": "x", "type": "cobol"}, []string{"INVALID_ARGUMENT", "unknown type", "go"}},
		{"bad glob", map[string]any{"pattern": "x", "glob": "[a"}, []string{"INVALID_ARGUMENT", "glob"}},
		{"negative", map[string]any{"pattern": "x", "-A": -1}, []string{"INVALID_ARGUMENT"}},
		{"empty pattern", map[string]any{"pattern": ""}, []string{"INVALID_ARGUMENT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, cs, "grep", tc.args)
			got := textOf(res)
			if !res.IsError {
				t.Fatalf("grep(%v) = %q, want an error", tc.args, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("grep(%v) error = %q, want it to mention %q", tc.args, got, w)
				}
			}
		})
	}
	t.Run("bad output_mode is rejected by the schema or the handler", func(t *testing.T) {
		t.Parallel()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "x", "output_mode": "lines"}})
		if err == nil && !res.IsError {
			t.Fatalf("grep with output_mode lines succeeded: %s", textOf(res))
		}
	})
}

func TestGrepIgnoreRulesAndNote(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	writeTree(t, cfg.Workdir, map[string]string{
		".gitignore":               "*.log\n/build/\n!keep.log\nsub/only-here.txt\n",
		"app.go":                   "needle\n",
		"x.log":                    "needle\n",
		"keep.log":                 "needle\n",
		"build/out.go":             "needle\n",
		"src/build/gen.go":         "needle\n", // /build/ is anchored: this one stays
		"sub/only-here.txt":        "needle\n",
		"sub/deeper/only-here.txt": "needle\n",
		"nested/.gitignore":        "*.txt\n!important.txt\n",
		"nested/a.txt":             "needle\n",
		"nested/important.txt":     "needle\n",
		"nested/.ignore":           "*.go\n",
		"nested/code.go":           "needle\n",
		".hidden/h.go":             "needle\n",
		".env":                     "needle\n",
		"bin.dat":                  "needle\x00\x01\x02",
		".git/config":              "needle\n",
		".git/info/exclude":        "excluded.md\n",
		"excluded.md":              "needle\n",
	})
	cs, _ := connect(t, cfg, nil)

	res := call(t, cs, "grep", map[string]any{"pattern": "needle"})
	got := textOf(res)
	want := []string{"app.go", "keep.log", "nested/important.txt", "src/build/gen.go", "sub/deeper/only-here.txt"}
	lines := bodyLines(got)
	slices.Sort(lines)
	if !slices.Equal(lines, want) {
		t.Errorf("grep needle = %q, want %q\n%s", lines, want, got)
	}
	for _, w := range []string{"6 ignored by .gitignore/.ignore", "6 hidden", "1 binary", "no_ignore: true", "hidden: true"} {
		if !strings.Contains(got, w) {
			t.Errorf("note lacks %q:\n%s", w, got)
		}
	}

	res = call(t, cs, "grep", map[string]any{"pattern": "needle", "no_ignore": true, "hidden": true})
	got = textOf(res)
	lines = bodyLines(got)
	slices.Sort(lines)
	want = []string{".env", ".hidden/h.go", "app.go", "build/out.go", "excluded.md", "keep.log", "nested/a.txt", "nested/code.go", "nested/important.txt", "src/build/gen.go", "sub/deeper/only-here.txt", "sub/only-here.txt", "x.log"}
	if !slices.Equal(lines, want) {
		t.Errorf("grep needle with hidden and no_ignore = %q, want %q\n%s", lines, want, got)
	}
	if strings.Contains(got, ".git/") {
		t.Errorf(".git was searched:\n%s", got)
	}

	// A subdirectory search still obeys the parent's .gitignore.
	res = call(t, cs, "grep", map[string]any{"pattern": "needle", "path": "sub"})
	if lines := bodyLines(textOf(res)); !slices.Equal(lines, []string{"sub/deeper/only-here.txt"}) {
		t.Errorf("grep in sub = %q, want only sub/deeper/only-here.txt\n%s", lines, textOf(res))
	}
}

func TestGrepScope(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "needle outside\n"})
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	cfg.DenyDirs = []string{"**/*.key", "private", ".env"}
	writeTree(t, cfg.Workdir, map[string]string{
		"ok.txt":            "needle\n",
		"id.key":            "needle\n",
		"deep/server.key":   "needle\n",
		"private/notes.txt": "needle\n",
		".env":              "needle\n",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(cfg.Workdir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(cfg.Workdir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)
	for _, args := range []map[string]any{
		{"pattern": "needle"},
		{"pattern": "needle", "output_mode": "content", "hidden": true, "no_ignore": true},
		{"pattern": "needle", "output_mode": "count", "hidden": true},
	} {
		res := call(t, cs, "grep", args)
		got := textOf(res)
		for _, bad := range []string{"key", "private", "outside", "secret", ".env", "hidden ("} {
			if strings.Contains(got, bad) {
				t.Errorf("grep(%v) reveals %q:\n%s", args, bad, got)
			}
		}
		if !strings.Contains(got, "ok.txt") {
			t.Errorf("grep(%v) misses ok.txt:\n%s", args, got)
		}
		if !strings.Contains(got, "Searched 1 file.") {
			t.Errorf("grep(%v) counts denied files:\n%s", args, got)
		}
	}
	for _, p := range []string{outside, "private", "id.key", "linkdir"} {
		res := call(t, cs, "grep", map[string]any{"pattern": "needle", "path": p})
		if !res.IsError || !strings.Contains(textOf(res), "ACCESS_DENIED") {
			t.Errorf("grep in %s = %q, want ACCESS_DENIED", p, textOf(res))
		}
	}
}

func TestGrepFIFO(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	writeTree(t, cfg.Workdir, map[string]string{"a.txt": "needle\n"})
	fifo := filepath.Join(cfg.Workdir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cs, _ := connect(t, cfg, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "needle"}})
	if err != nil {
		t.Fatalf("grep with a FIFO in the tree: %v", err)
	}
	if got := textOf(res); !strings.Contains(got, "a.txt") || !strings.Contains(got, "1 special: FIFOs, sockets, devices") {
		t.Errorf("grep with a FIFO = %q, want a.txt and the FIFO counted", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "needle", "path": "pipe"}})
	if err != nil {
		t.Fatalf("grep on a FIFO: %v", err)
	}
	if !res.IsError {
		t.Errorf("grep on a FIFO = %q, want an error", textOf(res))
	}
}

func TestGrepPagingAndBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	files := map[string]string{}
	for i := range 30 {
		files[filepath.Join("d", string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt")] = "hit\n"
	}
	var big strings.Builder
	for range 5000 {
		big.WriteString("hit " + strings.Repeat("é", 20) + "\n")
	}
	files["big/huge.txt"] = big.String()
	files["big/a-long.txt"] = "hit " + strings.Repeat("y", 5000) + "\n"
	writeTree(t, cfg.Workdir, files)
	cs, _ := connect(t, cfg, nil)

	all := bodyLines(textOf(call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "d"})))
	if len(all) != 30 {
		t.Fatalf("grep in d found %d files, want 30", len(all))
	}
	var paged []string
	for off := 0; off < 30; off += 7 {
		res := call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "d", "head_limit": 7, "offset": off})
		got := textOf(res)
		page := bodyLines(got)
		paged = append(paged, page...)
		if off+7 < 30 && !strings.Contains(got, "pass offset: ") {
			t.Errorf("page at %d has no paging note:\n%s", off, got)
		}
	}
	if !slices.Equal(paged, all) {
		t.Errorf("pages joined = %q, want %q", paged, all)
	}

	res := call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "content"})
	got := textOf(res)
	if n := utf8.RuneCountInString(got); n > 31_000 {
		t.Errorf("content output is %d characters, want it within the budget", n)
	}
	if !utf8.ValidString(got) {
		t.Error("content output is not valid UTF-8")
	}
	if !strings.Contains(got, "cut by the output budget; pass offset: ") {
		t.Errorf("budget note missing:\n%s", got[len(got)-300:])
	}
	if !regexp.MustCompile(`a-long\.txt:1:hit y+ … \[line cut: \d+ more bytes\]`).MatchString(got) {
		t.Errorf("long line not cut with a marker")
	}
	res = call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "d", "offset": 100})
	if got := textOf(res); !strings.Contains(got, "past the end") {
		t.Errorf("offset past the end = %q", got)
	}
}

func TestSearchToolSchemas(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tool := range res.Tools {
		switch tool.Name {
		case "grep":
			found++
			b := schemaJSON(t, tool.InputSchema)
			for _, w := range []string{`"-i"`, `"-n"`, `"-A"`, `"-B"`, `"-C"`, `"head_limit"`, `"offset"`, `"multiline"`, `"files_with_matches"`, `"enum"`, `RE2`, `rust *.rs`} {
				if !strings.Contains(b, w) {
					t.Errorf("grep schema lacks %s: %s", w, b)
				}
			}
		case "find":
			found++
			if b := schemaJSON(t, tool.InputSchema); !strings.Contains(b, `"enum":["file","dir","any"]`) {
				t.Errorf("find schema lacks the type enum: %s", b)
			}
		}
	}
	if found != 2 {
		t.Errorf("tools/list has %d of grep and find", found)
	}
}
