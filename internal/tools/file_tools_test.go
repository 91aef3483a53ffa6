package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// wantOK fails unless res is a success containing every one of has.
func wantOK(t *testing.T, res *mcp.CallToolResult, has ...string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("result is an error: %s", textOf(res))
	}
	for _, h := range has {
		if !strings.Contains(textOf(res), h) {
			t.Errorf("result %q does not contain %q", textOf(res), h)
		}
	}
}

// wantErr fails unless res is an error whose text starts with code and contains has.
func wantErr(t *testing.T, res *mcp.CallToolResult, code string, has ...string) {
	t.Helper()
	if !res.IsError || !strings.HasPrefix(textOf(res), code+": ") {
		t.Fatalf("result = %q (isError %v), want a %s error", textOf(res), res.IsError, code)
	}
	for _, h := range has {
		if !strings.Contains(textOf(res), h) {
			t.Errorf("error %q does not contain %q", textOf(res), h)
		}
	}
}

func TestViewTool(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	writeIn(t, wd, "a.go", "package a\n\nfunc A() {}\n", 0o644)
	var long strings.Builder
	for i := range 2500 {
		long.WriteString("line ")
		long.WriteString(strings.Repeat("x", i%7))
		long.WriteString("\n")
	}
	writeIn(t, wd, "long.txt", long.String(), 0o644)
	writeIn(t, wd, "img.bin", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00", 0o644)
	writeIn(t, wd, "blob", "ab\x00\x01\x02", 0o644)
	writeIn(t, wd, "sub/.env", "X=1\n", 0o644)
	writeIn(t, wd, ".git/config", "", 0o644)
	writeIn(t, wd, "node_modules/m/index.js", "", 0o644)
	if err := os.Symlink("a.go", filepath.Join(wd, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(wd, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, cfg, nil)

	t.Run("file", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "a.go"})
		wantOK(t, res)
		if got, want := textOf(res), "     1\tpackage a\n     2\t\n     3\tfunc A() {}\n"; got != want {
			t.Errorf("view a.go = %q, want %q", got, want)
		}
	})
	t.Run("default shows 2000 lines and says how to see more", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "long.txt"})
		wantOK(t, res, "  2000\t", "view_range [2001, 4000]")
		if strings.Contains(textOf(res), "  2001\t") {
			t.Errorf("default view shows line 2001")
		}
	})
	t.Run("range clamped", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "long.txt", "view_range": []int{2499, 3000}})
		wantOK(t, res, "  2499\t", "  2500\t", "end 3000 is past the end of the file, which has 2500 lines")
	})
	t.Run("range to the end", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "long.txt", "view_range": []int{2500, -1}})
		wantOK(t, res, "  2500\t")
	})
	t.Run("start past the end", func(t *testing.T) {
		wantErr(t, call(t, cs, "view", map[string]any{"path": "a.go", "view_range": []int{9, 10}}), "INVALID_ARGUMENT", "has 3 lines")
	})
	t.Run("start zero", func(t *testing.T) {
		wantErr(t, call(t, cs, "view", map[string]any{"path": "a.go", "view_range": []int{0, 2}}), "INVALID_ARGUMENT", "numbered from 1")
	})
	t.Run("bad range", func(t *testing.T) {
		if res := call(t, cs, "view", map[string]any{"path": "a.go", "view_range": []int{1}}); !res.IsError {
			t.Errorf("view_range [1] accepted: %s", textOf(res))
		}
	})
	t.Run("directory", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "."})
		wantOK(t, res)
		lines := strings.Split(strings.TrimSpace(textOf(res)), "\n")[1:]
		want := []string{"a.go", "blob", "fifo", "img.bin", "link -> a.go", "long.txt", "sub/", "sub/.env"}
		if !slices.Equal(lines, want) {
			t.Errorf("view . lists %q, want %q", lines, want)
		}
	})
	t.Run("image", func(t *testing.T) {
		res := call(t, cs, "view", map[string]any{"path": "img.bin"})
		img, ok := res.Content[0].(*mcp.ImageContent)
		if res.IsError || !ok || img.MIMEType != "image/png" || len(img.Data) != 17 {
			t.Fatalf("view img.bin = %#v, want a 17-byte image/png", res.Content[0])
		}
	})
	t.Run("binary", func(t *testing.T) {
		wantErr(t, call(t, cs, "view", map[string]any{"path": "blob"}), "UNSUPPORTED_FILE", "binary", "5 bytes")
	})
	t.Run("fifo", func(t *testing.T) {
		wantErr(t, call(t, cs, "view", map[string]any{"path": "fifo"}), "UNSUPPORTED_FILE", "named pipe")
	})
	t.Run("missing", func(t *testing.T) {
		wantErr(t, call(t, cs, "view", map[string]any{"path": "nope.txt"}), "NOT_FOUND", "nope.txt does not exist")
	})
}

