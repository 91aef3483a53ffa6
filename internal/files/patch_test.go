package files

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mjkoo/boris/internal/testutil"
)

func TestParsePatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		patch   string
		want    []PatchOp
		wantErr string
	}{
		{"add, delete, update with move", "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n*** Update File: c.py\n*** Move to: d.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch\n",
			[]PatchOp{
				{Kind: OpAdd, Path: "a.txt", Content: "one\ntwo\n", Line: 2},
				{Kind: OpDelete, Path: "b.txt", Line: 5},
				{Kind: OpUpdate, Path: "c.py", MoveTo: "d.py", Line: 6, Chunks: []Chunk{{Context: "def f():", Old: []string{"    pass"}, New: []string{"    return 1"}, Line: 8}}},
			}, ""},
		{"first chunk without @@, empty line is context", "*** Begin Patch\n*** Update File: f\n import x\n\n+y\n*** End Patch",
			[]PatchOp{{Kind: OpUpdate, Path: "f", Line: 2, Chunks: []Chunk{{Old: []string{"import x", ""}, New: []string{"import x", "", "y"}, Line: 3}}}}, ""},
		{"two chunks and end of file", "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n@@ ctx\n-c\n+d\n*** End of File\n*** End Patch",
			[]PatchOp{{Kind: OpUpdate, Path: "f", Line: 2, Chunks: []Chunk{
				{Old: []string{"a"}, New: []string{"b"}, Line: 3},
				{Context: "ctx", Old: []string{"c"}, New: []string{"d"}, EOF: true, Line: 6}}}}, ""},
		{"CRLF patch and padded markers", "  *** Begin Patch \r\n*** Add File: a\r\n+x\r\n *** End Patch\r\n",
			[]PatchOp{{Kind: OpAdd, Path: "a", Content: "x\n", Line: 2}}, ""},
		{"heredoc", "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
			[]PatchOp{{Kind: OpDelete, Path: "a", Line: 2}}, ""},
		{"empty", "*** Begin Patch\n*** End Patch", nil, ""},
		{"no begin", "hello", nil, "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"no end", "*** Begin Patch\n*** Delete File: a", nil, "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"bad header", "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", nil,
			"invalid hunk at line 2, '*** Frobnicate File: a' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"},
		{"empty update", "*** Begin Patch\n*** Update File: a\n*** End Patch", nil, "invalid hunk at line 2, Update file hunk for path 'a' is empty"},
		{"bad diff line", "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch", nil,
			"invalid hunk at line 4, Unexpected line found in update hunk: '?x'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"},
		{"second chunk without @@", "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n\nzzz\n*** End Patch", nil,
			"invalid hunk at line 7, Expected update hunk to start with a @@ context marker, got: 'zzz'"},
		{"@@ with no lines", "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch", nil, "invalid hunk at line 4, Update hunk does not contain any lines"},
		{"no path", "*** Begin Patch\n*** Add File: \n+x\n*** End Patch", nil, "invalid hunk at line 2, '*** Add File:' names no file: write the path after the colon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := ParsePatch(tt.patch)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalid) {
					t.Fatalf("ParsePatch(%q) error = %v, want %q", tt.patch, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePatch(%q): %v", tt.patch, err)
			}
			if diff := cmp.Diff(tt.want, p.Ops); diff != "" {
				t.Errorf("ParsePatch(%q) ops (-want +got):\n%s", tt.patch, diff)
			}
		})
	}
}

// patchDir writes files (name → content) into a new directory and returns it with
// options that resolve patch paths against it.
func patchDir(t *testing.T, files map[string]string) (string, PatchOptions) {
	t.Helper()
	dir := testutil.Files(t, files)
	return dir, PatchOptions{
		Resolve:     func(p string) (string, error) { return filepath.Join(dir, p), nil },
		MaxFileSize: limit,
	}
}

