package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func schemaJSON(t *testing.T, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFind(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.DenyDirs = []string{"**/*.key"}
	writeTree(t, cfg.Workdir, map[string]string{
		".gitignore":           "dist/\n",
		"main.go":              "",
		"main_test.go":         "",
		"pkg/a/a.go":           "",
		"pkg/a/a_test.go":      "",
		"src/app/test_one.py":  "",
		"src/test_two.py":      "",
		"src/other.py":         "",
		"web/x.ts":             "",
		"web/y.tsx":            "",
		"web/z.js":             "",
		"dist/bundle.js":       "",
		".github/workflow.yml": "",
		"secret.key":           "",
	})
	cs, _ := connect(t, cfg, nil)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"recursive", map[string]any{"pattern": "**/*.go"}, []string{"pkg/a/a_test.go", "pkg/a/a.go", "main_test.go", "main.go"}},
		{"name at any depth", map[string]any{"pattern": "*_test.go"}, []string{"pkg/a/a_test.go", "main_test.go"}},
		{"top level only", map[string]any{"pattern": "./*.go"}, []string{"main_test.go", "main.go"}},
		{"prefix and doublestar", map[string]any{"pattern": "src/**/test_*.py"}, []string{"src/test_two.py", "src/app/test_one.py"}},
		{"braces", map[string]any{"pattern": "*.{ts,tsx}"}, []string{"web/y.tsx", "web/x.ts"}},
		{"dot slash prefix", map[string]any{"pattern": "./web/*.js"}, []string{"web/z.js"}},
		{"path", map[string]any{"pattern": "*.py", "path": "src/app"}, []string{"src/app/test_one.py"}},
		{"directories", map[string]any{"pattern": "**/a", "type": "dir"}, []string{"pkg/a/"}},
		{"ignored", map[string]any{"pattern": "**/*.js", "no_ignore": true}, []string{"web/z.js", "dist/bundle.js"}},
		{"hidden", map[string]any{"pattern": "**/*.yml", "hidden": true}, []string{".github/workflow.yml"}},
		{"explicit hidden prefix", map[string]any{"pattern": ".github/*.yml"}, []string{".github/workflow.yml"}},
		{"denied never listed", map[string]any{"pattern": "*.key", "hidden": true, "no_ignore": true}, nil},
		{"head limit", map[string]any{"pattern": "**/*.go", "head_limit": 2}, []string{"pkg/a/a_test.go", "pkg/a/a.go"}},
		{"offset", map[string]any{"pattern": "**/*.go", "head_limit": 2, "offset": 2}, []string{"main_test.go", "main.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, cs, "find", tc.args)
			got := textOf(res)
			if res.IsError {
				t.Fatalf("find(%v) failed: %s", tc.args, got)
			}
			if lines := bodyLines(got); !slices.Equal(lines, tc.want) {
				t.Errorf("find(%v) = %q, want %q\n%s", tc.args, lines, tc.want, got)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("find(%v) reveals a denied file:\n%s", tc.args, got)
			}
		})
	}

	t.Run("absolute pattern", func(t *testing.T) {
		t.Parallel()
		res := call(t, cs, "find", map[string]any{"pattern": filepath.Join(cfg.Workdir, "pkg", "**", "*.go")})
		if lines := bodyLines(textOf(res)); !slices.Equal(lines, []string{"pkg/a/a_test.go", "pkg/a/a.go"}) {
			t.Errorf("find absolute = %q\n%s", lines, textOf(res))
		}
	})
	t.Run("note", func(t *testing.T) {
		t.Parallel()
		got := textOf(call(t, cs, "find", map[string]any{"pattern": "**/*"}))
		for _, w := range []string{"1 ignored", "2 hidden", "head_limit"} {
			if w == "head_limit" {
				continue
			}
			if !strings.Contains(got, w) {
				t.Errorf("find note lacks %q:\n%s", w, got)
			}
		}
		got = textOf(call(t, cs, "find", map[string]any{"pattern": "**/*.go", "head_limit": 1}))
		if !strings.Contains(got, "cut by head_limit; pass offset: 1") {
			t.Errorf("find cut note missing:\n%s", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"pattern": "*.go", "path": "missing"}, "NOT_FOUND"},
			{map[string]any{"pattern": "*.go", "path": "main.go"}, "not a directory"},
			{map[string]any{"pattern": "[a"}, "INVALID_ARGUMENT"},
			{map[string]any{"pattern": "{a"}, "INVALID_ARGUMENT"},
			{map[string]any{"pattern": ""}, "INVALID_ARGUMENT"},
			{map[string]any{"pattern": "../*.go"}, `set path to the directory to search instead`},
			{map[string]any{"pattern": "sub/../**/*.go"}, `goes through '..'`},
			{map[string]any{"pattern": "*.go", "type": "link"}, ""},
		} {
			res, err := cs.CallTool(t.Context(), callParams("find", tc.args))
			if err != nil {
				continue // rejected by the schema: fine
			}
			if !res.IsError || !strings.Contains(textOf(res), tc.want) {
				t.Errorf("find(%v) = %q, want an error mentioning %q", tc.args, textOf(res), tc.want)
			}
		}
	})
}

func TestFindFIFOAndSymlinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"out.go": ""})
	cfg := testConfig(t)
	cfg.AllowDirs = []string{cfg.Workdir}
	writeTree(t, cfg.Workdir, map[string]string{"in.go": "", "sub/x.go": ""})
	if err := syscall.Mkfifo(filepath.Join(cfg.Workdir, "pipe.go"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, target := range map[string]string{
		"escape.go":   filepath.Join(outside, "out.go"),
		"escapedir":   outside,
		"inside.go":   filepath.Join(cfg.Workdir, "in.go"),
		"loop":        ".",
		"dangling.go": filepath.Join(cfg.Workdir, "nothing"),
	} {
		if err := os.Symlink(target, filepath.Join(cfg.Workdir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cs, _ := connect(t, cfg, nil)
	got := textOf(call(t, cs, "find", map[string]any{"pattern": "**/*.go"}))
	lines := bodyLines(got)
	slices.Sort(lines)
	if want := []string{"in.go", "inside.go", "sub/x.go"}; !slices.Equal(lines, want) {
		t.Errorf("find = %q, want %q\n%s", lines, want, got)
	}
	if strings.Contains(got, "out.go") {
		t.Errorf("find followed a link out of scope:\n%s", got)
	}
	got = textOf(call(t, cs, "grep", map[string]any{"pattern": "x", "path": "."}))
	if strings.Contains(got, "out.go") {
		t.Errorf("grep followed a link out of scope:\n%s", got)
	}
}

func callParams(name string, args any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}