func TestViewTooLarge(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxFileSize = 100
	writeIn(t, cfg.Workdir, "big.txt", strings.Repeat("0123456789\n", 20), 0o644)
	cs, _ := connect(t, cfg, nil)
	wantErr(t, call(t, cs, "view", map[string]any{"path": "big.txt"}), "TOO_LARGE", "220 bytes", "view_range")
	wantOK(t, call(t, cs, "view", map[string]any{"path": "big.txt", "view_range": []int{2, 3}}), "     2\t0123456789\n     3\t0123456789\n")
	wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "big.txt", "old_str": "0", "new_str": "1"}), "TOO_LARGE")
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "new.txt", "content": strings.Repeat("x", 101)}), "TOO_LARGE")
}

func TestStrReplaceTool(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	crlf := writeIn(t, wd, "crlf.txt", "\xEF\xBB\xBFone\r\ntwo\r\nthree", 0o755)
	plain := writeIn(t, wd, "plain.txt", "a\nb\na\n", 0o600)
	latin := writeIn(t, wd, "latin.txt", "caf\xe9\nname = x\n", 0o644)
	cs, _ := connect(t, cfg, nil)

	wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "plain.txt", "old_str": "b", "new_str": "B"}), "STALE_VIEW", "view it first")
	if mustRead(t, plain) != "a\nb\na\n" {
		t.Fatalf("refused edit changed the file")
	}
	t.Run("a view of some lines allows an edit anywhere", func(t *testing.T) {
		var b strings.Builder
		for i := range 4000 {
			fmt.Fprintf(&b, "line %d\n", i+1)
		}
		p := writeIn(t, wd, "long.txt", b.String(), 0o644)
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "long.txt", "old_str": "line 4000\n", "new_str": "last\n"}),
			"STALE_VIEW", "view it first", "any view of it in this session counts")
		wantOK(t, call(t, cs, "view", map[string]any{"path": "long.txt", "view_range": []int{1, 5}}))
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "long.txt", "old_str": "line 4000\n", "new_str": "last\n"}), "  4000\tlast")
		if !strings.HasSuffix(mustRead(t, p), "line 3999\nlast\n") {
			t.Errorf("long.txt does not end with the edit")
		}
	})
	for _, p := range []string{"crlf.txt", "plain.txt", "latin.txt"} {
		wantOK(t, call(t, cs, "view", map[string]any{"path": p}))
	}

	t.Run("crlf, bom, mode and missing final newline kept", func(t *testing.T) {
		res := call(t, cs, "str_replace", map[string]any{"path": "crlf.txt", "old_str": "one\ntwo", "new_str": "1\n2\n2b"})
		wantOK(t, res, "     3\t2b\n", "CRLF")
		if got, want := mustRead(t, crlf), "\xEF\xBB\xBF1\r\n2\r\n2b\r\nthree"; got != want {
			t.Errorf("crlf.txt = %q, want %q", got, want)
		}
		if info, _ := os.Stat(crlf); info.Mode().Perm() != 0o755 {
			t.Errorf("crlf.txt mode = %04o, want 0755", info.Mode().Perm())
		}
	})
	t.Run("ambiguous", func(t *testing.T) {
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "plain.txt", "old_str": "a", "new_str": "z"}), "AMBIGUOUS_MATCH", "lines 1, 3")
	})
	t.Run("replace all", func(t *testing.T) {
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "plain.txt", "old_str": "a", "new_str": "z", "replace_all": true}), "Replaced 2 occurrences")
		if got := mustRead(t, plain); got != "z\nb\nz\n" {
			t.Errorf("plain.txt = %q", got)
		}
	})
	t.Run("replace all, several on one line", func(t *testing.T) {
		writeIn(t, wd, "dup.txt", "k k\nk\n", 0o644)
		wantOK(t, call(t, cs, "view", map[string]any{"path": "dup.txt"}))
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "dup.txt", "old_str": "k", "new_str": "v"}), "AMBIGUOUS_MATCH", "3 places", "on lines 1, 2;")
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "dup.txt", "old_str": "k", "new_str": "v", "replace_all": true}), "Replaced 3 occurrences", "on lines 1, 2 ")
	})
	t.Run("delete", func(t *testing.T) {
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "plain.txt", "old_str": "b\n"}), "Deleted")
		if got := mustRead(t, plain); got != "z\nz\n" {
			t.Errorf("plain.txt = %q", got)
		}
		if info, _ := os.Stat(plain); info.Mode().Perm() != 0o600 {
			t.Errorf("plain.txt mode = %04o, want 0600", info.Mode().Perm())
		}
	})
	t.Run("not found", func(t *testing.T) {
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "latin.txt", "old_str": "name  = x", "new_str": "y"}), "NO_MATCH", "closest", `"name = x"`)
	})
	t.Run("latin-1", func(t *testing.T) {
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "latin.txt", "old_str": "= x", "new_str": "= y"}))
		if got := mustRead(t, latin); got != "caf\xe9\nname = y\n" {
			t.Errorf("latin.txt = %q", got)
		}
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "latin.txt", "old_str": "= y", "new_str": "= \uFFFD"}), "INVALID_ARGUMENT", "U+FFFD")
	})
	t.Run("changed on disk", func(t *testing.T) {
		p := writeIn(t, wd, "moving.txt", "x = 1\ny = 2\n", 0o644)
		wantOK(t, call(t, cs, "view", map[string]any{"path": "moving.txt"}))
		os.WriteFile(p, []byte("x = 1\ny = 3\n"), 0o644)
		wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "moving.txt", "old_str": "x = 1", "new_str": "x = 9"}), "had changed on disk")
		os.WriteFile(p, []byte("x = 7\nx = 7\n"), 0o644)
		wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "moving.txt", "old_str": "x = 7", "new_str": "x = 8"}), "STALE_VIEW", "now read", "     1\tx = 7")
	})
}

