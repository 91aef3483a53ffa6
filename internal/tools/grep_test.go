package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// writeTree creates files (path: content) under dir. Times are set in path order, the
// first oldest, so "newest first" has a known answer.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// lines returns the result text's lines that are not notes or headers.
func bodyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "Found ") || strings.HasPrefix(l, "No ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func TestGrepPagingAndBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	files := map[string]string{}
	for i := range 30 {
		files[filepath.Join("d", string(rune('a'+i%26))+strings.Repeat("x", i/26)+".txt")] = "hit\n"
	}
	var big strings.Builder
	for range 5000 {
		big.WriteString("hit " + strings.Repeat("é", 20) + "\n")
	}
	files["big/huge.txt"] = big.String()
	files["big/a-long.txt"] = "hit " + strings.Repeat("y", 5000) + "\n"
	writeTree(t, cfg.Workdir, files)
	cs, _ := connect(t, cfg, nil)

	all := bodyLines(textOf(call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "d"})))
	if len(all) != 30 {
		t.Fatalf("grep in d found %d files, want 30", len(all))
	}
	var paged []string
	for off := 0; off < 30; off += 7 {
		res := call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "d", "head_limit": 7, "offset": off})
		got := textOf(res)
		page := bodyLines(got)
		paged = append(paged, page...)
		if off+7 < 30 && !strings.Contains(got, "pass offset: ") {
			t.Errorf("page at %d has no paging note:\n%s", off, got)
		}
	}
	if !slices.Equal(paged, all) {
		t.Errorf("pages joined = %q, want %q", paged, all)
	}

	res := call(t, cs, "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "content"})
	got := textOf(res)
	if n := utf8.RuneCountInString(got); n > 31_000 {
		t.Errorf("content output is %d characters, want it within the budget", n)
	}
	if !utf8.ValidString(got) {
		t.Error("content output is not valid UTF-8")
	}
	if !strings.Contains(got, "cut by the output budget; pass offset: ") {
		t.Errorf("budget note missing:\n%s", got[len(got)-300:])
	}
	if !regexp.MustCompile(`a-long\.txt:1:hit y+ … \[line cut: [\d,]+ bytes after\]`).MatchString(got) {
		t.Errorf("long line not cut with a marker")
	}
}

func TestSearchToolSchemas(t *testing.T) {
	t.Parallel()
	cs, _ := connect(t, testConfig(t), nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tool := range res.Tools {
		switch tool.Name {
		case "grep":
			found++
			b := schemaJSON(t, tool.InputSchema)
			for _, w := range []string{`"-i"`, `"-n"`, `"-A"`, `"-B"`, `"-C"`, `"head_limit"`, `"offset"`, `"multiline"`, `"files_with_matches"`, `"enum"`, `RE2`, `rust *.rs`} {
				if !strings.Contains(b, w) {
					t.Errorf("grep schema lacks %s: %s", w, b)
				}
			}
		case "find":
			found++
			if b := schemaJSON(t, tool.InputSchema); !strings.Contains(b, `"enum":["file","dir","any"]`) {
				t.Errorf("find schema lacks the type enum: %s", b)
			}
		}
	}
	if found != 2 {
		t.Errorf("tools/list has %d of grep and find", found)
	}
}

func schemaJSON(t *testing.T, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
