package files

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const limit = 10 << 20

func readBack(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReplace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		content   string
		old, new  string
		all       bool
		want      string // file content afterwards
		count     int
		first     int
		last      int
		wantErr   error
		errHas    []string
		noop      bool
		snippetIn string
	}{
		{name: "unique", content: "a\nb\nc\n", old: "b", new: "B", want: "a\nB\nc\n", count: 1, first: 2, last: 2, snippetIn: "     2\tB\n"},
		{name: "multi-line", content: "a\nb\nc\nd\n", old: "b\nc\n", new: "x\ny\nz\n", want: "a\nx\ny\nz\nd\n", count: 1, first: 2, last: 4},
		{name: "delete", content: "a\nb\nc\n", old: "b\n", new: "", want: "a\nc\n", count: 1, first: 2, last: 1},
		{name: "replace all", content: "x y x\nx\n", old: "x", new: "zz", all: true, want: "zz y zz\nzz\n", count: 3},
		{name: "ambiguous", content: "x\ny\nx\n", old: "x", new: "z", wantErr: ErrAmbiguous, errHas: []string{"2 times", "on lines 1, 3"}},
		{name: "ambiguous, several on one line", content: "x\nx\nx\nx x\n", old: "x", new: "z", wantErr: ErrAmbiguous, errHas: []string{"5 times", "on lines 1, 2, 3, 4"}},
		{name: "not found shows closest", content: "func main() {\n\tfmt.Println(\"hi\")\n}\n", old: "func main() {\n    fmt.Println(\"hi\")\n}", new: "x",
			wantErr: ErrNoMatch, errHas: []string{"lines 1-3", `file has "\tfmt.Println(\"hi\")"`, `text has "    fmt.Println(\"hi\")"`}},
		{name: "not found at all", content: "abc\n", old: "zzz", new: "x", wantErr: ErrNoMatch, errHas: []string{"no line of the text appears"}},
		{name: "line numbers in old_str", content: "abc\ndef\n", old: "     1\tabc\n     2\tdef", new: "x", wantErr: ErrNoMatch, errHas: []string{"line numbers"}},
		{name: "empty old", content: "abc\n", old: "", new: "x", wantErr: ErrInvalid},
		{name: "crlf file, lf old_str", content: "a\r\nb\r\nc\r\n", old: "a\nb\n", new: "x\ny\nz\n", want: "x\r\ny\r\nz\r\nc\r\n", count: 1, first: 1, last: 3},
		{name: "crlf file, one-line old_str, multi-line new_str", content: "a\r\nb\r\n", old: "b", new: "b1\nb2", want: "a\r\nb1\r\nb2\r\n", count: 1, first: 2, last: 3},
		{name: "lf file, crlf old_str", content: "a\nb\n", old: "a\r\nb", new: "x\r\ny", want: "x\ny\n", count: 1, first: 1, last: 2},
		{name: "cr file keeps its bytes", content: "a\rb\rc\r", old: "b", new: "B", want: "a\rB\rc\r", count: 1, first: 2, last: 2, snippetIn: "     2\tB\n     3\tc\n"},
		{name: "cr file, lf old_str and new_str", content: "a\rb\rc\r", old: "a\nb", new: "x\ny\nz", want: "x\ry\rz\rc\r", count: 1, first: 1, last: 3},
		{name: "cr file, ambiguous lines", content: "x\ry\rx\r", old: "x", new: "z", wantErr: ErrAmbiguous, errHas: []string{"lines 1, 3"}},
		{name: "bom kept", content: "\xEF\xBB\xBFa\nb\n", old: "a", new: "A", want: "\xEF\xBB\xBFA\nb\n", count: 1, first: 1, last: 1},
		{name: "no final newline kept", content: "a\nb", old: "b", new: "B", want: "a\nB", count: 1, first: 2, last: 2},
		{name: "latin-1 edited where ASCII matches", content: "caf\xe9 = 1\nx = 2\n", old: "x = 2", new: "x = 3", want: "caf\xe9 = 1\nx = 3\n", count: 1, first: 2, last: 2},
		{name: "latin-1 refuses replacement character", content: "caf\xe9 = 1\n", old: " = 1", new: "\uFFFD = 1", wantErr: ErrLossy, errHas: []string{"U+FFFD"}},
		{name: "latin-1 refuses utf-8 text", content: "caf\xe9 = 1\n", old: " = 1", new: " = \"é\"", wantErr: ErrLossy, errHas: []string{"non-ASCII"}},
		{name: "latin-1 old_str with replacement character", content: "caf\xe9 = 1\n", old: "caf\uFFFD", new: "x", wantErr: ErrNoMatch, errHas: []string{"not valid UTF-8"}},
		{name: "mostly utf-8 with a stray byte accepts utf-8", content: "é\xff\nx\n", old: "x", new: "ü", want: "é\xff\nü\n", count: 1, first: 2, last: 2},
		{name: "no-op", content: "a\nb\n", old: "b", new: "b", want: "a\nb\n", count: 1, first: 2, last: 2, noop: true},
		{name: "binary refused", content: "a\x00b", old: "a", new: "b", wantErr: ErrUnsupported},
		{name: "random bytes without NUL refused", content: "a" + noise(9000), old: "a", new: "b", wantErr: ErrUnsupported, errHas: []string{"binary"}},
		{name: "latin-1 prose edited", content: latin1Prose, old: "midi;", new: "12h;", all: true, want: strings.ReplaceAll(latin1Prose, "midi;", "12h;"), count: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, "f.txt", tt.content)
			before, _ := os.Stat(p)
			e, err := Replace(t.Context(), p, tt.old, tt.new, tt.all, EditOptions{MaxFileSize: limit})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Replace(%q, %q) error = %v, want %v", tt.old, tt.new, err, tt.wantErr)
				}
				for _, h := range tt.errHas {
					if !strings.Contains(err.Error(), h) {
						t.Errorf("Replace(%q) error = %q, want it to contain %q", tt.old, err, h)
					}
				}
				if got := readBack(t, p); got != tt.content {
					t.Errorf("file after refused Replace = %q, want it unchanged %q", got, tt.content)
				}
				return
			}
			if err != nil {
				t.Fatalf("Replace(%q, %q): %v", tt.old, tt.new, err)
			}
			if got := readBack(t, p); got != tt.want {
				t.Errorf("file after Replace(%q, %q) = %q, want %q", tt.old, tt.new, got, tt.want)
			}
			if e.Count != tt.count || e.NoOp != tt.noop || !tt.all && (e.First != tt.first || e.Last != tt.last) {
				t.Errorf("Replace(%q) = count %d, noop %v, lines %d-%d; want %d, %v, %d-%d", tt.old, e.Count, e.NoOp, e.First, e.Last, tt.count, tt.noop, tt.first, tt.last)
			}
			if !strings.Contains(e.Snippet, tt.snippetIn) {
				t.Errorf("Replace snippet = %q, want it to contain %q", e.Snippet, tt.snippetIn)
			}
			if e.Digest != ContentDigest([]byte(tt.want)) {
				t.Errorf("Replace Digest is not the digest of the new content")
			}
			after, _ := os.Stat(p)
			if rewritten := !os.SameFile(before, after); rewritten == tt.noop {
				t.Errorf("Replace(%q, %q) rewrote the file: %v, want %v", tt.old, tt.new, rewritten, !tt.noop)
			}
		})
	}
}

