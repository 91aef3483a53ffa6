// Command searchbench times Boris's grep and find, called through an MCP client over
// STDIO, against ripgrep and fd on the same corpus, and prints a Markdown table.
//
// Usage: go run ./bench/searchbench -boris ./boris [-corpus DIR] [-runs N] [-index] [-cache-dir DIR]
//
// Without -corpus it copies GOROOT/src to a temporary directory and makes it a git
// repository. All tools then search the same files with their defaults: hidden files and
// .git are skipped, .gitignore files apply, binary files are skipped.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type benchCase struct {
	name  string
	tool  string         // boris tool
	args  map[string]any // boris arguments
	other []string       // rg or fd command line
}

func main() {
	boris := flag.String("boris", "", "path to a built boris binary (required)")
	corpus := flag.String("corpus", "", "directory to search (default: a fresh copy of GOROOT/src)")
	runs := flag.Int("runs", 9, "timed runs per case; the median is reported")
	index := flag.Bool("index", false, "wait until grep answers from the search index before timing (a big tree)")
	cacheDir := flag.String("cache-dir", "", "Boris's cache directory, where the search index is kept (default: Boris's)")
	scan := flag.Bool("scan", false, "run Boris with --no-search-index, so that every search reads every file (a tree of 5,000 files or more is indexed from its second search)")
	flag.Parse()
	if *boris == "" {
		log.Fatal("-boris is required")
	}
	rg, err := lookPath("rg")
	if err != nil {
		log.Fatal(err)
	}
	fd, err := lookPath("fdfind", "fd")
	if err != nil {
		log.Fatal(err)
	}
	dir := *corpus
	if dir == "" {
		tmp, err := os.MkdirTemp("", "searchbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "src")
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			log.Fatalf("go env GOROOT: %v", err)
		}
		if err := copyTree(filepath.Join(strings.TrimSpace(string(goroot)), "src"), dir); err != nil {
			log.Fatal(err)
		}
		// A git repository, so that every tool applies the corpus's .gitignore files
		// (fd before 8.7 has no --no-require-git).
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			log.Fatalf("git init: %v: %s", err, out)
		}
	}

	rgBase := []string{rg, "--no-config", "--color", "never"}
	cases := []benchCase{
		{"literal, files", "grep", map[string]any{"pattern": "ErrNotExist"}, append(slices.Clone(rgBase), "-l", "ErrNotExist")},
		{"literal, content", "grep", map[string]any{"pattern": "ErrNotExist", "output_mode": "content"}, append(slices.Clone(rgBase), "-n", "--no-heading", "ErrNotExist")},
		{"case-insensitive literal, files", "grep", map[string]any{"pattern": "errnotexist", "-i": true}, append(slices.Clone(rgBase), "-l", "-i", "errnotexist")},
		{"case-insensitive literal, content", "grep", map[string]any{"pattern": "errnotexist", "-i": true, "output_mode": "content"}, append(slices.Clone(rgBase), "-n", "--no-heading", "-i", "errnotexist")},
		{"alternation, files", "grep", map[string]any{"pattern": "ErrNotExist|ErrPermission|ErrClosed"}, append(slices.Clone(rgBase), "-l", "ErrNotExist|ErrPermission|ErrClosed")},
		{"alternation, content", "grep", map[string]any{"pattern": "ErrNotExist|ErrPermission|ErrClosed", "output_mode": "content"}, append(slices.Clone(rgBase), "-n", "--no-heading", "ErrNotExist|ErrPermission|ErrClosed")},
		{"character class, files", "grep", map[string]any{"pattern": `func [A-Z]\w*Reader\(`}, append(slices.Clone(rgBase), "-l", `func [A-Z]\w*Reader\(`)},
		{"character class, content", "grep", map[string]any{"pattern": `func [A-Z]\w*Reader\(`, "output_mode": "content"}, append(slices.Clone(rgBase), "-n", "--no-heading", `func [A-Z]\w*Reader\(`)},
		{"find **/*_test.go", "find", map[string]any{"pattern": "**/*_test.go"}, []string{fd, "--color", "never", "-t", "f", "-g", "*_test.go"}},
	}

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "searchbench", Version: "1"}, nil)
	cmd := exec.Command(*boris, "--transport", "stdio", "--workdir", dir, "--log-level", "error")
	if *cacheDir != "" {
		cmd.Args = append(cmd.Args, "--cache-dir", *cacheDir)
	}
	if *scan {
		cmd.Args = append(cmd.Args, "--no-search-index")
	}
	cmd.Stderr = os.Stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	if *index {
		waitForIndex(ctx, cs)
	}
	fmt.Printf("Corpus: %s (%d files), GOMAXPROCS %d, median of %d runs, warm cache.\n\n", dir, countFiles(dir), runtime.GOMAXPROCS(0), *runs)
	fmt.Println("| Case | Boris (ms) | Other (ms) | Ratio | Boris result | Other result |")
	fmt.Println("|---|---:|---:|---:|---|---|")
	for _, c := range cases {
		var bt, ot []time.Duration
		var bsum, osum string
		for i := -1; i < *runs; i++ { // run -1 warms the cache
			d, sum, err := timeBoris(ctx, cs, c)
			if err != nil {
				log.Fatalf("%s: boris: %v", c.name, err)
			}
			d2, sum2, err := timeOther(dir, c.other)
			if err != nil {
				log.Fatalf("%s: %s: %v", c.name, c.other[0], err)
			}
			if i >= 0 {
				bt, ot = append(bt, d), append(ot, d2)
			}
			bsum, osum = sum, sum2
		}
		b, o := median(bt), median(ot)
		fmt.Printf("| %s | %.1f | %.1f | %.2f | %s | %s |\n", c.name, ms(b), ms(o), float64(b)/float64(o), bsum, osum)
	}
	fmt.Println()
	fmt.Println("Other: " + strings.Join(rgBase[1:], " ") + " (-l | -n --no-heading) [-i] PATTERN; fd: fdfind --color never -t f -g '*_test.go'.")
}