func TestCreateFileTool(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	exe := writeIn(t, wd, "run.sh", "old\n", 0o750)
	cs, _ := connect(t, cfg, nil)

	wantOK(t, call(t, cs, "create_file", map[string]any{"path": "new/dir/f.txt", "content": "hello\r\n"}), "Created", "7 bytes")
	if got := mustRead(t, filepath.Join(wd, "new/dir/f.txt")); got != "hello\r\n" {
		t.Errorf("created file = %q", got)
	}
	wantOK(t, call(t, cs, "create_file", map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"}), "Overwrote", "0750")
	if info, _ := os.Stat(exe); info.Mode().Perm() != 0o750 || mustRead(t, exe) != "#!/bin/sh\n" {
		t.Errorf("run.sh after overwrite: mode %04o, content %q", info.Mode().Perm(), mustRead(t, exe))
	}
	// A file written in this session can be edited without viewing it.
	wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "new/dir/f.txt", "old_str": "hello", "new_str": "bye"}))
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "new", "content": "x"}), "UNSUPPORTED_FILE", "directory")
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "dir/", "content": "x"}), "INVALID_ARGUMENT", "ends with a slash", "give a file path")
	if _, err := os.Lstat(filepath.Join(wd, "dir")); err == nil {
		t.Errorf("create_file dir/ created dir")
	}
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "run.sh/sub.txt", "content": "x"}), "INVALID_ARGUMENT", "run.sh is a file, not a directory")
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "", "content": "x"}), "INVALID_ARGUMENT", "path is empty")
	wantErr(t, call(t, cs, "create_file", map[string]any{"path": "a\x00b", "content": "x"}), "INVALID_ARGUMENT", "NUL byte")
	wantErr(t, call(t, cs, "view", map[string]any{"path": "a\x00b"}), "INVALID_ARGUMENT", "NUL byte")
}