func TestReplaceKeepsMode(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "run.sh", "echo a\n")
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	if _, err := Replace(t.Context(), p, "a", "b", false, EditOptions{MaxFileSize: limit}); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(p)
	if info.Mode().Perm() != 0o751 {
		t.Errorf("mode after Replace = %04o, want 0751", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("directory after Replace has %d entries, want 1 (no temporary files left)", len(entries))
	}
}

func TestReplaceViewTracking(t *testing.T) {
	t.Parallel()
	seen := func(s string) *Digest { d := ContentDigest([]byte(s)); return &d }
	tests := []struct {
		name     string
		content  string // on disk
		opts     EditOptions
		old, new string
		want     string
		changed  bool
		wantErr  error
		errHas   string
	}{
		{name: "never viewed", content: "a\n", opts: EditOptions{RequireSeen: true}, old: "a", new: "b", wantErr: ErrNotViewed, errHas: "has not been read in this session"},
		{name: "never viewed, not required", content: "a\n", old: "a", new: "b", want: "b\n"},
		{name: "viewed", content: "a\n", opts: EditOptions{RequireSeen: true, Seen: seen("a\n")}, old: "a", new: "b", want: "b\n"},
		{name: "changed, still unique", content: "a\nc\n", opts: EditOptions{RequireSeen: true, Seen: seen("a\n")}, old: "a", new: "b", want: "b\nc\n", changed: true},
		{name: "changed, now missing", content: "x\ny\n", opts: EditOptions{RequireSeen: true, Seen: seen("a\ny\n"), Previous: []byte("a\ny\n")}, old: "a", new: "b",
			wantErr: ErrStale, errHas: "line 1 now reads (in place of 1 line):\n     1\tx\n"},
		{name: "changed, now twice", content: "a\na\n", opts: EditOptions{RequireSeen: true, Seen: seen("a\n")}, old: "a", new: "b", wantErr: ErrStale, errHas: "now occurs 2 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, "f.txt", tt.content)
			tt.opts.MaxFileSize = limit
			e, err := Replace(t.Context(), p, tt.old, tt.new, false, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("Replace error = %v, want %v containing %q", err, tt.wantErr, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readBack(t, p); got != tt.want || e.Changed != tt.changed {
				t.Errorf("Replace = %q, changed %v; want %q, %v", got, e.Changed, tt.want, tt.changed)
			}
		})
	}
	t.Run("stat digest counts as seen", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "f.txt", "a\n")
		info, _ := os.Stat(p)
		d := StatDigest(info)
		e, err := Replace(t.Context(), p, "a", "b", false, EditOptions{MaxFileSize: limit, RequireSeen: true, Seen: &d})
		if err != nil || e.Changed {
			t.Errorf("Replace after a partial view = %v, changed %v; want success, unchanged", err, e != nil && e.Changed)
		}
	})
}

func TestInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		after   int
		text    string
		want    string
		first   int
		last    int
		wantErr error
	}{
		{name: "top", content: "a\nb\n", after: 0, text: "x", want: "x\na\nb\n", first: 1, last: 1},
		{name: "middle", content: "a\nb\n", after: 1, text: "x\ny\n", want: "a\nx\ny\nb\n", first: 2, last: 3},
		{name: "end", content: "a\nb\n", after: 2, text: "x", want: "a\nb\nx\n", first: 3, last: 3},
		{name: "end without final newline", content: "a\nb", after: 2, text: "x\n", want: "a\nb\nx", first: 3, last: 3},
		{name: "crlf", content: "a\r\nb\r\n", after: 1, text: "x\ny", want: "a\r\nx\r\ny\r\nb\r\n", first: 2, last: 3},
		{name: "cr", content: "a\rb\r", after: 1, text: "x\ny\n", want: "a\rx\ry\rb\r", first: 2, last: 3},
		{name: "cr, end", content: "a\rb\r", after: 2, text: "x", want: "a\rb\rx\r", first: 3, last: 3},
		{name: "after bom", content: "\xEF\xBB\xBFa\n", after: 0, text: "x", want: "\xEF\xBB\xBFx\na\n", first: 1, last: 1},
		{name: "empty file", content: "", after: 0, text: "x", want: "x\n", first: 1, last: 1},
		{name: "past the end", content: "a\n", after: 2, text: "x", wantErr: ErrInvalid},
		{name: "negative", content: "a\n", after: -1, text: "x", wantErr: ErrInvalid},
		{name: "empty text", content: "a\n", after: 0, text: "", wantErr: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, "f.txt", tt.content)
			e, err := Insert(p, tt.after, tt.text, EditOptions{MaxFileSize: limit})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Insert(%d, %q) error = %v, want %v", tt.after, tt.text, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readBack(t, p); got != tt.want || e.First != tt.first || e.Last != tt.last {
				t.Errorf("Insert(%d, %q) = %q lines %d-%d, want %q lines %d-%d", tt.after, tt.text, got, e.First, e.Last, tt.want, tt.first, tt.last)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	t.Run("new with parents", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "a", "b", "c.txt")
		c, err := Create(nil, p, []byte("hi\n"), limit, false)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(p)
		umask := syscall.Umask(0)
		syscall.Umask(umask)
		if want := fs.FileMode(0o644 &^ umask); c.Bytes != 3 || c.Existed || info.Mode().Perm() != want || readBack(t, p) != "hi\n" {
			t.Errorf("Create = %+v, mode %04o; want 3 bytes, new, mode %04o", c, info.Mode().Perm(), want)
		}
	})
	t.Run("overwrite keeps mode", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "x.sh", "old\n")
		os.Chmod(p, 0o700)
		c, err := Create(nil, p, []byte("new\n"), limit, true)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := os.Stat(p)
		if !c.Existed || string(c.Old) != "old\n" || info.Mode().Perm() != 0o700 || readBack(t, p) != "new\n" {
			t.Errorf("Create over existing = %+v, mode %04o; want existed, old kept, mode 0700", c, info.Mode().Perm())
		}
	})
	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "x")
		if _, err := Create(nil, p, make([]byte, 11), 10, false); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Create(nil, 11 bytes, limit 10) error = %v, want ErrTooLarge", err)
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Create over the limit wrote the file")
		}
	})
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		if _, err := Create(nil, t.TempDir(), []byte("x"), limit, false); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Create(nil, directory) error = %v, want ErrUnsupported", err)
		}
	})
	t.Run("parent is a file", func(t *testing.T) {
		t.Parallel()
		plain := writeFile(t, "plainfile", "keep\n")
		for _, p := range []string{filepath.Join(plain, "sub.txt"), filepath.Join(plain, "a", "b.txt")} {
			_, err := Create(nil, p, []byte("x"), limit, false)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(fmt.Sprint(err), plain+" is a file, not a directory") {
				t.Errorf("Create(nil, %s) error = %v, want ErrInvalid saying %s is a file", p, err, plain)
			}
		}
		if readBack(t, plain) != "keep\n" {
			t.Errorf("Create under a file changed the file")
		}
	})
	t.Run("read-only file", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "ro", "keep\n")
		os.Chmod(p, 0o444)
		if _, err := Create(nil, p, []byte("x"), limit, false); !errors.Is(err, ErrUnsupported) || readBack(t, p) != "keep\n" {
			t.Errorf("Create(nil, read-only file) error = %v, want ErrUnsupported and the file kept", err)
		}
	})
}

