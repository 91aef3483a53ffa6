package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/testutil"
)

// The checkpoint benchmarks, on 4 copies of GOROOT (the tree is made once, see
// testutil.GoTrees; docs/performance.md has the figures):
//
//	go test -run '^$' -bench . -benchtime 1x ./internal/checkpoint          (baseline, rewinds)
//	go test -run '^$' -bench 'Capture|Walk' ./internal/checkpoint           (per call)
//
// Targets: a capture that finds nothing costs next to nothing; one of k files 1 ms plus
// reading them; a walk of the whole tree (events lost) ≤ 150 ms; the baseline ≤ 5 s and
// ≤ 1.1× one GOROOT in the store; a rewind of 1,000 files ≤ 1 s, of the whole tree after
// rm -rf ≤ 5 s. BenchmarkBashTrueCheckpointsAdded in internal/tools measures what
// checkpoints add to a whole call.

// benchTracker opens a tracker on a private copy of the 4 GOROOT trees (hard links would
// share inodes with the kept tree, so the copy is made with cp -a once per benchmark
// process), with its baseline built.
// The time cp -a took to copy the trees is the floor a rewind of all of them is compared
// with (copy-ratio), measured in the same run.
func benchTracker(b *testing.B, fresh bool) (*Tracker, string) {
	b.Helper()
	src := testutil.GoTrees(b, 4)
	root := src
	if fresh {
		root = filepath.Join(b.TempDir(), "w")
		start := time.Now()
		if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		copyFloor = time.Since(start)
	}
	tr, err := Open(Options{Root: root, Dir: filepath.Join(b.TempDir(), "state"), MaxFileSize: 16 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	if err := tr.WaitReady(b.Context()); err != nil {
		b.Fatal(err)
	}
	return tr, root
}

func treeBytes(b *testing.B, root string) (files int, bytes int64) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err == nil {
				files++
				bytes += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return files, bytes
}

// BenchmarkBaseline builds the baseline of the 4 trees into an empty store: its time, and
// the bytes stored against one GOROOT's (store-ratio).
func BenchmarkBaseline(b *testing.B) {
	root := testutil.GoTrees(b, 4)
	files, _ := treeBytes(b, root)
	_, one := treeBytes(b, testutil.GoRoot(b))
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		tr, err := Open(Options{Root: root, Dir: filepath.Join(b.TempDir(), "state"), MaxFileSize: 16 << 20})
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.WaitReady(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tr.Store().Size())/float64(one), "store-ratio")
		b.ReportMetric(float64(files), "files")
		tr.Close()
	}
}

// BenchmarkCaptureNothing is a call that changed nothing: what every call pays.
func BenchmarkCaptureNothing(b *testing.B) {
	tr, _ := benchTracker(b, false)
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		if c, err := tr.Capture(b.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
			b.Fatal(c, err)
		}
	}
}