// tree returns every regular file under dir, by relative path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = readBack(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func applyText(t *testing.T, opts PatchOptions, patch string) ([]PatchedFile, error) {
	t.Helper()
	p, err := ParsePatch(patch)
	if err != nil {
		t.Fatalf("ParsePatch: %v", err)
	}
	return ApplyPatch(t.Context(), p, opts)
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before map[string]string
		patch  string
		after  map[string]string
		errHas []string // when the patch must fail and change nothing
	}{
		{"several files", map[string]string{"m.txt": "a\nb\nc\n", "d.txt": "gone\n"},
			"*** Begin Patch\n*** Add File: sub/new.txt\n+hello\n*** Update File: m.txt\n@@\n a\n-b\n+B\n c\n*** Delete File: d.txt\n*** End Patch",
			map[string]string{"m.txt": "a\nB\nc\n", "sub/new.txt": "hello\n"}, nil},
		{"move", map[string]string{"old/x.go": "package x\nvar v = 1\n"},
			"*** Begin Patch\n*** Update File: old/x.go\n*** Move to: new/y.go\n@@\n-var v = 1\n+var v = 2\n*** End Patch",
			map[string]string{"new/y.go": "package x\nvar v = 2\n"}, nil},
		{"context line jumps, chunks in order", map[string]string{"f": "func a() {\n\treturn\n}\nfunc b() {\n\treturn\n}\n"},
			"*** Begin Patch\n*** Update File: f\n@@ func b() {\n-\treturn\n+\treturn 2\n*** End Patch",
			map[string]string{"f": "func a() {\n\treturn\n}\nfunc b() {\n\treturn 2\n}\n"}, nil},
		{"CRLF kept", map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"},
			"*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n+2b\n*** End Patch",
			map[string]string{"w.txt": "one\r\n2\r\n2b\r\nthree\r\n"}, nil},
		{"no final newline kept", map[string]string{"n.txt": "x\ny"},
			"*** Begin Patch\n*** Update File: n.txt\n@@\n-y\n+z\n+w\n*** End Patch",
			map[string]string{"n.txt": "x\nz\nw"}, nil},
		{"BOM kept", map[string]string{"b.txt": bomUTF8 + "first\nsecond\n"},
			"*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+1st\n*** End Patch",
			map[string]string{"b.txt": bomUTF8 + "1st\nsecond\n"}, nil},
		{"pure addition after context", map[string]string{"p": "a\nb\nc\n"},
			"*** Begin Patch\n*** Update File: p\n@@ a\n+a2\n*** End Patch",
			map[string]string{"p": "a\na2\nb\nc\n"}, nil},
		{"pure addition at end", map[string]string{"p": "a\n"},
			"*** Begin Patch\n*** Update File: p\n@@\n+z\n*** End Patch",
			map[string]string{"p": "a\nz\n"}, nil},
		{"whitespace and typographic quotes tolerated", map[string]string{"q": "say(\u201chi\u201d)  \n"},
			"*** Begin Patch\n*** Update File: q\n@@\n-say(\"hi\")\n+say(\"bye\")\n*** End Patch",
			map[string]string{"q": "say(\"bye\")\n"}, nil},
		{"context lines keep their own bytes", map[string]string{"k": "a  \r\nb\n"},
			"*** Begin Patch\n*** Update File: k\n@@\n a\n-b\n+B\n*** End Patch",
			map[string]string{"k": "a  \r\nB\n"}, nil},
		{"end of file anchors to the last match", map[string]string{"e": "x\nend\nx\nend\n"},
			"*** Begin Patch\n*** Update File: e\n@@\n-end\n+END\n*** End of File\n*** End Patch",
			map[string]string{"e": "x\nend\nx\nEND\n"}, nil},
		{"failing chunk in the second file changes nothing", map[string]string{"a": "1\n", "b": "2\n3\n"},
			"*** Begin Patch\n*** Update File: a\n@@\n-1\n+one\n*** Add File: c\n+new\n*** Update File: b\n@@\n-2\n+two\n@@\n-4\n+four\n*** End Patch",
			map[string]string{"a": "1\n", "b": "2\n3\n"}, []string{"Failed to find expected lines in b:\n4"}},
		{"missing context", map[string]string{"a": "1\n"},
			"*** Begin Patch\n*** Update File: a\n@@ func nope()\n-1\n+2\n*** End Patch",
			map[string]string{"a": "1\n"}, []string{"Failed to find context 'func nope()' in a"}},
		{"update of a missing file", map[string]string{"a": "1\n"},
			"*** Begin Patch\n*** Delete File: a\n*** Update File: zz\n@@\n-1\n+2\n*** End Patch",
			map[string]string{"a": "1\n"}, []string{"cannot update", "zz"}},
		{"delete of a missing file", map[string]string{},
			"*** Begin Patch\n*** Delete File: nope\n*** End Patch",
			map[string]string{}, []string{"cannot delete", "nope"}},
		{"closest lines shown", map[string]string{"c": "alpha\nbeta\ngamma\n"},
			"*** Begin Patch\n*** Update File: c\n@@\n alpha\n-betta\n+BETA\n gamma\n*** End Patch",
			map[string]string{"c": "alpha\nbeta\ngamma\n"}, []string{"The closest lines in the file are lines 1-3", `line 2: file has "beta", patch has "betta"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, opts := patchDir(t, tt.before)
			_, err := applyText(t, opts, tt.patch)
			switch {
			case tt.errHas == nil && err != nil:
				t.Fatalf("ApplyPatch: %v", err)
			case tt.errHas != nil && err == nil:
				t.Fatalf("ApplyPatch succeeded, want an error with %q", tt.errHas)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("ApplyPatch error %q does not contain %q", err, s)
				}
			}
			if diff := cmp.Diff(tt.after, tree(t, dir)); diff != "" {
				t.Errorf("files after ApplyPatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyPatchReport(t *testing.T) {
	t.Parallel()
	_, opts := patchDir(t, map[string]string{"m": "x\n", "d": "y\n", "crlf": "a\r\nb\r\n"})
	got, err := applyText(t, opts, "*** Begin Patch\n*** Delete File: d\n*** Update File: m\n*** Move to: m2\n@@\n-x\n+X\n*** Add File: a\n+z\n*** Update File: crlf\n@@\n-a\n+A\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, map[OpKind]string{OpAdd: "A", OpUpdate: "M", OpDelete: "D"}[f.Kind]+" "+f.Path+" "+strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(f.EOL))
	}
	want := []string{"A a ", "M m2 ", `M crlf \r\n`, "D d "}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("ApplyPatch report (-want +got):\n%s", diff)
	}
}

func TestApplyPatchModes(t *testing.T) {
	t.Parallel()
	dir, opts := patchDir(t, map[string]string{"run.sh": "echo a\n", "mv.sh": "echo b\n"})
	for _, f := range []string{"run.sh", "mv.sh"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o751); err != nil {
			t.Fatal(err)
		}
	}
	_, err := applyText(t, opts, "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo A\n*** Update File: mv.sh\n*** Move to: bin/mv.sh\n@@\n-echo b\n+echo B\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run.sh", "bin/mv.sh"} {
		info, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o751 {
			t.Errorf("%s has mode %v after the patch, want 0751", f, info.Mode().Perm())
		}
	}
}

// TestApplyPatchAllOrNothing fails each step of the commit in turn: the files changed
// before it must be put back, and no temporary file may be left.
func TestApplyPatchAllOrNothing(t *testing.T) {
	before := map[string]string{"a": "1\n", "b": "2\n", "c": "3\n"}
	patch := "*** Begin Patch\n*** Update File: a\n@@\n-1\n+one\n*** Add File: n/new\n+new\n*** Delete File: b\n*** Update File: c\n@@\n-3\n+three\n*** End Patch"
	for step := -1; step < 4; step++ {
		dir, opts := patchDir(t, before)
		patchCommitHook = func(s int) error {
			if s == step {
				return syscall.EIO
			}
			return nil
		}
		_, err := applyText(t, opts, patch)
		patchCommitHook = nil
		if err == nil || !strings.Contains(err.Error(), "no file was changed") && step >= 0 {
			t.Errorf("step %d: ApplyPatch error = %v, want one saying no file was changed", step, err)
		}
		got := tree(t, dir)
		if diff := cmp.Diff(before, got); diff != "" {
			t.Errorf("step %d: files after a failed commit (-want +got):\n%s", step, diff)
		}
	}
}

// TestApplyPatchStale changes a file between the patch's read and its commit.
func TestApplyPatchStale(t *testing.T) {
	dir, opts := patchDir(t, map[string]string{"a": "1\n", "b": "2\n"})
	patchCommitHook = func(s int) error {
		if s == -1 {
			return os.WriteFile(filepath.Join(dir, "b"), []byte("changed\n"), 0o644)
		}
		return nil
	}
	defer func() { patchCommitHook = nil }()
	_, err := applyText(t, opts, "*** Begin Patch\n*** Update File: a\n@@\n-1\n+one\n*** Update File: b\n@@\n-2\n+two\n*** End Patch")
	if !errors.Is(err, ErrStale) {
		t.Fatalf("ApplyPatch error = %v, want ErrStale", err)
	}
	want := map[string]string{"a": "1\n", "b": "changed\n"}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("files after a stale patch (-want +got):\n%s", diff)
	}
}

func TestApplyPatchRefusals(t *testing.T) {
	t.Parallel()
	dir, opts := patchDir(t, map[string]string{"bin": "a\x00b\n", "ok": "x\n"})
	denied := errors.New("access denied: secret is denied")
	opts.Resolve = func(p string) (string, error) {
		if p == "secret" {
			return "", denied
		}
		return filepath.Join(dir, p), nil
	}
	for _, tc := range []struct{ patch, has string }{
		{"*** Begin Patch\n*** Update File: ok\n@@\n-x\n+y\n*** Add File: secret\n+s\n*** End Patch", "access denied"},
		{"*** Begin Patch\n*** Update File: ok\n@@\n-x\n+y\n*** Update File: bin\n@@\n-a\n+b\n*** End Patch", "binary file"},
		{"*** Begin Patch\n*** End Patch", "no file operations"},
	} {
		_, err := applyText(t, opts, tc.patch)
		if err == nil || !strings.Contains(err.Error(), tc.has) {
			t.Errorf("ApplyPatch(%q) error = %v, want one with %q", tc.patch, err, tc.has)
		}
	}
	if got := readBack(t, filepath.Join(dir, "ok")); got != "x\n" {
		t.Errorf("ok = %q after refused patches, want it unchanged", got)
	}
}

// FuzzParsePatch checks that any text parses or fails with a PatchError, and that a file
// split into lines joins back byte for byte, and stays so through a chunk that changes
// nothing.
func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n@@ x\n-a\n+b\n*** End of File\n*** End Patch", []byte("x\r\na\r\n"))
	f.Add("<<EOF\n*** Begin Patch\n*** Add File: a\n+\n*** End Patch\nEOF", []byte("\xEF\xBB\xBFa\rb\rc"))
	f.Add("*** Begin Patch\n*** Update File: a\n l\n\n*** End Patch", []byte("l\n\nm"))
	f.Fuzz(func(t *testing.T, patch string, data []byte) {
		p, err := ParsePatch(patch)
		if err != nil {
			if _, ok := errors.AsType[*PatchError](err); !ok {
				t.Fatalf("ParsePatch(%q) error %v is not a PatchError", patch, err)
			}
		} else {
			for _, op := range p.Ops {
				if op.Path == "" || op.Kind == OpUpdate && len(op.Chunks) == 0 {
					t.Fatalf("ParsePatch(%q) gave an op without a path or chunks: %+v", patch, op)
				}
			}
		}
		text := splitPatchText(data)
		if got := text.bytes(text.finalEOL()); len(data) > 0 && !bytes.Equal(got, data) {
			t.Fatalf("splitPatchText(%q) joins back as %q", data, got)
		}
		if len(text.lines) == 0 {
			return
		}
		same := Chunk{Old: text.lines[:1], New: text.lines[:1]}
		final := text.finalEOL()
		if err := text.update(t.Context(), "f", []Chunk{same}); err != nil {
			t.Fatalf("a chunk of the file's own first line does not apply to %q: %v", data, err)
		}
		if got := text.bytes(final); !bytes.Equal(got, data) {
			t.Fatalf("a chunk that changes nothing changed %q into %q", data, got)
		}
	})
}