// waitForIndex searches once a second until a result says it came from the search index
// with nothing left to read in full, for up to 15 minutes.
func waitForIndex(ctx context.Context, cs *mcp.ClientSession) {
	start := time.Now()
	for time.Since(start) < 15*time.Minute {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{"pattern": "ErrNotExist"}})
		if err != nil {
			log.Fatalf("waiting for the search index: %v", err)
		}
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok && strings.Contains(tc.Text, "only files that can match were read") {
				fmt.Printf("The search index served searches %.1f s after the first.\n", time.Since(start).Seconds())
				return
			}
		}
		time.Sleep(time.Second)
	}
	log.Fatal("the search index did not serve a search within 15 minutes")
}

var foundRE = regexp.MustCompile(`Found (\d+) (?:matching line|file)s?`)

func timeBoris(ctx context.Context, cs *mcp.ClientSession, c benchCase) (time.Duration, string, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	d := time.Since(start)
	if err != nil {
		return 0, "", err
	}
	var text string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return 0, "", fmt.Errorf("%s", text)
	}
	sum := "?"
	if m := foundRE.FindStringSubmatch(text); m != nil {
		sum = m[1]
		if strings.Contains(m[0], "line") {
			sum += " lines"
		} else {
			sum += " files"
		}
	}
	return d, sum, nil
}

func timeOther(dir string, argv []string) (time.Duration, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out countWriter
	cmd.Stdout = &out // a pipe, not /dev/null: rg stops early when writing to /dev/null
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // no matches
	}
	return d, strconv.Itoa(out.lines) + " lines", err
}

type countWriter struct{ lines int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func lookPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found; run bench/search.sh, which installs it", names[0])
}

func countFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// copyTree copies regular files, directories and symlinks from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			info, err := in.Stat()
			if err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}
