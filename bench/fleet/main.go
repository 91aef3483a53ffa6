// Command fleet runs a fleet of Borises on one machine behind a proxy that keeps
// agent-sandbox's router contract, and measures what a sandbox's daemon costs: the time
// from a process's start to its first tool call answered, its memory idle and with
// sessions, and the latency of bash and view calls from many concurrent stateless clients.
// It needs root (each Boris gets a network namespace of its own, with a pod-like address on
// a bridge) and sends traffic only to loopback and to the namespaces it makes. It tests
// Boris's side of the router's contract; it is not a sandbox engine.
//
// Usage: go build -o /tmp/boris ./cmd/boris && go run ./bench/fleet -boris /tmp/boris [-n 50] [-clients 200] [-duration 30s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	boris := flag.String("boris", "", "path of a built boris binary (required)")
	n := flag.Int("n", 50, "sandboxes")
	clients := flag.Int("clients", 200, "concurrent stateless clients, spread over the sandboxes")
	duration := flag.Duration("duration", 30*time.Second, "how long the clients call")
	timeout := flag.Duration("router-timeout", 180*time.Second, "the router's --proxy-timeout")
	stream := flag.Bool("stream-bodies", false, "the router forwards request bodies as they arrive, as agent-sandbox's Go router does (see sandboxrouter.Router.StreamBodies)")
	direct := flag.Bool("direct", false, "clients call each Boris directly, not through the router (to tell the two apart)")
	flag.Parse()
	if *boris == "" || os.Geteuid() != 0 {
		return errors.New("usage: run as root with -boris PATH")
	}
	bin, err := filepath.Abs(*boris)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "boris-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f, err := NewFleet(bin, dir, *timeout)
	if err != nil {
		return err
	}
	defer f.Close()
	f.router.StreamBodies = *stream
	ctx := context.Background()

	// One sandbox at a time: start to first call, straight to the pod and through the
	// router (whose dial retries back off while the pod is not listening yet), next to the
	// floor of starting a program in a namespace at all.
	var alone, aloneRouted, floor, listening []time.Duration
	for i := range 15 {
		sb, err := f.Add(1000 + i)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := exec.Command("nsenter", "--net=/run/netns/"+sb.NetNS, "/bin/true").Run(); err != nil {
			return err
		}
		floor = append(floor, time.Since(t0))
		Direct = i%2 == 0 || *direct
		if err := f.Start(sb); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = f.Claim(cctx, sb)
		cancel()
		if err != nil {
			return err
		}
		if Direct {
			alone = append(alone, sb.FirstCall)
			listening = append(listening, sb.Listening)
		} else {
			aloneRouted = append(aloneRouted, sb.FirstCall)
		}
		_ = f.Stop(sb, 15)
	}
	Direct = *direct

	// Calls one at a time, before the load: the floor of the latencies below.
	var quiet = map[string][]time.Duration{}
	sbs := make([]*Sandbox, *n)
	var claimErr error
	var claimOnce sync.Once
	for i := range sbs {
		if sbs[i], err = f.Add(i); err != nil {
			return err
		}
		var b strings.Builder
		for l := range 200 {
			fmt.Fprintf(&b, "line %d of a file the clients view\n", l)
		}
		if err := os.WriteFile(filepath.Join(sbs[i].Dir, "workspace", "file.txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	for _, sb := range sbs {
		if err := f.Start(sb); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	for _, sb := range sbs {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := f.Claim(cctx, sb); err != nil {
				claimOnce.Do(func() { claimErr = err })
			}
		})
	}
	wg.Wait()
	if claimErr != nil {
		return claimErr
	}
	qc := f.Client(sbs[0], "quiet")
	for k := range 60 {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{{"bash", map[string]any{"command": "true"}}, {"view", map[string]any{"path": "file.txt"}}} {
			t0 := time.Now()
			if _, isErr, err := qc.Tool(ctx, c.tool, c.args); err != nil || isErr {
				return fmt.Errorf("quiet %s: %v", c.tool, err)
			}
			if k >= 10 {
				quiet[c.tool] = append(quiet[c.tool], time.Since(t0))
			}
		}
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			return err
		}
		if k >= 10 {
			quiet["spawn"] = append(quiet["spawn"], time.Since(t0))
		}
	}
	var together []time.Duration
	var idle []int64
	for _, sb := range sbs {
		together = append(together, sb.FirstCall)
		rss, _ := sb.RSS()
		idle = append(idle, rss)
	}

	// The load: each client calls bash true and view in turn, in its own workspace.
	type sample struct {
		tool string
		d    time.Duration
	}
	var mu sync.Mutex
	var bash, view []time.Duration
	var errs []string
	cpu := func() (self, children time.Duration) {
		for _, sb := range sbs {
			s, c, _ := sb.CPU()
			self, children = self+s, children+c
		}
		return self, children
	}
	self0, children0 := cpu()
	lctx, cancel := context.WithTimeout(ctx, *duration)
	start := time.Now()
	for c := range *clients {
		sb := sbs[c%len(sbs)]
		cl := f.Client(sb, fmt.Sprintf("c%d", c))
		wg.Go(func() {
			var mine []sample
			var bad []string
			for k := 0; lctx.Err() == nil; k++ {
				tool, args := "bash", map[string]any{"command": "true"}
				if k%2 == 1 {
					tool, args = "view", map[string]any{"path": "file.txt"}
				}
				t0 := time.Now()
				_, isErr, err := cl.Tool(context.Background(), tool, args)
				d := time.Since(t0)
				if err != nil || isErr {
					if lctx.Err() == nil || err == nil {
						bad = append(bad, fmt.Sprintf("%s %s at %s after %s: %v (isError %v)", sb.Name, tool, t0.Sub(start).Round(time.Millisecond), d.Round(time.Millisecond), err, isErr))
					}
					continue
				}
				mine = append(mine, sample{tool, d})
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range mine {
				if s.tool == "bash" {
					bash = append(bash, s.d)
				} else {
					view = append(view, s.d)
				}
			}
			errs = append(errs, bad...)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cancel()
	self1, children1 := cpu()
	var active []int64
	for _, sb := range sbs {
		rss, _ := sb.RSS()
		active = append(active, rss)
	}

	perSandbox := float64(*clients) / float64(*n)
	fmt.Printf("fleet: %d Borises, each in its own network namespace, behind a router-contract proxy (timeout %s); %d concurrent stateless clients (%.0f workspaces a Boris) for %s on %d cores\n",
		*n, *timeout, *clients, perSandbox, elapsed.Round(time.Millisecond), numCPU())
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("machine load average at the end: %s", load)
	fmt.Printf("start to first tool call answered (the process started in its namespace, POST /init, bash true):\n")
	fmt.Printf("  one at a time, straight to the pod: median %s (n=%d; /init answered after %s); through the router: median %s (n=%d); floor (nsenter /bin/true): median %s\n",
		pct(alone, 50), len(alone), pct(listening, 50), pct(aloneRouted, 50), len(aloneRouted), pct(floor, 50))
	fmt.Printf("  all %d at once, through the router: median %s p99 %s\n", *n, pct(together, 50), pct(together, 99))
	fmt.Printf("one call at a time before the load, through the router: bash true median %s, view median %s; floor (spawn /bin/true) median %s: bash true is %.1fx the floor\n",
		pct(quiet["bash"], 50), pct(quiet["view"], 50), pct(quiet["spawn"], 50), float64(pct(quiet["bash"], 50))/float64(pct(quiet["spawn"], 50)))
	fmt.Printf("calls: %d in %s (%.0f/s), errors %d\n", len(bash)+len(view), elapsed.Round(time.Millisecond), float64(len(bash)+len(view))/elapsed.Seconds(), len(errs))
	if calls := len(bash) + len(view); calls > 0 {
		fmt.Printf("processor time per call: Boris %s, the commands it ran (bash true, its shell) %s per bash call\n",
			((self1 - self0) / time.Duration(calls)).Round(time.Microsecond), ((children1 - children0) / time.Duration(max(len(bash), 1))).Round(time.Microsecond))
	}
	fmt.Printf("bash true: n=%d p50 %s p90 %s p99 %s max %s\n", len(bash), pct(bash, 50), pct(bash, 90), pct(bash, 99), pct(bash, 100))
	fmt.Printf("view:      n=%d p50 %s p90 %s p99 %s max %s\n", len(view), pct(view, 50), pct(view, 90), pct(view, 99), pct(view, 100))
	fmt.Printf("RSS idle (claimed, one call): median %s max %s; after the load (%.0f workspaces each): median %s max %s; per workspace ~%s\n",
		mib(pctI(idle, 50)), mib(pctI(idle, 100)), perSandbox, mib(pctI(active, 50)), mib(pctI(active, 100)),
		mib(int64(float64(pctI(active, 50)-pctI(idle, 50))/perSandbox)))
	for i, e := range errs {
		if i == 5 {
			break
		}
		fmt.Println("error:", e)
	}
	if len(errs) > 0 {
		for _, sb := range sbs {
			if sb.stderr.Len() > 0 {
				fmt.Printf("%s stderr:\n%.3000s\n", sb.Name, sb.stderr.String())
			}
		}
		return fmt.Errorf("%d calls failed", len(errs))
	}
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return s[max(i, 0)].Round(10 * time.Microsecond)
}

func pctI(v []int64, p int) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return s[max(i, 0)]
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(1, strings.Count(string(b), "processor\t:"))
}
