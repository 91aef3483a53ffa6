package search

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// indexBenchQueries are the five query classes of docs/performance.md, with the ripgrep
// arguments that ask the same.
var indexBenchQueries = []struct {
	name string
	opts GrepOptions
	rg   []string
}{
	{"rare", GrepOptions{Pattern: "ErrNotExist"}, []string{"-l", "ErrNotExist"}},
	{"rare-i", GrepOptions{Pattern: "errnotexist", IgnoreCase: true}, []string{"-l", "-i", "errnotexist"}},
	{"regex-literal", GrepOptions{Pattern: `func \w+Reader\(`}, []string{"-l", `func \w+Reader\(`}},
	{"regex-no-literal", GrepOptions{Pattern: `\w+_\d{4}\b`}, []string{"-l", `\w+_\d{4}\b`}},
	{"common-capped", GrepOptions{Pattern: "return", Mode: Content, Keep: 100}, []string{"-m", "100", "return"}},
}

// BenchmarkIndex compares, on the tree named by BORIS_BENCH_INDEX_TREE (bench/index.sh
// makes one), ripgrep, grep by scan and grep with an index: warm, after one edit and after
// 100 files were rewritten behind its back.
func BenchmarkIndex(b *testing.B) {
	dir := os.Getenv("BORIS_BENCH_INDEX_TREE")
	if dir == "" {
		b.Skip("BORIS_BENCH_INDEX_TREE is not set")
	}
	rg, rgErr := exec.LookPath("rg")
	x, err := BuildIndex(b.Context(), openScope{}, dir, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("index: %d files, %d postings", x.Files(), x.Postings())
	ix := &Indexes{MinFiles: 1 << 30}
	ix.install(dir, x)
	files := goFiles(b, dir, 100)
	states := []struct {
		name  string
		setup func()
	}{
		{"warm", func() {}},
		{"edit", func() { appendTo(b, files[0], "// edited\n") }},
		{"sed100", func() {
			for _, f := range files {
				appendTo(b, f, "// rewritten\n")
			}
		}},
	}
	for _, q := range indexBenchQueries {
		if rgErr == nil {
			b.Run(q.name+"/ripgrep", func(b *testing.B) {
				for b.Loop() {
					cmd := exec.Command(rg, append(q.rg, dir)...)
					cmd.Stdout = &bytes.Buffer{}
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(q.name+"/scan", func(b *testing.B) {
			for b.Loop() {
				if _, err := Grep(b.Context(), openScope{}, dir, q.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, s := range states {
			s.setup()
			b.Run(fmt.Sprintf("%s/index-%s", q.name, s.name), func(b *testing.B) {
				opts := q.opts
				opts.Indexes = ix
				for b.Loop() {
					if _, err := Grep(b.Context(), openScope{}, dir, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func goFiles(b *testing.B, dir string, n int) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" && len(out) < n {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func appendTo(b *testing.B, path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
}
