package search

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/mjkoo/boris/internal/memlimit"
)

// BenchmarkIndexBuild builds the index of the tree named by BORIS_BENCH_INDEX_TREE into a
// cache directory and reports: source MB/s (by the clock, and per second of CPU used:
// one core), the peak heap during the build (sampled every 5 ms; the build runs under the
// collector's memory limit that the boris binary sets, 64 MiB above the live heap, see
// memlimit.Follow; a test binary has none of its own), the index file's MB per
// GB of source, the heap the loaded index takes per GB of source (after GC), and how long
// a persisted index takes to load.
func BenchmarkIndexBuild(b *testing.B) {
	dir := os.Getenv("BORIS_BENCH_INDEX_TREE")
	if dir == "" {
		b.Skip("BORIS_BENCH_INDEX_TREE is not set")
	}
	cache := b.TempDir()
	heapNow := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	var sys time.Duration
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		sys = time.Duration(ru.Stime.Nano())
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for b.Loop() {
		runtime.GC()
		base := heapNow()
		var peak uint64
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				peak = max(peak, heapNow())
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
		stop := memlimit.Follow(64<<20, 0, nil)
		cpu0, start := cpu(), time.Now()
		sys0 := sys
		x, err := buildIndex(context.Background(), openScope{}, dir, "", cache, nil)
		took, cpuTook := time.Since(start), cpu()-cpu0
		stop()
		sysTook := sys - sys0
		close(done)
		<-stopped
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Save(cache); err != nil {
			b.Fatal(err)
		}
		var src int64
		for _, f := range x.files {
			src += f.size
		}
		files, postings := x.Files(), x.Postings()
		fi, err := os.Stat(indexPath(cache, dir))
		if err != nil {
			b.Fatal(err)
		}
		x = nil
		runtime.GC()
		runtime.GC()
		before := heapNow()
		start = time.Now()
		y, err := loadIndex(cache, dir)
		load := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.GC()
		held := int64(heapNow()) - int64(before)
		info := y.Info()
		runtime.KeepAlive(y)
		gb := float64(src) / 1e9
		b.ReportMetric(float64(src)/1e6/took.Seconds(), "MB/s")
		b.ReportMetric(float64(src)/1e6/cpuTook.Seconds(), "MB/cpu-s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(peak-min(base, peak))/(1<<20), "peak-heap-over-base-MiB")
		b.ReportMetric(float64(fi.Size())/1e6/gb, "file-MB/GB")
		b.ReportMetric(float64(held)/1e6/gb, "heap-MB/GB")
		b.ReportMetric(float64(load.Microseconds())/1000, "load-ms")
		b.Logf("%d files, %.2f GB of source, %d postings (%.3f file bytes each); built in %v (%v CPU, %v of it in the kernel); file %.1f MB; heap held by the loaded index %.1f MB (Info: %.1f MB heap, %.1f MB mapped); loaded in %v",
			files, gb, postings, float64(fi.Size())/float64(postings), took.Round(time.Millisecond), cpuTook.Round(time.Millisecond), sysTook.Round(time.Millisecond),
			float64(fi.Size())/1e6, float64(held)/1e6, float64(info.Bytes)/1e6, float64(info.Mapped)/1e6, load.Round(time.Millisecond))
	}
}
