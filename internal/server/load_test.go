package server

import (
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var loadDuration = flag.Duration("load-duration", 2*time.Second, "how long TestLoad keeps its sessions busy")

// loadResult is what one load run measured.
type loadResult struct {
	calls, errors int
	elapsed       time.Duration
	latencies     []time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.calls) / r.elapsed.Seconds() }

func (r loadResult) p99() time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// runLoad has n sessions alternate `bash true` and `view` of a small file for d.
func runLoad(t testing.TB, ts *httptest.Server, dir string, n int, d time.Duration) loadResult {
	file := filepath.Join(dir, "small.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := range n {
		wg.Go(func() {
			client := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
			cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
			if err != nil {
				mu.Lock()
				res.errors++
				mu.Unlock()
				return
			}
			defer cs.Close()
			var local []time.Duration
			errs := 0
			for j := 0; time.Now().Before(deadline); j++ {
				params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}}
				if (i+j)%2 == 1 {
					params = &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": file}}
				}
				t0 := time.Now()
				r, err := cs.CallTool(t.Context(), params)
				local = append(local, time.Since(t0))
				if err != nil || r.IsError {
					errs++
				}
			}
			mu.Lock()
			res.calls += len(local)
			res.errors += errs
			res.latencies = append(res.latencies, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// TestLoad keeps 32 sessions busy with bash and view calls; none may fail. Use
// -load-duration=10s for the full soak.
func TestLoad(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxSessions = 64
	_, ts := start(t, cfg)
	res := runLoad(t, ts, cfg.Workdir, 32, *loadDuration)
	t.Logf("32 sessions: %d calls in %v (%.0f/s), p99 %v", res.calls, res.elapsed.Round(time.Millisecond), res.perSecond(), res.p99())
	if res.errors != 0 || res.calls == 0 {
		t.Fatalf("%d of %d calls failed", res.errors, res.calls)
	}
	if rss := residentKB(); rss > 512*1024 {
		t.Errorf("resident memory %d KiB after the load, want it bounded", rss)
	}
}

// BenchmarkLoad reports calls/s and p99 latency at 8 and 32 sessions; compare runs with
// benchstat.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{8, 32} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			cfg := newConfig(b)
			cfg.MaxSessions = 64
			_, ts := start(b, cfg)
			var total loadResult
			for b.Loop() {
				r := runLoad(b, ts, cfg.Workdir, n, time.Second)
				total.calls += r.calls
				total.errors += r.errors
				total.elapsed += r.elapsed
				total.latencies = append(total.latencies, r.latencies...)
			}
			if total.errors > 0 {
				b.Fatalf("%d calls failed", total.errors)
			}
			b.ReportMetric(total.perSecond(), "calls/s")
			b.ReportMetric(float64(total.p99().Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(residentKB())/1024, "rss-MiB")
		})
	}
}

func residentKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}
