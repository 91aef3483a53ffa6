package tools_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The text the file tools return is pinned by testdata/calls; these tests check what the
// text cannot show: the bytes and modes of the files on disk.

func writeIn(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// wantOK fails unless res is a success.
func wantOK(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("result is an error: %s", textOf(res))
	}
}

// wantErr fails unless res is an error whose text starts with code.
func wantErr(t *testing.T, res *mcp.CallToolResult, code string) {
	t.Helper()
	if !res.IsError || !strings.HasPrefix(textOf(res), code+": ") {
		t.Fatalf("result = %q (isError %v), want a %s error", textOf(res), res.IsError, code)
	}
}

// TestStrReplaceKeepsBytesAndMode: an edit changes only the text it replaces, keeping the
// byte order mark, the line endings, a missing final newline, bytes that are not UTF-8,
// and the file's mode; a refused edit writes nothing.
func TestStrReplaceKeepsBytesAndMode(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	noise := make([]byte, 20000)
	for i := range noise {
		noise[i] = byte(1 + (i*7919+i*i*31)%255)
	}
	tests := []struct {
		name, content string
		perm          os.FileMode
		args          map[string]any // str_replace's, without path
		want          string         // the file after the edit; "" when it is refused
	}{
		{"crlf, bom, no final newline", "\xEF\xBB\xBFone\r\ntwo\r\nthree", 0o755,
			map[string]any{"old_str": "one\ntwo", "new_str": "1\n2\n2b"}, "\xEF\xBB\xBF1\r\n2\r\n2b\r\nthree"},
		{"cr", "a\rb\rc\r", 0o644, map[string]any{"old_str": "b\nc", "new_str": "B\nC"}, "a\rB\rC\r"},
		{"delete keeps a private mode", "a\nb\na\n", 0o600, map[string]any{"old_str": "b\n"}, "a\na\n"},
		{"replace all", "a\nb\na\n", 0o644, map[string]any{"old_str": "a", "new_str": "z", "replace_all": true}, "z\nb\nz\n"},
		{"latin-1", "caf\xe9\nname = x\n", 0o644, map[string]any{"old_str": "= x", "new_str": "= y"}, "caf\xe9\nname = y\n"},
		{"latin-1 with U+FFFD refused", "caf\xe9\nname = x\n", 0o644, map[string]any{"old_str": "= x", "new_str": "= \uFFFD"}, ""},
		{"ambiguous refused", "a\nb\na\n", 0o644, map[string]any{"old_str": "a", "new_str": "z"}, ""},
		{"binary refused", string(noise), 0o644, map[string]any{"old_str": string(noise[:3]), "new_str": "x"}, ""},
	}
	var paths []string
	for i, tc := range tests {
		paths = append(paths, writeIn(t, wd, "f"+string(rune('a'+i)), tc.content, tc.perm))
	}
	cs, _ := connect(t, cfg, nil)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call(t, cs, "view", map[string]any{"path": paths[i]}) // allows the edit; a binary file stays unviewed
			args := map[string]any{"path": paths[i]}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, cs, "str_replace", args)
			want := tc.want
			if want == "" {
				want = tc.content
				if !res.IsError {
					t.Errorf("str_replace(%v) succeeded: %s", tc.args, textOf(res))
				}
			} else {
				wantOK(t, res)
			}
			if got := mustRead(t, paths[i]); got != want {
				t.Errorf("after str_replace(%v): file = %q, want %q", tc.args, got, want)
			}
			if got := mode(t, paths[i]); got != tc.perm {
				t.Errorf("after str_replace(%v): mode = %04o, want %04o", tc.args, got, tc.perm)
			}
		})
	}
}

func TestCreateFileBytesAndMode(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	exe := writeIn(t, wd, "run.sh", "old\n", 0o750)
	cs, _ := connect(t, cfg, nil)

	wantOK(t, call(t, cs, "create_file", map[string]any{"path": "new/dir/f.txt", "content": "hello\r\n"}))
	if got := mustRead(t, filepath.Join(wd, "new/dir/f.txt")); got != "hello\r\n" {
		t.Errorf("created file = %q, want %q", got, "hello\r\n")
	}
	wantOK(t, call(t, cs, "create_file", map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"}))
	if got := mustRead(t, exe); got != "#!/bin/sh\n" || mode(t, exe) != 0o750 {
		t.Errorf("run.sh after overwrite: mode %04o, content %q; want 0750 and the new content", mode(t, exe), got)
	}
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "dir/", "content": "x"}), "INVALID_ARGUMENT")
	if _, err := os.Lstat(filepath.Join(wd, "dir")); err == nil {
		t.Errorf("create_file dir/ created dir")
	}
}

func TestEditorTool(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.AnthropicCompat = true
	wd := cfg.Workdir
	p := writeIn(t, wd, "f.txt", "one\r\ntwo\r\n", 0o644)
	cs, _ := connect(t, cfg, nil)

	tl, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var editor *mcp.Tool
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
		if tool.Name == "str_replace_editor" {
			editor = tool
		}
	}
	if editor == nil || slices.Contains(names, "view") || slices.Contains(names, "str_replace") || slices.Contains(names, "create_file") {
		t.Fatalf("compat tools = %q, want str_replace_editor and none of the split tools", names)
	}
	schema := editor.InputSchema.(map[string]any)
	enum := schema["properties"].(map[string]any)["command"].(map[string]any)["enum"]
	if got := enumStrings(enum); !slices.Equal(got, []string{"view", "create", "str_replace", "insert", "undo_edit"}) {
		t.Errorf("command enum = %q", got)
	}
	if editor.Annotations == nil || editor.Annotations.DestructiveHint == nil || !*editor.Annotations.DestructiveHint {
		t.Errorf("str_replace_editor is not marked destructive")
	}

	ed := func(args map[string]any) *mcp.CallToolResult { return call(t, cs, "str_replace_editor", args) }
	wantOK(t, ed(map[string]any{"command": "view", "path": "f.txt"}))
	wantOK(t, ed(map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "one\ntwo", "new_str": "1\n2"}))
	wantOK(t, ed(map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "zero"}))
	wantOK(t, ed(map[string]any{"command": "insert", "path": "f.txt", "insert_line": 3, "insert_text": "three"}))
	if got, want := mustRead(t, p), "zero\r\n1\r\n2\r\nthree\r\n"; got != want {
		t.Fatalf("f.txt = %q, want %q", got, want)
	}
	wantOK(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}))
	wantOK(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}))
	if got, want := mustRead(t, p), "1\r\n2\r\n"; got != want {
		t.Fatalf("f.txt after two undos = %q, want %q", got, want)
	}
	// The file changes behind the session's back: undo refuses.
	if err := os.WriteFile(p, []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}), "STALE_VIEW")
	if mustRead(t, p) != "other\n" {
		t.Errorf("refused undo changed the file")
	}
}

func enumStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func TestDescriptionsStateViewRuleOnlyWhenOn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		require, compat bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		cfg := testConfig(t)
		cfg.RequireViewBeforeEdit, cfg.AnthropicCompat = tc.require, tc.compat
		cs, _ := connect(t, cfg, nil)
		tl, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tl.Tools {
			if strings.Contains(tool.Description, "%!") {
				t.Errorf("%s description has a formatting error: %q", tool.Name, tool.Description)
			}
			if tool.Name != "str_replace" && tool.Name != "str_replace_editor" {
				continue
			}
			if got := strings.Contains(tool.Description, "in this session before"); got != tc.require {
				t.Errorf("require-view %v: %s description states the view rule: %v", tc.require, tool.Name, got)
			}
		}
	}
}
