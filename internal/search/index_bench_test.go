package search

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
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

// BenchmarkIndex prints, for the git repository named by BORIS_BENCH_INDEX_TREE (bench/index.sh
// makes one, with a branch "other" that differs in many files), the time of each query
// class by ripgrep, by scan, and with an index in five states: cold (no index yet; a build
// starts), warm (repeated), right after an edit, after sed -i on 100 files, and after a
// git checkout of the other branch. Each figure after a change is the first query after it;
// after each checkout the scan is timed again, in the same state.
func BenchmarkIndex(b *testing.B) {
	dir := os.Getenv("BORIS_BENCH_INDEX_TREE")
	if dir == "" {
		b.Skip("BORIS_BENCH_INDEX_TREE is not set")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("no rg")
	}
	for b.Loop() {
		benchIndexTable(b, dir, rg)
	}
}

type benchRow struct {
	rg, scan, cold time.Duration
	warm           []time.Duration
	edit           []time.Duration
	sed, checkout  time.Duration
	scanCheckout   time.Duration // the scan right after, in the same state
	warmCheckout   []time.Duration
	labels         map[string]string
}

func benchIndexTable(b *testing.B, dir, rg string) {
	const repeats = 7
	rows := make([]benchRow, len(indexBenchQueries))
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	pct := func(d []time.Duration, p int) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, len(s)*p/100)]
	}
	label := func(r *GrepResult) string {
		l := map[IndexUse]string{Scanned: "scan", Indexed: "index", PartlyIndexed: "partial"}[r.Index]
		if r.Live {
			l += "+live"
		}
		return l
	}
	grep := func(ix *Indexes, q GrepOptions) (time.Duration, *GrepResult) {
		q.Indexes = ix
		start := time.Now()
		res, err := Grep(b.Context(), openScope{}, dir, q)
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start), res
	}
	for i, q := range indexBenchQueries {
		rows[i].labels = map[string]string{}
		var rgs, scans []time.Duration
		for range 3 {
			cmd := exec.Command(rg, append(q.rg, dir)...)
			cmd.Stdout = &bytes.Buffer{}
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			rgs = append(rgs, time.Since(start))
			d, _ := grep(nil, q.opts)
			scans = append(scans, d)
		}
		rows[i].rg, rows[i].scan = median(rgs), median(scans)
	}
	// Cold: the first search of each class with no index; the first starts a build.
	ix := &Indexes{}
	defer func() {
		ix.Close()
		ix.Wait()
	}()
	for i, q := range indexBenchQueries {
		var res *GrepResult
		rows[i].cold, res = grep(ix, q.opts)
		rows[i].labels["cold"] = label(res)
	}
	start := time.Now()
	ix.Wait()
	build := time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	x, l, _ := ix.lookup(dir)
	if x == nil || l == nil {
		b.Fatal("no index or no live list after the build")
	}
	b.Logf("index: %d files, %d postings; build and live list ready %v after the first search; heap in use %d MiB",
		x.Files(), x.Postings(), build.Round(time.Millisecond), ms.HeapInuse>>20)
	for i, q := range indexBenchQueries {
		for range 20 {
			d, res := grep(ix, q.opts)
			rows[i].warm = append(rows[i].warm, d)
			rows[i].labels["warm"] = label(res)
		}
	}
	files := goFiles(b, dir, 100)
	for i, q := range indexBenchQueries {
		for k := range repeats {
			editFile(b, files[k], "// edited\n")
			d, res := grep(ix, q.opts)
			rows[i].edit = append(rows[i].edit, d)
			rows[i].labels["edit"] = label(res)
		}
	}
	for i, q := range indexBenchQueries {
		cmd := exec.Command("sed", append([]string{"-i", fmt.Sprintf("$a // sed %d", i)}, files...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sed: %v\n%s", err, out)
		}
		var res *GrepResult
		rows[i].sed, res = grep(ix, q.opts)
		rows[i].labels["sed"] = label(res)
	}
	// Put the tree back as committed, and let any rebuild the changes started finish.
	gitIn(b, dir, "checkout", "-q", "-f", "main")
	ix.Wait()
	branch := []string{"other", "main"}
	for i, q := range indexBenchQueries {
		gitIn(b, dir, "checkout", "-q", branch[i%2])
		var res *GrepResult
		rows[i].checkout, res = grep(ix, q.opts)
		rows[i].labels["checkout"] = label(res)
		// The scan in the same state (the files just written, being written back); the
		// changed files are indexed again meanwhile, waiting as for any search.
		end := ix.begin()
		rows[i].scanCheckout, _ = grep(nil, q.opts)
		end()
	}
	// Warm after checkout: once the files the last checkout changed are indexed again in
	// the overlay (or a new index is built, when it is full), repeated searches.
	start = time.Now()
	if _, l, _ := ix.lookup(dir); l != nil {
		l.waitCaughtUp()
	}
	ix.Wait()
	if _, l, _ := ix.lookup(dir); l != nil {
		l.waitCaughtUp()
	}
	b.Logf("after the checkouts: changed files indexed again (or a new index built) %v later", time.Since(start).Round(time.Millisecond))
	for i, q := range indexBenchQueries {
		for range 20 {
			d, res := grep(ix, q.opts)
			rows[i].warmCheckout = append(rows[i].warmCheckout, d)
			rows[i].labels["warmCheckout"] = label(res)
		}
	}
	_, _, o := ix.lookup(dir)
	if o != nil {
		o.mu.RLock()
		b.Logf("overlay: %d files, %d ids, %d postings", len(o.files), o.next, o.tri.Postings())
		o.mu.RUnlock()
	}
	gitIn(b, dir, "checkout", "-q", "main")
	ms2 := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	ratio := func(d, rg time.Duration) string { return fmt.Sprintf("%.2f×", float64(d)/float64(rg)) }
	var t strings.Builder
	fmt.Fprintf(&t, "\n| query | ripgrep ms | scan ms (×rg) | cold ms (×rg) | warm p50 / p95 ms (×rg) | after edit p50 ms (×rg) | after sed -i 100 ms (×rg) | after checkout ms (×rg) | scan then ms (×rg) | warm after checkout p50 ms (×rg) |\n")
	fmt.Fprintf(&t, "|---|---|---|---|---|---|---|---|---|---|\n")
	for i, q := range indexBenchQueries {
		r := rows[i]
		w50, w95, e50 := pct(r.warm, 50), pct(r.warm, 95), median(r.edit)
		wc := median(r.warmCheckout)
		fmt.Fprintf(&t, "| %s | %s | %s (%s) | %s (%s) %s | %s / %s (%s) %s | %s (%s) %s | %s (%s) %s | %s (%s) %s | %s (%s) | %s (%s) %s |\n", q.name,
			ms2(r.rg), ms2(r.scan), ratio(r.scan, r.rg),
			ms2(r.cold), ratio(r.cold, r.rg), r.labels["cold"],
			ms2(w50), ms2(w95), ratio(w50, r.rg), r.labels["warm"],
			ms2(e50), ratio(e50, r.rg), r.labels["edit"],
			ms2(r.sed), ratio(r.sed, r.rg), r.labels["sed"],
			ms2(r.checkout), ratio(r.checkout, r.rg), r.labels["checkout"],
			ms2(r.scanCheckout), ratio(r.scanCheckout, r.rg),
			ms2(wc), ratio(wc, r.rg), r.labels["warmCheckout"])
	}
	b.Log(t.String())
}

func gitIn(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func goFiles(b *testing.B, dir string, n int) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" && len(out) < n && !strings.Contains(p, "/.git/") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// editFile appends text to path as an edit tool does: a new file renamed over it.
func editFile(b *testing.B, path, text string) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, text...), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
}
