package tools_test

import (
	"bufio"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/config"
	"github.com/mjkoo/boris/internal/testutil"
)

// The bash tool's per-call cost through a real client, next to the raw cost of spawning
// the shell and the cost of a call that spawns nothing:
//
//	go test -run '^$' -bench 'Bash(True|RawSpawn)$|TaskList' -benchtime 1000x ./internal/tools
//	go test -run '^$' -bench 'BashTrue(Confined)?$' -benchtime 1000x -count 5 ./internal/tools
//	go test -run '^$' -bench 'BashTrueConfinedAdded' -benchtime 1000x -count 3 ./internal/tools
//	go test -run '^$' -bench 'Flood' -benchtime 1x ./internal/tools
//
// Target: bash adds under 0.5 ms, at most 1.3x the raw spawn. Here the SDK client's own
// cost is included; bench/bash.sh measures over STDIO with a minimal client, which is the
// figure to hold to the target. The shell layer alone is measured by BenchmarkRunTrue in
// internal/shell.

func BenchmarkBashTrue(b *testing.B) {
	cs := connectB(b)
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		res := callB(b, cs, "bash", map[string]any{"command": "true"})
		if res.IsError {
			b.Fatal(textOf(res))
		}
	}
}

// BenchmarkBashTrueConfined is BenchmarkBashTrue with commands confined to the workdir by
// Landlock; the difference is what confinement costs a call (target: at most 0.5 ms).
func BenchmarkBashTrueConfined(b *testing.B) {
	needLandlock(b, 1)
	cs := connectB(b, func(c *config.Config) { c.AllowDirs = []string{c.Workdir} })
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		res := callB(b, cs, "bash", map[string]any{"command": "true"})
		if res.IsError {
			b.Fatal(textOf(res))
		}
	}
}

// BenchmarkBashTrueConfinedAdded is what confinement adds to a call: each iteration runs
// `bash true` on an unconfined server and on a confined one, in turn (target: at most
// 500 µs added; see testutil.Paired for why the median is the figure to read).
func BenchmarkBashTrueConfinedAdded(b *testing.B) {
	needLandlock(b, 1)
	plain := connectB(b)
	confined := connectB(b, func(c *config.Config) { c.AllowDirs = []string{c.Workdir} })
	run := func(cs *mcp.ClientSession) func() {
		return func() {
			if res := callB(b, cs, "bash", map[string]any{"command": "true"}); res.IsError {
				b.Fatal(textOf(res))
			}
		}
	}
	testutil.Paired(b, "unconfined", run(plain), "confined", run(confined))
}

func BenchmarkBashRawSpawn(b *testing.B) {
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		cmd := exec.Command("/bin/bash", "-c", "true")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashFlood200MB reports how much the server's peak resident memory grows while
// a command prints 200 MB (peak-RSS-MB); the bar is a few tens of MB.
func BenchmarkBashFlood200MB(b *testing.B) {
	cs := connectB(b)
	for b.Loop() {
		runtime.GC()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset the peak
		before := procStatus(b, "VmRSS")
		res := callB(b, cs, "bash", map[string]any{"command": "yes 'a line of output, about forty bytes long' | head -c 200000000"})
		if res.IsError || !strings.Contains(textOf(res), "characters omitted") {
			b.Fatalf("unexpected result: %.500s", textOf(res))
		}
		b.ReportMetric(float64(procStatus(b, "VmHWM")-before)/1024, "peak-RSS-MB")
	}
}

// procStatus returns a kB field of /proc/self/status.
func procStatus(b *testing.B, field string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// connectB is connect for benchmarks; edits, if given, change the configuration.
func connectB(b *testing.B, edits ...func(*config.Config)) *mcp.ClientSession {
	b.Helper()
	cfg := config.Config{
		Transport: "stdio", Workdir: b.TempDir(), Timeout: 30 * time.Second, MaxFileSize: 10_000_000,
		MaxSessions: 8, MaxBackgroundTasks: 4, MaxRequestBytes: 4 << 20, LogLevel: slog.LevelWarn,
		LogFormat: "text", Shell: "/bin/bash", Version: "bench",
	}
	for _, edit := range edits {
		edit(&cfg)
	}
	cs, _ := connect(b, cfg, nil)
	return cs
}

func callB(b *testing.B, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	b.Helper()
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkTaskList is the cost of a call that runs no process: the protocol's share of
// BenchmarkBashTrue.
func BenchmarkTaskList(b *testing.B) {
	cs := connectB(b)
	defer testutil.CPUPerOp(b)()
	for b.Loop() {
		if res := callB(b, cs, "task_list", map[string]any{}); res.IsError {
			b.Fatal(textOf(res))
		}
	}
}
