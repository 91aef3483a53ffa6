package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioSearchIndex: through the built binary over STDIO, a tree big enough for an
// index gets one on its second search, in the background and in the cache directory
// given; grep then says it answered from the index with the same text as the scans
// before it, and an edit made through Boris is found by the next grep, still from the
// index.
func TestStdioSearchIndex(t *testing.T) {
	t.Parallel()
	dir, cache := t.TempDir(), t.TempDir()
	// A tenth of the 50,000 files that start a build on a tree's first search.
	for i := range 5_500 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%50))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("package d\n\n// file %d\nfunc f%d() {}\n", i, i)
		if i == 4321 {
			body += "func rareIdent() {}\n"
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%04d.go", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := stdioClient(t, "--workdir", dir, "--cache-dir", cache, "--no-checkpoints")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	grep := func(pattern string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": pattern, "output_mode": "content"}})
		if err != nil || res.IsError {
			t.Fatalf("grep %q: %v %+v", pattern, err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	note := regexp.MustCompile(`\n\(from the search index, kept fresh by file events: only files that can match were read\)$`)
	scan := grep("rareIdent")
	if !strings.Contains(scan, "f4321.go:5:func rareIdent() {}") || strings.Contains(scan, "search index") {
		t.Fatalf("first grep, a scan:\n%s", scan)
	}
	got := grep("rareIdent") // the second search starts the build
	for !note.MatchString(got) {
		if ctx.Err() != nil {
			t.Fatalf("grep never answered from the search index; last:\n%s", got)
		}
		got = grep("rareIdent")
	}
	if body := note.ReplaceAllString(got, ""); body != scan {
		t.Fatalf("from the index:\n%s\nwant, as the scan:\n%s", body, scan)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "search")); len(entries) == 0 {
		t.Fatalf("no index in the cache directory %s", cache)
	}
	path := filepath.Join(dir, "d07", "f0007.go")
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": path}}); err != nil || res.IsError {
		t.Fatalf("view: %v %+v", err, res)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "str_replace", Arguments: map[string]any{
		"path": path, "old_str": "func f7() {}", "new_str": "func f7() { rareIdent() }"}})
	if err != nil || res.IsError {
		t.Fatalf("str_replace: %v %+v", err, res.Content[0])
	}
	got = grep("rareIdent")
	if !note.MatchString(got) || !strings.Contains(got, "f0007.go:4:func f7() { rareIdent() }") {
		t.Fatalf("grep right after the edit:\n%s", got)
	}
}