func TestReadOnlyDirectory(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	dir := filepath.Join(cfg.Workdir, "ro")
	p := writeIn(t, cfg.Workdir, "ro/f.txt", "original\n", 0o644)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	cs, _ := connect(t, cfg, nil)
	wantOK(t, call(t, cs, "view", map[string]any{"path": "ro/f.txt"}))
	if res := call(t, cs, "str_replace", map[string]any{"path": "ro/f.txt", "old_str": "original", "new_str": "changed"}); !res.IsError {
		t.Errorf("str_replace in a read-only directory succeeded: %s", textOf(res))
	}
	if res := call(t, cs, "create_file", map[string]any{"path": "ro/f.txt", "content": "changed"}); !res.IsError {
		t.Errorf("create_file in a read-only directory succeeded: %s", textOf(res))
	}
	if got := mustRead(t, p); got != "original\n" {
		t.Errorf("file in read-only directory = %q, want the original", got)
	}
}

func TestViewBeforeEditOff(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.RequireViewBeforeEdit = false
	p := writeIn(t, cfg.Workdir, "f.txt", "a\n", 0o644)
	cs, _ := connect(t, cfg, nil)
	wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "f.txt", "old_str": "a", "new_str": "b"}))
	if got := mustRead(t, p); got != "b\n" {
		t.Errorf("f.txt = %q", got)
	}
}

