package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mjkoo/boris/internal/search"
)

type openScope struct{}

func (openScope) Hidden(string) bool                           { return false }
func (openScope) Check(string) error                           { return nil }
func (openScope) Open(name string, flag int) (*os.File, error) { return os.OpenFile(name, flag, 0) }

// TestGrepSaysIndex: a grep answered with an index kept in the cache directory says so,
// and otherwise reads as the same grep of a server without indexes.
func TestGrepSaysIndex(t *testing.T) {
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cfg.CacheDir = t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%02d.go", i%3, i)] = "package x\n"
	}
	files["d1/f07.go"] = "package x\nfunc rareIdent() {}\n"
	writeTree(t, cfg.Workdir, files)
	root, err := filepath.EvalSymlinks(cfg.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	x, err := search.BuildIndex(t.Context(), openScope{}, root, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Save(cfg.CacheDir); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"pattern": "rareIdent", "output_mode": "content"}
	off := cfg
	off.NoSearchIndex = true
	cs, _ := connect(t, off, nil)
	want := textOf(call(t, cs, "grep", args))

	cs, _ = connect(t, cfg, nil)
	first := textOf(call(t, cs, "grep", args)) // starts loading the saved index
	if first != want {
		t.Fatalf("first grep:\n%s\nwant, as without an index:\n%s", first, want)
	}
	// The index loads in the background; each grep until then is a scan.
	var got string
	for !strings.Contains(got, "search index") && t.Context().Err() == nil {
		got = textOf(call(t, cs, "grep", args))
	}
	// Files just written are read by every search until their times are a second old.
	note := "\n(from a partial search index: 30 files new or changed since indexing read in full)"
	if !strings.HasSuffix(got, note) || strings.TrimSuffix(got, note) != want {
		t.Fatalf("grep with the index:\n%s\nwant\n%s%s", got, want, note)
	}
}
