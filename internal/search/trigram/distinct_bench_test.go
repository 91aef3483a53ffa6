package trigram

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDistinct finds the distinct trigrams of the Go sources of GOROOT/src/net/http.
func BenchmarkDistinct(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	paths, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http", "*.go"))
	var files [][]byte
	size := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil {
			files = append(files, data)
			size += len(data)
		}
	}
	if size == 0 {
		b.Skip("no GOROOT sources")
	}
	var s Seen
	var buf []Trigram
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, f := range files {
			buf, _ = s.Distinct(f, buf, 0)
		}
	}
}
