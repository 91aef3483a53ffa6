package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	// The files were written just before the build, which read them again once their
	// times were a second old: the index holds them all.
	note := regexp.MustCompile(`\n\(from the search index(, kept fresh by file events)?: only files that can match were read\)$`)
	if !note.MatchString(got) || note.ReplaceAllString(got, "") != want {
		t.Fatalf("grep with the index:\n%s\nwant\n%s%s", got, want, note)
	}
}

// TestGrepFreshAfterEdits: once a grep is answered from the index kept fresh by file
// events, files written by Boris's own edit tools and by a command in bash are found by
// the next grep, which reads as the same grep of a server without indexes.
func TestGrepFreshAfterEdits(t *testing.T) {
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cfg.CacheDir = t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%02d.go", i%3, i)] = "package x\n"
	}
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
	off := cfg
	off.NoSearchIndex = true
	plain, _ := connect(t, off, nil)
	cs, _ := connect(t, cfg, nil)
	live := regexp.MustCompile(`\n\(from (a partial )?the search index, kept fresh by file events[^\n]*\)$|\n\(from a partial search index, kept fresh by file events[^\n]*\)$`)
	args := map[string]any{"pattern": "rareIdent", "output_mode": "content"}
	// The saved index loads, then its live list is built, in the background; each grep
	// until then walks the tree.
	for got := ""; !live.MatchString(got); {
		if t.Context().Err() != nil {
			t.Fatal("no grep was answered from the live list")
		}
		got = textOf(call(t, cs, "grep", args))
	}
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"create_file", map[string]any{"path": "d1/new.go", "content": "package x\nfunc rareIdent() {}\n"}},
		{"view", map[string]any{"path": "d2/f05.go"}},
		{"str_replace", map[string]any{"path": "d2/f05.go", "old_str": "package x", "new_str": "package rareEdit\nfunc fooHandler() {}"}},
		{"bash", map[string]any{"command": "sed -i 's/package x/package rareSed/' d0/*.go && mkdir -p d4/e && echo rareSed > d4/e/g.txt && mv d1 d5"}},
		{"bash", map[string]any{"command": "rm -r d5 && echo 'the rareLast func barHandler' > d0/last.txt && printf 'the\\0bin' > d0/bin.dat"}},
	}
	// The five query classes: a rare identifier, the same with -i, a regex with a literal,
	// one without, a common word with a result cap.
	queries := []map[string]any{
		{"pattern": "rare(Ident|Edit|Sed|Last)", "output_mode": "content"},
		{"pattern": "RAREIDENT", "-i": true, "output_mode": "content"},
		{"pattern": `func \w+Handler`, "output_mode": "count"},
		{"pattern": `\w+`, "output_mode": "files_with_matches"},
		{"pattern": "package", "output_mode": "content", "head_limit": 5},
	}
	for _, s := range steps {
		if res := call(t, cs, s.tool, s.args); res.IsError {
			t.Fatalf("%s: %s", s.tool, textOf(res))
		}
		if s.tool == "view" {
			continue
		}
		for _, args := range queries {
			wantRes, gotRes := call(t, plain, "grep", args), call(t, cs, "grep", args)
			if wantRes.IsError || gotRes.IsError {
				t.Fatalf("grep %v: %s / %s", args, textOf(wantRes), textOf(gotRes))
			}
			want, got := textOf(wantRes), textOf(gotRes)
			if args["pattern"] == `\w+` {
				// No trigram to look up: every file is read, and the result says nothing.
				if got != want {
					t.Fatalf("grep %v after %s:\n%s\nwant\n%s", args, s.tool, got, want)
				}
				continue
			}
			if !live.MatchString(got) || live.ReplaceAllString(got, "") != want {
				t.Fatalf("grep %v after %s:\n%s\nwant, from the live list,\n%s", args, s.tool, got, want)
			}
		}
	}
}

// TestGrepIndexesOwnEdits: a file Boris's edit tools write is indexed again at once, so
// the grep that follows the edit need not read it: it says it was answered from the whole
// index, not a partial one, and gives what a server without indexes gives.
func TestGrepIndexesOwnEdits(t *testing.T) {
	cfg := testConfig(t)
	cfg.StructuredOutput = false
	cfg.CacheDir = t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%02d.go", i%3, i)] = "package x\n"
	}
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
	off := cfg
	off.NoSearchIndex = true
	plain, _ := connect(t, off, nil)
	cs, _ := connect(t, cfg, nil)
	whole := regexp.MustCompile(`\n\(from the search index, kept fresh by file events[^\n]*\)$`)
	args := map[string]any{"pattern": "rare(Ident|Edit)", "output_mode": "content"}
	// The saved index loads, its live list is built and the files it does not hold are
	// indexed again, in the background; until then each grep reads some files.
	for got := ""; !whole.MatchString(got); {
		if t.Context().Err() != nil {
			t.Fatalf("no grep was answered from the whole index: %s", got)
		}
		got = textOf(call(t, cs, "grep", args))
	}
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "d2/f05.go"}},
		{"str_replace", map[string]any{"path": "d2/f05.go", "old_str": "package x", "new_str": "package y"}},
		{"create_file", map[string]any{"path": "d1/new.go", "content": "package x\nfunc rareIdent() {}\n"}},
		{"view", map[string]any{"path": "d0/f03.go"}},
		{"str_replace", map[string]any{"path": "d0/f03.go", "old_str": "package x", "new_str": "package rareEdit"}},
	}
	for _, s := range steps {
		if res := call(t, cs, s.tool, s.args); res.IsError {
			t.Fatalf("%s: %s", s.tool, textOf(res))
		}
		if s.tool == "view" {
			continue
		}
		want, got := textOf(call(t, plain, "grep", args)), textOf(call(t, cs, "grep", args))
		if !whole.MatchString(got) || whole.ReplaceAllString(got, "") != want {
			t.Fatalf("grep after %s %v:\n%s\nwant, from the whole index,\n%s", s.tool, s.args, got, want)
		}
	}
}
