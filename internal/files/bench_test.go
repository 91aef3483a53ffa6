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
