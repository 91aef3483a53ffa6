package search

import (
	"os"
	"testing"
)

// openScope allows everything.
type openScope struct{}

func (openScope) Hidden(string) bool                           { return false }
func (openScope) Check(string) error                           { return nil }
func (openScope) Open(name string, flag int) (*os.File, error) { return os.OpenFile(name, flag, 0) }

// BenchmarkCorpus searches the tree named by BORIS_BENCH_CORPUS (for example a copy of
// GOROOT/src); bench/search.sh compares the same searches with ripgrep and fd.
func BenchmarkCorpus(b *testing.B) {
	dir := os.Getenv("BORIS_BENCH_CORPUS")
	if dir == "" {
		b.Skip("BORIS_BENCH_CORPUS is not set")
	}
	for _, c := range []struct {
		name string
		opts GrepOptions
	}{
		{"literal", GrepOptions{Pattern: "ErrNotExist"}},
		{"fold", GrepOptions{Pattern: "errnotexist", IgnoreCase: true}},
		{"alternation", GrepOptions{Pattern: "ErrNotExist|ErrPermission|ErrClosed"}},
		{"class", GrepOptions{Pattern: `func [A-Z]\w*Reader\(`}},
		{"class-content", GrepOptions{Pattern: `func [A-Z]\w*Reader\(`, Mode: Content}},
		{"no-literal", GrepOptions{Pattern: `\w+_\d{4}\b`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Grep(b.Context(), openScope{}, dir, c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("find", func(b *testing.B) {
		for b.Loop() {
			if _, err := Find(b.Context(), openScope{}, dir, FindOptions{Pattern: "**/*_test.go"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