func TestFileToolsScoping(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	wd := cfg.Workdir
	outside := t.TempDir()
	secret := writeIn(t, outside, "secret.txt", "secret\n", 0o644)
	inside := writeIn(t, wd, "real.txt", "inside\n", 0o644)
	os.Symlink(secret, filepath.Join(wd, "out-link"))
	os.Symlink(outside, filepath.Join(wd, "out-dir"))
	os.Symlink(filepath.Join(outside, "later.txt"), filepath.Join(wd, "dangling"))
	os.Symlink("real.txt", filepath.Join(wd, "in-link"))
	writeIn(t, wd, "private/key", "k\n", 0o644)
	cfg.AllowDirs = []string{wd}
	cfg.DenyDirs = []string{"private"}
	cs, _ := connect(t, cfg, nil)

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "out-link"}},
		{"view", map[string]any{"path": "out-dir"}},
		{"view", map[string]any{"path": secret}},
		{"view", map[string]any{"path": "../" + filepath.Base(outside) + "/secret.txt"}},
		{"view", map[string]any{"path": "private/key"}},
		{"str_replace", map[string]any{"path": "out-link", "old_str": "secret", "new_str": "x"}},
		{"create_file", map[string]any{"path": "out-link", "content": "x"}},
		{"create_file", map[string]any{"path": "dangling", "content": "x"}},
		{"create_file", map[string]any{"path": "out-dir/new.txt", "content": "x"}},
	} {
		wantErr(t, call(t, cs, tc.tool, tc.args), "ACCESS_DENIED")
	}
	if mustRead(t, secret) != "secret\n" {
		t.Errorf("a file outside the allowed directory was changed")
	}
	if _, err := os.Stat(filepath.Join(outside, "later.txt")); err == nil {
		t.Errorf("a write through a dangling link created a file outside the allowed directory")
	}
	res := call(t, cs, "view", map[string]any{"path": "."})
	wantOK(t, res, "out-link -> "+secret)
	if strings.Contains(textOf(res), "private") {
		t.Errorf("listing shows a denied directory: %s", textOf(res))
	}
	// A link inside the root: the target is written, the link stays a link.
	wantOK(t, call(t, cs, "view", map[string]any{"path": "in-link"}))
	wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "in-link", "old_str": "inside", "new_str": "edited"}))
	if fi, err := os.Lstat(filepath.Join(wd, "in-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 || mustRead(t, inside) != "edited\n" {
		t.Errorf("edit through in-link: link kept %v, target %q", err == nil && fi.Mode()&os.ModeSymlink != 0, mustRead(t, inside))
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
	wantErr(t, ed(map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "one", "new_str": "1"}), "STALE_VIEW")
	wantOK(t, ed(map[string]any{"command": "view", "path": "f.txt"}), "     1\tone\n     2\ttwo\n")
	wantOK(t, ed(map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "one\ntwo", "new_str": "1\n2"}))
	wantOK(t, ed(map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "zero"}), "     1\tzero\n")
	wantOK(t, ed(map[string]any{"command": "insert", "path": "f.txt", "insert_line": 3, "insert_text": "three"}))
	if got, want := mustRead(t, p), "zero\r\n1\r\n2\r\nthree\r\n"; got != want {
		t.Fatalf("f.txt = %q, want %q", got, want)
	}
	wantErr(t, ed(map[string]any{"command": "insert", "path": "f.txt", "new_str": "x"}), "INVALID_ARGUMENT", "insert_line")
	wantOK(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}))
	wantOK(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}))
	if got, want := mustRead(t, p), "1\r\n2\r\n"; got != want {
		t.Fatalf("f.txt after two undos = %q, want %q", got, want)
	}
	// The file changes behind the session's back: undo refuses.
	os.WriteFile(p, []byte("other\n"), 0o644)
	wantErr(t, ed(map[string]any{"command": "undo_edit", "path": "f.txt"}), "STALE_VIEW", "changed since that edit")
	if mustRead(t, p) != "other\n" {
		t.Errorf("refused undo changed the file")
	}

	wantOK(t, ed(map[string]any{"command": "create", "path": "g/h.txt", "file_text": "new\n"}), "Created")
	wantOK(t, ed(map[string]any{"command": "undo_edit", "path": "g/h.txt"}), "removed")
	if _, err := os.Stat(filepath.Join(wd, "g/h.txt")); err == nil {
		t.Errorf("undo of a create left the file")
	}
	wantErr(t, ed(map[string]any{"command": "undo_edit", "path": "g/h.txt"}), "INVALID_ARGUMENT", "no edit")
	if res := ed(map[string]any{"command": "delete", "path": "f.txt"}); !res.IsError {
		t.Errorf("command delete accepted")
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

// TestEditorArguments: each command refuses a missing argument it needs, or one that belongs
// to another command, with an error naming it, and leaves the file alone.
func TestEditorArguments(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.AnthropicCompat = true
	p := writeIn(t, cfg.Workdir, "f.txt", "keep me\n", 0o644)
	cs, _ := connect(t, cfg, nil)
	ed := func(args map[string]any) *mcp.CallToolResult { return call(t, cs, "str_replace_editor", args) }
	wantOK(t, ed(map[string]any{"command": "view", "path": "f.txt"}))

	for _, tc := range []struct {
		name string
		args map[string]any
		has  []string
	}{
		{"create without file_text", map[string]any{"command": "create", "path": "f.txt"}, []string{"file_text is required for create"}},
		{"create with new_str instead of file_text", map[string]any{"command": "create", "path": "f.txt", "new_str": "x"}, []string{"file_text is required for create"}},
		{"str_replace without old_str", map[string]any{"command": "str_replace", "path": "f.txt", "new_str": "x"}, []string{"old_str is required for str_replace"}},
		{"insert without insert_line", map[string]any{"command": "insert", "path": "f.txt", "new_str": "x"}, []string{"insert_line is required for insert"}},
		{"insert without text", map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0}, []string{"new_str", "is required for insert"}},
		{"view_range on create", map[string]any{"command": "create", "path": "f.txt", "file_text": "x", "view_range": []int{1, 2}}, []string{"view_range", "view"}},
		{"file_text on str_replace", map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "keep", "file_text": "x"}, []string{"file_text", "create"}},
		{"old_str on insert", map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "x", "old_str": "keep"}, []string{"old_str", "str_replace"}},
		{"insert_line on view", map[string]any{"command": "view", "path": "f.txt", "insert_line": 1}, []string{"insert_line", "insert"}},
		{"replace_all on insert", map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "x", "replace_all": true}, []string{"replace_all", "str_replace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, ed(tc.args), "INVALID_ARGUMENT", tc.has...)
			if got := mustRead(t, p); got != "keep me\n" {
				t.Fatalf("f.txt = %q after a refused call, want it unchanged", got)
			}
		})
	}
	t.Run("create with an empty file_text makes an empty file", func(t *testing.T) {
		wantOK(t, ed(map[string]any{"command": "create", "path": "empty.txt", "file_text": ""}), "wrote 0 bytes")
		if got := mustRead(t, filepath.Join(cfg.Workdir, "empty.txt")); got != "" {
			t.Errorf("empty.txt = %q, want empty", got)
		}
	})
}

