// Command compare measures Boris next to a minimal MCP server built on the Go SDK
// (bench/minimal) doing the cheapest version of the same operations, and prints each
// figure for both with the ratio Boris ÷ minimal:
//
//   - cold start: spawn → the reply to tools/list over STDIO, sent as clients send it
//     (after the reply to initialize), and with the first three messages written at once;
//   - peak RSS after N calls each of bash `true`, view of a small file and str_replace on
//     a small file over STDIO;
//   - peak RSS after HTTP load: S concurrent sessions each making N calls (bash, view);
//   - peak RSS after one view of a 10 MB file over STDIO;
//   - time of one str_replace on a small file over STDIO;
//   - HTTP throughput: 8 and 32 sessions calling bash `true` for a few seconds, the calls
//     answered per second and the server's own CPU time per call.
//
// Runs of the two servers alternate, each going first in turn (A/B, B/A), and medians are
// reported, so that load on the machine touches both alike.
//
// Usage: go run ./bench/compare -boris ./boris -minimal ./minimal [-rounds 5] [-n 500]
// (bench/compare.sh builds both and runs it.)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type server struct {
	name string
	path string
	args []string // for STDIO
	http func(addr string) []string
}

var dir string // the files the servers work on

func main() {
	boris := flag.String("boris", "", "path of the built boris binary (required)")
	minimal := flag.String("minimal", "", "path of the built bench/minimal binary (required)")
	rounds := flag.Int("rounds", 5, "alternating runs of each memory case")
	starts := flag.Int("starts", 30, "alternating cold starts")
	n := flag.Int("n", 500, "calls of each operation per run")
	sessions := flag.Int("sessions", 8, "concurrent HTTP sessions")
	loadTime := flag.Duration("load-time", 3*time.Second, "how long each HTTP throughput run lasts, after a second of warm-up")
	only := flag.String("only", "", "run only the cases whose name contains this")
	flag.Parse()
	if *boris == "" || *minimal == "" {
		log.Fatal("-boris and -minimal are required")
	}
	var err error
	dir, err = os.MkdirTemp("", "compare")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	must(os.WriteFile(filepath.Join(dir, "small.txt"), []byte(strings.Repeat("some text of a line\n", 50)+"alpha\n"), 0o644))
	// Just under Boris's default --max-file-size, the largest file a whole view takes.
	big := make([]byte, 0, 10_000_000)
	for i := 0; len(big) < 9_900_000; i++ {
		big = fmt.Appendf(big, "line %d of a ten megabyte file, with some words on it\n", i)
	}
	must(os.WriteFile(filepath.Join(dir, "big.txt"), big, 0o644))

	servers := []server{ // boris first: the ratio is boris ÷ minimal
		{name: "boris", path: *boris, args: []string{"--transport", "stdio", "--workdir", dir, "--log-level", "error"},
			http: func(addr string) []string {
				host, port, _ := net.SplitHostPort(addr)
				return []string{"--transport", "http", "--host", host, "--port", port, "--workdir", dir, "--log-level", "error"}
			}},
		{name: "minimal", path: *minimal, http: func(addr string) []string { return []string{"-http", addr} }},
	}
	fmt.Printf("load average at start: %s\n", loadavg())
	fmt.Printf("%-44s %12s %12s %7s\n", "case (median)", "boris", "minimal", "ratio")
	report := func(name, unit string, f func(s server) float64, runs int) {
		if !strings.Contains(name, *only) {
			return
		}
		res := make([][]float64, len(servers))
		for r := range runs {
			for k := range servers {
				i := (r + k) % len(servers) // each goes first in turn
				res[i] = append(res[i], f(servers[i]))
			}
		}
		a, b := median(res[0]), median(res[1])
		fmt.Printf("%-44s %9.2f %-2s %9.2f %-2s %6.2f×\n", name, a, unit, b, unit, a/b)
	}
	report("cold start (spawn → tools/list)", "ms", func(s server) float64 { return coldStart(s, false) }, *starts)
	report("cold start, all three messages at once", "ms", func(s server) float64 { return coldStart(s, true) }, *starts)
	report(fmt.Sprintf("peak RSS, %d calls of each op, STDIO", *n), "MiB", func(s server) float64 {
		c := startStdio(s)
		defer c.close()
		small := filepath.Join(dir, "small.txt")
		for i := range *n {
			c.call("bash", map[string]any{"command": "true"})
			c.call("view", map[string]any{"path": small})
			old, new := "alpha", "beta"
			if i%2 == 1 {
				old, new = new, old
			}
			c.call("str_replace", map[string]any{"path": small, "old_str": old, "new_str": new})
		}
		return c.peakRSS()
	}, *rounds)
	report(fmt.Sprintf("peak RSS, HTTP, %d sessions × %d calls", *sessions, *n), "MiB", func(s server) float64 {
		return httpLoad(s, dir, *sessions, *n)
	}, *rounds)
	report("peak RSS, view of a 9.9 MB file, STDIO", "MiB", func(s server) float64 {
		c := startStdio(s)
		defer c.close()
		c.call("view", map[string]any{"path": filepath.Join(dir, "big.txt")})
		return c.peakRSS()
	}, *rounds)
	for _, n := range []int{8, 32} {
		name := fmt.Sprintf("HTTP bash true, %d sessions", n)
		if !strings.Contains(name, *only) {
			continue
		}
		var rate, cpu [2][]float64
		for r := range *rounds {
			for k := range servers {
				i := (r + k) % len(servers)
				a, b := throughput(servers[i], n, *loadTime)
				rate[i], cpu[i] = append(rate[i], a), append(cpu[i], b)
			}
		}
		a, b := median(rate[0]), median(rate[1])
		fmt.Printf("%-44s %9.0f /s %9.0f /s %6.2f×\n", name+", calls", a, b, a/b)
		a, b = median(cpu[0]), median(cpu[1])
		fmt.Printf("%-44s %9.3f ms %9.3f ms %6.2f×\n", name+", CPU a call", a, b, a/b)
	}
	// Boris writes crash-safe (the data reaches the disk before the rename), so the time
	// of an edit is compared with the minimal server both writing plainly and so. The
	// three servers' calls alternate one by one: the time of a sync follows the disk's
	// load from moment to moment.
	if strings.Contains("str_replace on a small file", *only) {
		strReplace([]server{servers[0], servers[1], {name: "minimal-sync", path: *minimal, args: []string{"-sync"}}}, 200**rounds)
	}
	fmt.Printf("load average at end: %s\n", loadavg())
}