// BenchmarkCapture10Files is a call that rewrote 10 files of 4 kB; the writes are not
// timed. Its floor is reading those 10 files, measured in the same run (untimed):
// floor-µs, and beyond-floor-µs, what the capture costs beyond it. cpu-µs/op is the
// capture's CPU time.
func BenchmarkCapture10Files(b *testing.B) {
	tr, root := benchTracker(b, true)
	data := make([]byte, 4096)
	n := 0
	var floor, cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		names := make([]string, 10)
		for i := range names {
			n++
			data[0], data[1] = byte(n), byte(n>>8)
			names[i] = filepath.Join(root, "copy1", fmt.Sprintf("bench%d.txt", i))
			if err := os.WriteFile(names[i], data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		for _, name := range names {
			if _, err := os.ReadFile(name); err != nil {
				b.Fatal(err)
			}
		}
		floor += time.Since(start)
		b.StartTimer()
		before := selfCPU()
		c, err := tr.Capture(b.Context(), CallInfo{Tool: "bash"})
		cpu += selfCPU() - before
		if err != nil || c == nil || len(c.Changes) != 10 {
			b.Fatalf("Capture = %v, %v", c, err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "floor-µs")
	b.ReportMetric(float64((b.Elapsed()-floor).Microseconds())/float64(b.N), "beyond-floor-µs")
}

// BenchmarkWalk is a capture when events were lost: a metadata walk of the whole tree.
// Its floor, measured in the same run, is find printing each path's inode, size, times
// and mode (one lstat a path, one process): floor-ratio is the walk's time over the
// floor's, cpu-ratio its CPU time over the floor's.
func BenchmarkWalk(b *testing.B) {
	tr, root := benchTracker(b, false)
	var floor, floorCPU time.Duration
	for range 3 {
		start, cpu := time.Now(), childCPU()
		if err := exec.Command("find", root, "-printf", "%i %s %T@ %C@ %m\\n").Run(); err != nil {
			b.Fatal(err)
		}
		if d := time.Since(start); floor == 0 || d < floor {
			floor, floorCPU = d, childCPU()-cpu
		}
	}
	cpu := selfCPU()
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		tr.mu.Lock()
		tr.walkAll = true
		tr.mu.Unlock()
		if c, err := tr.Capture(b.Context(), CallInfo{Tool: "bash"}); c != nil || err != nil {
			b.Fatal(c, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(floor), "floor-ratio")
	b.ReportMetric(float64(selfCPU()-cpu)/float64(b.N)/float64(floorCPU), "cpu-ratio")
	b.ReportMetric(float64(floor.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(tr.listed), "dirs-listed")
}

// selfCPU and childCPU are the CPU time this process and its children (waited for) used.
func selfCPU() time.Duration  { return rusage(syscall.RUSAGE_SELF) }
func childCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(who, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkRewind1000Files rewinds a command that rewrote 1,000 files.
func BenchmarkRewind1000Files(b *testing.B) {
	tr, root := benchTracker(b, true)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		out, err := exec.Command("/bin/bash", "-c", `cd "$1" && find copy2/src -name '*.go' | head -1000 | xargs sed -i '1s/^/\/\/ changed\n/'`, "-", root).CombinedOutput()
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		c, err := tr.Capture(b.Context(), CallInfo{Tool: "bash"})
		if err != nil || c == nil || len(c.Changes) != 1000 {
			b.Fatalf("Capture = %d changes, %v", len(c.Changes), err)
		}
		b.StartTimer()
		before := selfCPU()
		p, err := tr.Rewind(b.Context(), c.ID, nil, false, false, CallInfo{Tool: "rewind"})
		cpu += selfCPU() - before
		if err != nil || len(p.Actions) != 1000 || len(p.Failed) > 0 {
			b.Fatalf("Rewind = %v, %v", p, err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkRewindAll rewinds rm -rf of the whole tree. Its floors, measured in the same
// run, are cp -a of the same tree into a new directory (copy-ratio) and, after the
// rewind, rm -rf and cp -a again, as the rewind found the tree (recopy-ratio).
func BenchmarkRewindAll(b *testing.B) {
	tr, root := benchTracker(b, true)
	files, _ := treeBytes(b, root)
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		if out, err := exec.Command("/bin/bash", "-c", `cd "$1" && rm -rf copy1 copy2 copy3 copy4`, "-", root).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		c, err := tr.Capture(b.Context(), CallInfo{Tool: "bash"})
		if err != nil || c == nil {
			b.Fatalf("Capture = %v, %v", c, err)
		}
		b.StartTimer()
		before := selfCPU()
		p, err := tr.Rewind(b.Context(), c.ID, nil, false, false, CallInfo{Tool: "rewind"})
		cpu += selfCPU() - before
		if err != nil || len(p.Failed) > 0 {
			b.Fatalf("Rewind: %v %v", err, p.Failed)
		}
		b.ReportMetric(float64(files), "files")
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(copyFloor), "copy-ratio")
	// The same copy made as the rewind was, right after rm -rf of the tree: a file system
	// finds room for new files more slowly just after as many were removed.
	if out, err := exec.Command("/bin/bash", "-c", `cd "$1" && rm -rf copy1 copy2 copy3 copy4`, "-", root).CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	start := time.Now()
	if out, err := exec.Command("/bin/bash", "-c", `cp -a "$1"/copy1 "$1"/copy2 "$1"/copy3 "$1"/copy4 "$2"`, "-", testutil.GoTrees(b, 4), root).CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	recopy := time.Since(start)
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(recopy), "recopy-ratio")
	b.ReportMetric(recopy.Seconds(), "recopy-s")
	b.ReportMetric(copyFloor.Seconds(), "copy-s")
}

// copyFloor is how long cp -a took to copy the trees in benchTracker.
var copyFloor time.Duration
