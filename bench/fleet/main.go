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
	flag.BoolVar(&Direct, "direct", false, "clients call each Boris directly, not through the router (to tell the two apart)")
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

	// The first sandbox alone: start to first call, on a quiet machine.
	var alone []time.Duration
	for i := range 5 {
		sb, err := f.Add(1000 + i)
		if err != nil {
			return err
		}
		if err := f.Start(sb); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = f.Claim(cctx, sb)
		cancel()
		if err != nil {
			return err
		}
		alone = append(alone, sb.FirstCall)
		_ = f.Stop(sb, 15)
	}

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
	var active []int64
	for _, sb := range sbs {
		rss, _ := sb.RSS()
		active = append(active, rss)
	}

	perSandbox := float64(*clients) / float64(*n)
	fmt.Printf("fleet: %d Borises, each in its own network namespace, behind a router-contract proxy (timeout %s); %d concurrent stateless clients (%.0f workspaces a Boris) for %s on %d cores\n",
		*n, *timeout, *clients, perSandbox, elapsed.Round(time.Millisecond), numCPU())
	fmt.Printf("start to first tool call answered (ip netns exec, /init and bash true through the proxy): alone median %s (of %d), all %d at once median %s p99 %s max %s\n",
		pct(alone, 50), len(alone), *n, pct(together, 50), pct(together, 99), pct(together, 100))
	fmt.Printf("calls: %d in %s (%.0f/s), errors %d\n", len(bash)+len(view), elapsed.Round(time.Millisecond), float64(len(bash)+len(view))/elapsed.Seconds(), len(errs))
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