func TestWriteFailureLeavesOriginal(t *testing.T) {
	t.Parallel()
	t.Run("full disk", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "f.txt", "original\n")
		info, _ := os.Stat(p)
		full := func(f *os.File, data []byte) error {
			f.Write(data[:len(data)/2])
			return &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
		_, err := writeAtomic(nil, p, []byte("replacement that does not fit\n"), info, full)
		if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "left unchanged") {
			t.Fatalf("writeAtomic on a full disk error = %v, want it to name ENOSPC and say the file was left unchanged", err)
		}
		if got := readBack(t, p); got != "original\n" {
			t.Errorf("file after failed write = %q, want the original", got)
		}
		if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
			t.Errorf("failed write left %d entries in the directory, want 1", len(entries))
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		t.Parallel()
		p := writeFile(t, "f.txt", "original\n")
		dir := filepath.Dir(p)
		os.Chmod(dir, 0o555)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		_, err := Replace(t.Context(), p, "original", "changed", false, EditOptions{MaxFileSize: limit})
		if e, ok := errors.AsType[*ReadOnlyError](err); !ok || !e.Dir || e.Path != dir {
			t.Fatalf("Replace in a read-only directory error = %v, want a ReadOnlyError of the directory %s", err, dir)
		}
		if got := readBack(t, p); got != "original\n" {
			t.Errorf("file after refused write = %q, want the original", got)
		}
	})
}