// TestCRLineEndings: a file with classic Mac OS line endings (lone CR) shows as lines, with
// a note that names its line endings correctly, and an edit keeps them.
func TestCRLineEndings(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	p := writeIn(t, cfg.Workdir, "mac.txt", "a\rb\rc\r", 0o644)
	cs, _ := connect(t, cfg, nil)
	res := call(t, cs, "view", map[string]any{"path": "mac.txt"})
	wantOK(t, res, "     1\ta\n     2\tb\n     3\tc\n", "CR (\\r) line endings")
	if strings.Contains(textOf(res), "CRLF") {
		t.Errorf("view of a CR file claims CRLF: %q", textOf(res))
	}
	wantOK(t, call(t, cs, "str_replace", map[string]any{"path": "mac.txt", "old_str": "b\nc", "new_str": "B\nC"}), "     2\tB\n", "CR")
	if got, want := mustRead(t, p), "a\rB\rC\r"; got != want {
		t.Errorf("mac.txt = %q, want %q", got, want)
	}
}

// TestBinaryWithoutNUL: random bytes with no NUL among them are refused as binary by view
// and str_replace, while 8-bit text stays viewable.
func TestBinaryWithoutNUL(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	noise := make([]byte, 20000)
	for i := range noise {
		noise[i] = byte(1 + (i*7919+i*i*31)%255)
	}
	p := writeIn(t, cfg.Workdir, "noise.bin", string(noise), 0o644)
	writeIn(t, cfg.Workdir, "latin.txt", strings.Repeat("Le caf\xe9 \xe0 c\xf4t\xe9 de l'\xe9glise.\n", 50), 0o644)
	cs, _ := connect(t, cfg, nil)
	wantErr(t, call(t, cs, "view", map[string]any{"path": "noise.bin"}), "UNSUPPORTED_FILE", "binary", "20,000 bytes", "detected type")
	wantErr(t, call(t, cs, "str_replace", map[string]any{"path": "noise.bin", "old_str": string(noise[:3]), "new_str": "x"}), "UNSUPPORTED_FILE", "binary")
	if mustRead(t, p) != string(noise) {
		t.Errorf("refused edit changed noise.bin")
	}
	wantOK(t, call(t, cs, "view", map[string]any{"path": "latin.txt"}), "    50\tLe caf")
}
