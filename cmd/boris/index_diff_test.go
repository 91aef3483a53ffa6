package main

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioIndexMatchesScan runs two copies of the built binary over STDIO on one tree,
// one with the search index and one with --no-search-index, and expects every grep and
// find to give the same text from both (but for the index's note), before the index,
// once it answers, and after each of a seeded series of changes made through the first
// copy's tools: commands that append to, sed -i, delete and rename files, move
// directories, check out another branch, edit ignore files, add links, hidden, binary and
// oversized files, rewrite hundreds of files at once, and Boris's own edits.
func TestStdioIndexMatchesScan(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	rng := rand.New(rand.NewPCG(36, 1))
	dir := t.TempDir()
	subdirs := []string{"", "a", "a/b", "a/b/c", "gen", "d", "d/e", ".hid", "node_modules/x", "sp ace", "ünï"}
	exts := []string{".go", ".txt", ".md", ".log", ".py"}
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 5,500 files: a tree gets an index from its second search at 5,000.
	for i := range 5_500 {
		sub := filepath.Join(dir, subdirs[rng.IntN(len(subdirs))], fmt.Sprintf("s%02d", i%40))
		write(filepath.Join(sub, fmt.Sprintf("f%04d%s", i, exts[rng.IntN(len(exts))])), diffBody(rng, rng.IntN(400) == 0))
	}
	write(filepath.Join(dir, ".gitignore"), "gen/\n*.log\n")
	write(filepath.Join(dir, "d", ".gitignore"), "*.md\n")
	write(filepath.Join(dir, "bin.dat"), "rareIdent\x00\x01\x02")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "one")
	git("checkout", "-q", "-b", "other")
	for i := range 800 {
		sub := filepath.Join(dir, subdirs[rng.IntN(len(subdirs))], fmt.Sprintf("o%02d", i%7))
		write(filepath.Join(sub, fmt.Sprintf("g%04d.go", i)), diffBody(rng, false))
	}
	git("add", "-A")
	git("commit", "-qm", "two")
	git("checkout", "-q", "main")

	indexed := stdioClient(t, "--workdir", dir, "--cache-dir", t.TempDir(), "--no-checkpoints")
	scan := stdioClient(t, "--workdir", dir, "--no-search-index", "--no-checkpoints")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), res.IsError
	}
	note := regexp.MustCompile(`\n*\(from (the|a partial) search index[^)]*\)$`)
	greps := []map[string]any{
		{"pattern": "rareIdent"},
		{"pattern": "rareIdent", "output_mode": "content"},
		{"pattern": "errnotexist", "-i": true, "output_mode": "count"},
		{"pattern": "ErrNotExist", "output_mode": "content", "-C": 1},
		{"pattern": `func \w+Reader\(`, "output_mode": "content"},
		{"pattern": `héllo|日本語`, "output_mode": "count", "glob": "*.go"},
		{"pattern": "x_2024", "type": "py"},
		{"pattern": "quick brown", "output_mode": "content", "head_limit": 7, "offset": 3},
		{"pattern": "rareIdent", "path": "a"},
		{"pattern": "rareIdent", "hidden": true},
		{"pattern": "rareIdent", "no_ignore": true},
		{"pattern": `brown\nfoo`, "multiline": true, "output_mode": "count"},
		{"pattern": "newword", "output_mode": "content"},
		{"pattern": "ERRNOTEXIST", "-i": true, "path": "d"},
		{"pattern": `\w+_\d{4}\b`, "output_mode": "count"},
	}
	finds := []map[string]any{
		{"pattern": "**/*.go", "head_limit": 50},
		{"pattern": "**/f00*"},
		{"pattern": "*", "type": "dir"},
	}
	// compare fails unless both copies answer alike, and returns how many greps the index
	// served.
	compare := func(state string) (fromIndex int) {
		t.Helper()
		for _, q := range greps {
			got, gotErr := call(indexed, "grep", q)
			want, wantErr := call(scan, "grep", q)
			if note.MatchString(got) {
				fromIndex++
			}
			if got = note.ReplaceAllString(got, ""); got != want || gotErr != wantErr {
				t.Fatalf("%s: grep %v with the index:\n%s\nwant, as the scan:\n%s", state, q, got, want)
			}
		}
		for _, q := range finds {
			got, gotErr := call(indexed, "find", q)
			if want, wantErr := call(scan, "find", q); got != want || gotErr != wantErr {
				t.Fatalf("%s: find %v with the index:\n%s\nwant, as the scan:\n%s", state, q, got, want)
			}
		}
		return fromIndex
	}
	compare("before any index")
	for compare("while the index is built") == 0 {
		if ctx.Err() != nil {
			t.Fatal("no grep was ever answered from the search index")
		}
	}

	// pick returns a regular file of the tree, outside .git, chosen by rng.
	pick := func() string {
		t.Helper()
		var files []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == ".git":
				return filepath.SkipDir
			case d.Type().IsRegular():
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(files)
		rel, _ := filepath.Rel(dir, files[rng.IntN(len(files))])
		return rel
	}
	bash := func(command string) {
		t.Helper()
		if out, isErr := call(indexed, "bash", map[string]any{"command": command}); isErr {
			t.Fatalf("bash %q: %s", command, out)
		}
	}
	// onFile runs command, with %[1]q standing for a file pick chooses.
	onFile := func(command string) func(int) string {
		return func(int) string {
			f := pick()
			bash(fmt.Sprintf(command, f))
			return f
		}
	}
	steps := []struct {
		name string
		do   func(i int) string
	}{
		{"append", onFile("echo 'rareIdent newword' >> %[1]q")},
		{"sed -i", onFile("sed -i 's/the/ErrNotExist/' %[1]q")},
		{"rm", onFile("rm -f %[1]q")},
		{"mv", onFile("mv %[1]q %[1]q.moved.go")},
		{"mv dir", func(int) string {
			d := subdirs[1+rng.IntN(len(subdirs)-1)]
			bash(fmt.Sprintf("if [ -d %[1]q ]; then mv %[1]q %[2]q; fi; mkdir -p %[1]q", d, d+"_m"))
			return d
		}},
		{"checkout", func(int) string {
			bash("git checkout -q -f other 2>/dev/null || git checkout -q -f main")
			return ""
		}},
		{"checkout main", func(int) string {
			bash("git checkout -q -f main")
			return ""
		}},
		{".gitignore", func(int) string {
			rule := []string{"*.py", "a/b/", "!gen/keep.go", "s0*", "*.moved.go"}[rng.IntN(5)]
			bash(fmt.Sprintf("echo %q >> .gitignore", rule))
			return rule
		}},
		{"nested .gitignore", func(int) string {
			bash("rm -f d/.gitignore; mkdir -p a; echo '*.txt' > a/.gitignore")
			return ""
		}},
		{"str_replace", func(int) string {
			f := pick()
			call(indexed, "view", map[string]any{"path": f})
			body, err := os.ReadFile(filepath.Join(dir, f))
			if err == nil && strings.Contains(string(body), "the") {
				if out, isErr := call(indexed, "str_replace", map[string]any{"path": f, "old_str": "the", "new_str": "rareIdent héllo", "replace_all": true}); isErr {
					t.Fatalf("str_replace %s: %s", f, out)
				}
			}
			return f
		}},
		{"create_file", func(i int) string {
			f := fmt.Sprintf("new%d/x/new.go", i)
			if out, isErr := call(indexed, "create_file", map[string]any{"path": f, "content": "rareIdent ErrNotExist\nfunc fooReader(x)\n"}); isErr {
				t.Fatalf("create_file %s: %s", f, out)
			}
			return f
		}},
		{"symlinks", func(i int) string {
			f := pick()
			bash(fmt.Sprintf("ln -sfn a lnk%d; ln -sf %q lf%d.go", i, f, i))
			return f
		}},
		{"binary", onFile("printf 'rareIdent\\0' > %[1]q")},
		{"hidden", func(i int) string {
			bash(fmt.Sprintf("mkdir -p .h%[1]d a && echo rareIdent > .h%[1]d/x.go && echo newword > a/.y%[1]d", i))
			return ""
		}},
		{"300 files", func(int) string {
			bash(`git ls-files | head -300 | while IFS= read -r f; do echo 'x_2024 func aReader(' >> "$f"; done`)
			return ""
		}},
		{"every file", func(int) string {
			bash("git ls-files -z | xargs -0 sed -i 's/quick/rareIdent/' 2>/dev/null || true") // some are gone
			return ""
		}},
		{"5 MB file", func(i int) string {
			bash(fmt.Sprintf("yes 'rareIdent quick brown' | head -c 5000000 > huge%[1]d.txt; echo newword >> huge%[1]d.txt", i))
			return ""
		}},
	}
	for round := range 2 {
		for i, s := range steps {
			if round == 1 {
				s = steps[rng.IntN(len(steps))] // the same kinds again, in another order
			}
			what := s.do(round*len(steps) + i)
			state := fmt.Sprintf("step %d.%d, %s %s", round, i, s.name, what)
			if compare(state) == 0 {
				t.Errorf("%s: no grep was answered from the search index", state)
			}
		}
	}
}

// diffBody makes a file's text from words the queries look for, with CRLF lines, a missing
// final newline now and then, and, when big, thousands of lines (indexed in blocks).
func diffBody(rng *rand.Rand, big bool) string {
	words := []string{"rareIdent", "ErrNotExist", "errnotexist", "ERRNOTEXIST", "func", "Reader(", "return", "héllo", "日本語", "the", "quick", "brown", "x_2024", "foo", "bar", "baz", "\t", "  ", "{", "}"}
	lines := 3 + rng.IntN(20)
	if big {
		lines = 2000 + rng.IntN(3000)
	}
	var b strings.Builder
	for range lines {
		for j := range rng.IntN(8) {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(30) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	if rng.IntN(10) == 0 {
		b.WriteString("no newline at end")
	}
	return b.String()
}