func TestRestore(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", "one\n")
	e, err := Replace(t.Context(), p, "one", "two", false, EditOptions{MaxFileSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("three\n"), 0o644)
	if err := Restore(nil, p, e.Old, true, e.Digest, limit); !errors.Is(err, ErrStale) {
		t.Errorf("Restore after another change error = %v, want ErrStale", err)
	}
	os.WriteFile(p, []byte("two\n"), 0o644)
	if err := Restore(nil, p, e.Old, true, e.Digest, limit); err != nil || readBack(t, p) != "one\n" {
		t.Errorf("Restore = %v, content %q; want the old content back", err, readBack(t, p))
	}
	if err := Restore(nil, p, nil, false, ContentDigest([]byte("one\n")), limit); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Restore of a created file did not remove it")
	}
}

// FuzzReplace checks that a unique replace changes only the matched bytes, and that a
// refused one changes nothing.
func FuzzReplace(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), "b", "B")
	f.Add([]byte("a\r\nb\r\n"), "a\nb", "x\ny")
	f.Add([]byte("caf\xe9\nx\n"), "x", "y")
	f.Add([]byte("\xEF\xBB\xBFx x\n"), "x", "")
	f.Add([]byte(strings.Repeat("é", 3000)+" NEEDLE "+strings.Repeat("x", 3000)+"\n"), "NEEDLE", "PIN") // the part around it shown
	f.Add([]byte("total = sum(a  * b)\n"), "sum(a * b)", "0")                                           // a fragment's start shown
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, old, new string) {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Replace(t.Context(), p, old, new, false, EditOptions{MaxFileSize: limit})
		got, _ := os.ReadFile(p)
		if err != nil {
			if !bytes.Equal(got, data) {
				t.Fatalf("refused Replace changed the file: %q -> %q", data, got)
			}
			return
		}
		if strings.Contains(new, "\n") || strings.Contains(old, "\n") || bytes.Count(data, []byte(old)) != 1 {
			return // line endings may have been adapted; FuzzReplaceCRLF covers that
		}
		i := bytes.Index(data, []byte(old))
		want := append(append(append([]byte{}, data[:i]...), new...), data[i+len(old):]...)
		if !bytes.Equal(got, want) {
			t.Fatalf("Replace(%q, %q) on %q = %q, want %q", old, new, data, got, want)
		}
	})
}

// FuzzReplaceCRLF checks that an edit of a CRLF file equals the same edit of its LF twin
// with CRLF endings: no mixed endings, nothing else touched.
func FuzzReplaceCRLF(f *testing.F) {
	f.Add("a\nb\nc\n", "b\n", "x\ny\n")
	f.Add("one\ntwo", "two", "2\n3")
	f.Add("x\n\ny\n", "\n\n", "\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, lf, old, new string) {
		if strings.ContainsRune(lf+old+new, '\r') || !strings.Contains(lf, "\n") {
			return
		}
		crlf := string(toCRLF([]byte(lf)))
		pl, pc := filepath.Join(dir, "lf"), filepath.Join(dir, "crlf")
		os.WriteFile(pl, []byte(lf), 0o644)
		os.WriteFile(pc, []byte(crlf), 0o644)
		_, errL := Replace(t.Context(), pl, old, new, false, EditOptions{MaxFileSize: limit})
		_, errC := Replace(t.Context(), pc, old, new, false, EditOptions{MaxFileSize: limit})
		if (errL == nil) != (errC == nil) {
			t.Fatalf("Replace(%q, %q): LF error %v, CRLF error %v", old, new, errL, errC)
		}
		gotL, gotC := readBack(t, pl), readBack(t, pc)
		if want := string(toCRLF([]byte(gotL))); gotC != want {
			t.Fatalf("Replace(%q, %q) on CRLF %q = %q, want %q", old, new, crlf, gotC, want)
		}
	})
}

func TestSnippetOfLongEdit(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "f.txt", "a\nb\n")
	e, err := Replace(t.Context(), p, "b\n", strings.Repeat("x\n", 200), false, EditOptions{MaxFileSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Snippet, "… (150 edited lines not shown)\n") || !strings.HasPrefix(e.Snippet, "     1\ta\n     2\tx\n") || !strings.HasSuffix(e.Snippet, "   201\tx\n") {
		t.Errorf("snippet of a 200-line edit = %q", e.Snippet)
	}
}

