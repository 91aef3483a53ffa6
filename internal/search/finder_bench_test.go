package search

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkFinder times the finders of a literal, case-exact and ignoring case, over the
// Go files of GOROOT/src, one buffer a file as a search reads them, against bytes.Index
// of the same literal: the floor, measured in the same run.
func BenchmarkFinder(b *testing.B) {
	var files [][]byte
	size := 0
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || len(files) >= 4000 {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil {
			files = append(files, data)
			size += len(data)
		}
		return nil
	})
	if len(files) == 0 {
		b.Fatal("no Go files under GOROOT/src")
	}
	for _, s := range []string{"ErrNotExist", "Reader(", "func ", "ctx", "return", "http.Handler"} {
		run := func(name string, next func(buf []byte, from int) int) {
			b.Run(s+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(size))
				hits := 0
				for b.Loop() {
					hits = 0
					for _, buf := range files {
						for p := next(buf, 0); p >= 0; p = next(buf, p+1) {
							hits++
						}
					}
				}
				b.ReportMetric(float64(hits), "hits")
			})
		}
		needle := []byte(s)
		run("bytes.Index", func(buf []byte, from int) int {
			if i := bytes.Index(buf[from:], needle); i >= 0 {
				return from + i
			}
			return -1
		})
		for _, fold := range []bool{false, true} {
			l := lit{s: s, fold: fold}
			name := "exact"
			if fold {
				l.s, name = strings.ToLower(s), "fold"
			}
			f := newFinder([]lit{l})
			run(name, func(buf []byte, from int) int {
				if from == 0 { // a new buffer
					f.reset(buf)
				}
				return f.next(buf, from)
			})
		}
	}
}