func strReplace(servers []server, n int) {
	var clients []*client
	var paths []string
	for _, s := range servers {
		c := startStdio(s)
		defer c.close()
		p := filepath.Join(dir, "edit-"+s.name+".txt")
		must(os.WriteFile(p, []byte(strings.Repeat("some text of a line\n", 50)+"alpha\n"), 0o644))
		c.call("view", map[string]any{"path": p}) // Boris edits only what was viewed
		clients, paths = append(clients, c), append(paths, p)
	}
	d := make([][]float64, len(servers))
	for i := range n + 20 {
		old, new := "alpha", "beta"
		if i%2 == 1 {
			old, new = new, old
		}
		for j, c := range clients {
			t := time.Now()
			c.call("str_replace", map[string]any{"path": paths[j], "old_str": old, "new_str": new})
			if i >= 20 { // warmed up
				d[j] = append(d[j], float64(time.Since(t).Microseconds())/1000)
			}
		}
	}
	a := median(d[0])
	for j := 1; j < len(servers); j++ {
		b := median(d[j])
		fmt.Printf("%-44s %9.2f ms %9.2f ms %6.2f×\n", "str_replace on a small file vs "+servers[j].name, a, b, a/b)
	}
}

// client speaks MCP over a server's STDIO with the fewest moving parts: one JSON-RPC line
// out, lines in until the reply with the same id.
type client struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func spawn(s server) *client {
	cmd := exec.Command(s.path, s.args...)
	in, err := cmd.StdinPipe()
	must(err)
	out, err := cmd.StdoutPipe()
	must(err)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	return &client{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compare","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n"

func startStdio(s server) *client {
	c := spawn(s)
	c.send(initialize)
	c.wait(0)
	return c
}

// coldStart times spawning s and getting its tool list as clients do: initialize, and once
// it is answered, initialized and tools/list. At once, the three are written together.
func coldStart(s server, atOnce bool) float64 {
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}` + "\n"
	t := time.Now()
	c := spawn(s)
	if atOnce {
		c.send(initialize + list)
	} else {
		init, rest, _ := strings.Cut(initialize, "\n")
		c.send(init + "\n")
		c.wait(0)
		c.send(rest + list)
	}
	c.wait(1)
	d := time.Since(t)
	c.close()
	return float64(d.Microseconds()) / 1000
}

func (c *client) send(s string) {
	if _, err := io.WriteString(c.in, s); err != nil {
		log.Fatal(err)
	}
}

func (c *client) wait(id int) []byte {
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			log.Fatalf("%s: %v", c.cmd.Path, err)
		}
		var m struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == id {
			if m.Error != nil {
				log.Fatalf("%s: %s", c.cmd.Path, m.Error)
			}
			return line
		}
	}
}

func (c *client) call(tool string, args map[string]any) {
	c.id++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	must(err)
	c.send(string(b) + "\n")
	line := c.wait(c.id)
	if strings.Contains(string(line), `"isError":true`) {
		log.Fatalf("%s: %s failed: %.300s", c.cmd.Path, tool, line)
	}
}

func (c *client) peakRSS() float64 { return peakRSS(c.cmd.Process.Pid) }

func (c *client) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// httpLoad starts s on HTTP and runs sessions concurrent sessions, each making n calls
// alternating bash `true` and a view of a small file, and returns s's peak RSS.
func httpLoad(s server, dir string, sessions, n int) float64 {
	addr, pid, stop := startHTTP(s)
	defer stop()
	forSessions(addr, sessions, func(cs *mcp.ClientSession, i int) bool {
		p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}}
		if i%2 == 1 {
			p = &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": filepath.Join(dir, "small.txt")}}
		}
		call(s, cs, p)
		return i+1 < n
	})
	return peakRSS(pid)
}

// throughput starts s on HTTP and has sessions concurrent sessions call bash `true` as fast
// as they can for d, after a warm-up; it returns the calls answered per second and the
// server's CPU time per call, in milliseconds.
func throughput(s server, sessions int, d time.Duration) (perSecond, cpuMS float64) {
	addr, pid, stop := startHTTP(s)
	defer stop()
	var calls atomic.Int64
	var measuring atomic.Bool
	var cpu0 float64
	var t0 time.Time
	end := time.Now().Add(d + time.Second)
	go func() { // the first second warms up
		time.Sleep(time.Second)
		cpu0, t0 = cpuTime(pid), time.Now()
		measuring.Store(true)
	}()
	forSessions(addr, sessions, func(cs *mcp.ClientSession, _ int) bool {
		call(s, cs, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
		if measuring.Load() {
			calls.Add(1)
		}
		return time.Now().Before(end)
	})
	elapsed, cpu := time.Since(t0).Seconds(), cpuTime(pid)-cpu0
	return float64(calls.Load()) / elapsed, cpu * 1000 / float64(calls.Load())
}

// startHTTP starts s on HTTP on a free port and waits until it listens.
func startHTTP(s server) (addr string, pid int, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	addr = ln.Addr().String()
	ln.Close()
	cmd := exec.Command(s.path, s.http(addr)...)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	for i := 0; ; i++ { // until it listens
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
			break
		}
		if i > 500 {
			stop()
			log.Fatalf("%s: not listening on %s", s.path, addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return addr, cmd.Process.Pid, stop
}

// forSessions connects sessions clients to addr at once and has each call next, with its
// own count of calls made, until next returns false.
func forSessions(addr string, sessions int, next func(cs *mcp.ClientSession, i int) bool) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for range sessions {
		wg.Go(func() {
			cl := mcp.NewClient(&mcp.Implementation{Name: "compare", Version: "1"}, nil)
			cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
			if err != nil {
				log.Fatalf("%s: %v", addr, err)
			}
			defer cs.Close()
			for i := 0; next(cs, i); i++ {
			}
		})
	}
	wg.Wait()
}

// call makes one tool call and ends the program if it fails.
func call(s server, cs *mcp.ClientSession, p *mcp.CallToolParams) {
	r, err := cs.CallTool(context.Background(), p)
	if err != nil || r.IsError {
		log.Fatalf("%s: %s: %v %v", s.path, p.Name, err, r)
	}
}

// cpuTime reads the user and system time a process used so far, in seconds.
func cpuTime(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// peakRSS reads a process's high-water resident set size, in MiB.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			must(err)
			return float64(kb) / 1024
		}
	}
	log.Fatal("no VmHWM")
	return 0
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