func TestConcurrentEditsAreNotLost(t *testing.T) {
	t.Parallel()
	const n = 16
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	p := writeFile(t, "f.txt", b.String())
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := Replace(t.Context(), p, fmt.Sprintf("line %02d", i), fmt.Sprintf("edit %02d", i), false, EditOptions{MaxFileSize: limit}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := readBack(t, p); strings.Contains(got, "line") {
		t.Errorf("after %d concurrent edits the file still has unedited lines:\n%s", n, got)
	}
}

// TestRewriteKeepsSetuidAndSetgid: a rewrite gives the new file its owner before its mode,
// since a change of owner clears setuid and setgid.
func TestRewriteKeepsSetuidAndSetgid(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := fs.FileMode(0o755) | fs.ModeSetuid | fs.ModeSetgid
	if err := os.Chmod(p, want); err != nil {
		t.Fatal(err)
	}
	c, err := Create(nil, p, []byte("#!/bin/sh\necho new\n"), 1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode() & keptBits; got != want || c.Mode != want || c.ModeLost != "" {
		t.Errorf("after create: mode %s, reported %s (lost %q); want %s kept", Octal(got), Octal(c.Mode), c.ModeLost, Octal(want))
	}
	e, err := Replace(t.Context(), p, "new", "newer", false, EditOptions{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(p); info.Mode()&keptBits != want || e.ModeLost != "" {
		t.Errorf("after str_replace: mode %s (lost %q); want %s kept", Octal(info.Mode()&keptBits), e.ModeLost, Octal(want))
	}
}

// ReplaceIn edits content in memory as Replace edits a file, and refuses what Replace
// refuses, naming the path it was given.
func TestReplaceIn(t *testing.T) {
	t.Parallel()
	data := []byte("a\r\nb\r\nb\r\n")
	e, err := ReplaceIn(t.Context(), "/x/f.txt", data, "a\nb", "A\nB", false, limit)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(e.New), "A\r\nB\r\nb\r\n"; got != want || e.First != 1 || e.Last != 2 || !e.CRLF {
		t.Errorf("ReplaceIn = %q, lines %d-%d, CRLF %v; want %q, lines 1-2, CRLF", got, e.First, e.Last, e.CRLF, want)
	}
	if string(data) != "a\r\nb\r\nb\r\n" {
		t.Errorf("ReplaceIn changed its input to %q", data)
	}
	_, err = ReplaceIn(t.Context(), "/x/f.txt", data, "b", "c", false, limit)
	if ae, ok := errors.AsType[*AmbiguousError](err); !ok || ae.Path != "/x/f.txt" || ae.Count != 2 || fmt.Sprint(ae.Lines) != "[2 3]" {
		t.Errorf("ReplaceIn of text that occurs twice: error = %#v, want an AmbiguousError of /x/f.txt, 2 times on lines 2, 3", err)
	}
	if _, err := ReplaceIn(t.Context(), "/x/f.txt", []byte("a\x00b"), "a", "c", false, limit); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ReplaceIn of binary content: error = %v, want ErrUnsupported", err)
	}
	if _, err := ReplaceIn(t.Context(), "/x/f.txt", data, "b", "bbbb", true, 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReplaceIn over the limit: error = %v, want ErrTooLarge", err)
	}
}

// numberedPrefix finds what the expression ^ *[0-9]+\t finds.
func TestNumberedPrefix(t *testing.T) {
	t.Parallel()
	want := regexp.MustCompile(`^ *[0-9]+\t`)
	for _, l := range []string{
		"", "\t", " ", "1", "1\t", "     1\tx", "12\t\tx", " \t", "  x\t", "1 \t", "1a\t",
		"١\t", "-1\t", "007\tx", "  12", "\t1\t", "999999999999999999999\t",
	} {
		n := 0
		if loc := want.FindStringIndex(l); loc != nil {
			n = loc[1]
		}
		if got := numberedPrefix(l); got != n {
			t.Errorf("numberedPrefix(%q) = %d, want %d", l, got, n)
		}
	}
}
