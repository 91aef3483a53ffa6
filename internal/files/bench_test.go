package files

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// millionLines writes a 1,000,000-line file ("line 0000001" and so on, 13 MB).
func millionLines(b *testing.B) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "million.txt")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 1; i <= 1_000_000; i++ {
		fmt.Fprintf(w, "line %07d\n", i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

// BenchmarkViewRange views lines 500,000-500,050 of a 1,000,000-line file. Compare it with
// BenchmarkScanToLine, the cost of reading the file up to line 500,050 and nothing more.
func BenchmarkViewRange(b *testing.B) {
	p := millionLines(b)
	b.ReportAllocs()
	for b.Loop() {
		v, err := View(b.Context(), p, ViewOptions{Start: 500_000, End: 500_050, MaxFileSize: 10_000_000})
		if err != nil {
			b.Fatal(err)
		}
		if v.First != 500_000 || v.Last != 500_050 || !strings.HasPrefix(v.Text, "500000\tline 0500000\n") {
			b.Fatalf("View = lines %d-%d %q", v.First, v.Last, v.Text[:40])
		}
	}
}

// BenchmarkScanToLine is the floor for BenchmarkViewRange: read in the same blocks and
// count newlines up to line 500,050.
func BenchmarkScanToLine(b *testing.B) {
	p := millionLines(b)
	buf := make([]byte, blockSize)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		lines := 0
		for lines < 500_050 {
			n, err := io.ReadFull(f, buf)
			lines += bytes.Count(buf[:n], newline)
			if err != nil {
				break
			}
		}
		f.Close()
	}
}

// BenchmarkViewLarge views a 10 MB file without a range: it returns the first 2000 lines
// and reads one block, not the whole file (see the allocated bytes per op).
func BenchmarkViewLarge(b *testing.B) {
	p := filepath.Join(b.TempDir(), "large.txt")
	line := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(p, []byte(strings.Repeat(line, 100_000)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := View(b.Context(), p, ViewOptions{MaxFileSize: 10_000_000})
		if err != nil {
			b.Fatal(err)
		}
		if v.Last != DefaultLines || !v.More {
			b.Fatalf("View = lines %d-%d, more %v", v.First, v.Last, v.More)
		}
	}
}

// BenchmarkReplaceSmall is one str_replace in a 4 KB file, alternating between two edits so
// that each call rewrites the file: read, match, write a temporary file, sync it and rename
// it over the file. Compare it with BenchmarkWriteFileSmall, the in-place write (no sync, no
// rename) a minimal editor does.
func BenchmarkReplaceSmall(b *testing.B) {
	p := filepath.Join(b.TempDir(), "small.go")
	if err := os.WriteFile(p, []byte(strings.Repeat("// filler line of text\n", 170)+"x := 1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := EditOptions{MaxFileSize: 10 << 20}
	pairs := [2][2]string{{"x := 1", "x := 2"}, {"x := 2", "x := 1"}}
	i := 0
	for b.Loop() {
		pr := pairs[i%2]
		i++
		if _, err := Replace(b.Context(), p, pr[0], pr[1], false, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFileSmall reads a 4 KB file, edits it with strings.Replace and writes it back
// in place with os.WriteFile: not atomic, not synced, the floor for an edit.
func BenchmarkWriteFileSmall(b *testing.B) {
	p := filepath.Join(b.TempDir(), "small.go")
	if err := os.WriteFile(p, []byte(strings.Repeat("// filler line of text\n", 170)+"x := 1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	pairs := [2][2]string{{"x := 1", "x := 2"}, {"x := 2", "x := 1"}}
	i := 0
	for b.Loop() {
		pr := pairs[i%2]
		i++
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), pr[0], pr[1], 1)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteSyncedSmall is BenchmarkWriteFileSmall made crash safe the plainest way: the
// edited content goes to a temporary file, which is synced and renamed over the file. It
// is the floor for an edit that cannot leave a half-written file, which [Replace] is.
func BenchmarkWriteSyncedSmall(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "small.go")
	if err := os.WriteFile(p, []byte(strings.Repeat("// filler line of text\n", 170)+"x := 1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	pairs := [2][2]string{{"x := 1", "x := 2"}, {"x := 2", "x := 1"}}
	i := 0
	for b.Loop() {
		pr := pairs[i%2]
		i++
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.CreateTemp(dir, ".small-*")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString(strings.Replace(string(data), pr[0], pr[1], 1)); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(f.Name(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeldForWriting is the look for processes that hold an edited file open for
// writing, made on every edit, while no command runs: it should cost next to nothing.
func BenchmarkHeldForWriting(b *testing.B) {
	p := filepath.Join(b.TempDir(), "small.go")
	if err := os.WriteFile(p, []byte("x := 1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if held := heldForWriting(p, info); held != "" {
			b.Fatalf("heldForWriting = %q, want none", held)
		}
	}
}
