// Command bashbench measures what Boris adds to running a command: it times the bash
// tool running `true`, called over STDIO, next to spawning `/bin/bash -c true` directly,
// and prints both with the difference and the ratio, along with a call that starts no
// process (task_list), which is the protocol's share.
//
// Usage: go run ./bench/bashbench -boris ./boris[,./other-boris] [-n 2000] [-command true]
//
// With several binaries, calls to each alternate too, to compare builds.
//
// With -confined, it measures instead what confinement adds, as a client sees it: each
// binary runs twice with --allow-dir set on a temporary directory, once with
// --confine-bash off and once confined (Landlock), and the bash calls to the two
// alternate, in one order and then the other.
//
// The client is deliberately minimal (one JSON-RPC line out, one line back, after the MCP
// handshake), so that its own cost stays out of the figure. The two kinds of run
// alternate, so that load on the machine touches both alike; medians are reported.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	boris := flag.String("boris", "", "paths of built boris binaries, comma-separated (required)")
	n := flag.Int("n", 2000, "timed calls of each kind")
	command := flag.String("command", "true", "the command to run")
	shell := flag.String("shell", "/bin/bash", "the shell spawned directly")
	confined := flag.Bool("confined", false, "measure what confining commands adds instead")
	flag.Parse()
	if *boris == "" {
		log.Fatal("-boris is required")
	}
	bash := request("bash", map[string]any{"command": *command})
	if *confined {
		for _, path := range strings.Split(*boris, ",") {
			confinement(path, bash, *n)
		}
		return
	}
	var clients []*client
	for _, path := range strings.Split(*boris, ",") {
		c, err := start(path)
		if err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		defer c.close()
		clients = append(clients, c)
	}

	noop := request("task_list", map[string]any{})
	direct := func() time.Duration {
		t := time.Now()
		if err := exec.Command(*shell, "-c", *command).Run(); err != nil {
			log.Fatal(err)
		}
		return time.Since(t)
	}
	for range 100 { // warm up
		for _, c := range clients {
			c.timeCall(bash)
			c.timeCall(noop)
		}
		direct()
	}
	viaBash := make([][]time.Duration, len(clients))
	viaNoop := make([][]time.Duration, len(clients))
	var spawned []time.Duration
	for range *n {
		for i, c := range clients {
			viaBash[i] = append(viaBash[i], c.timeCall(bash))
			viaNoop[i] = append(viaNoop[i], c.timeCall(noop))
		}
		spawned = append(spawned, direct())
	}
	md := median(spawned)
	fmt.Printf("%-58s %9s %9s %6s\n", "case (median of each)", "per call", "added", "ratio")
	fmt.Printf("%-58s %6.3f ms\n", fmt.Sprintf("%s -c %q, spawned directly", *shell, *command), ms(md))
	for i, c := range clients {
		if len(clients) > 1 {
			fmt.Println(c.cmd.Path + ":")
		}
		mb := median(viaBash[i])
		fmt.Printf("%-58s %6.3f ms %6.3f ms %5.2fx\n", fmt.Sprintf("bash tool %q over STDIO", *command), ms(mb), ms(mb-md), float64(mb)/float64(md))
		fmt.Printf("%-58s %6.3f ms\n", "a call that starts no process (task_list)", ms(median(viaNoop[i])))
	}
}

// confinement times the call bash on two servers of the binary path, both with
// --allow-dir, one with commands confined and one not, and prints what confinement adds.
func confinement(path string, bash []byte, n int) {
	dir, err := os.MkdirTemp("", "bashbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fence := []string{"--workdir", dir, "--allow-dir", dir}
	plain, err := start(path, append(fence, "--confine-bash", "off")...)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	defer plain.close()
	boxed, err := start(path, append(fence, "--confine-bash", "on")...)
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	defer boxed.close()
	for range 100 { // warm up; the first confined call also starts the session's launcher
		plain.timeCall(bash)
		boxed.timeCall(bash)
	}
	var tPlain, tBoxed, added []time.Duration
	for i := range n {
		var p, b time.Duration
		if i%2 == 0 {
			p, b = plain.timeCall(bash), boxed.timeCall(bash)
		} else {
			b, p = boxed.timeCall(bash), plain.timeCall(bash)
		}
		tPlain, tBoxed, added = append(tPlain, p), append(tBoxed, b), append(added, b-p)
	}
	fmt.Println(path + ":")
	fmt.Printf("%-58s %6.3f ms\n", "bash tool over STDIO, --allow-dir, --confine-bash off", ms(median(tPlain)))
	fmt.Printf("%-58s %6.3f ms\n", "bash tool over STDIO, --allow-dir, confined", ms(median(tBoxed)))
	fmt.Printf("%-58s %6.3f ms\n", "confinement adds (median of the paired differences)", ms(median(added)))
}

// request returns a tools/call request line.
func request(tool string, args map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args},
	})
	if err != nil {
		log.Fatal(err)
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// client speaks newline-delimited JSON-RPC to a boris process over its stdin and stdout.
type client struct {
	cmd   *exec.Cmd
	stdin io.Closer
	in    *bufio.Writer
	out   *bufio.Reader
}

func start(path string, flags ...string) (*client, error) {
	// Default flags, as users run it: the audit log (info level) goes to stderr, here
	// discarded.
	cmd := exec.Command(path, append([]string{"--transport", "stdio"}, flags...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &client{cmd: cmd, stdin: stdin, in: bufio.NewWriter(stdin), out: bufio.NewReaderSize(stdout, 1<<20)}
	if _, err := c.roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bashbench","version":"1"}}}`)); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *client) send(line []byte) error {
	c.in.Write(line)
	c.in.WriteByte('\n')
	return c.in.Flush()
}

// timeCall times one successful call.
func (c *client) timeCall(call []byte) time.Duration {
	t := time.Now()
	reply, err := c.roundTrip(call)
	d := time.Since(t)
	if err != nil {
		log.Fatal(err)
	}
	if strings.Contains(reply, `"isError":true`) || strings.Contains(reply, `"error":{`) {
		log.Fatalf("the call failed: %s", reply)
	}
	return d
}

// roundTrip sends a request and returns the next line that is not a notification.
func (c *client) roundTrip(line []byte) (string, error) {
	if err := c.send(line); err != nil {
		return "", err
	}
	for {
		reply, err := c.out.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("reading the reply: %w", err)
		}
		if !strings.Contains(reply, `"method":"notifications/`) {
			return reply, nil
		}
	}
}

// close ends the session the way a client should, by closing boris's stdin, so that it
// cleans up after itself; it is killed if it has not exited within a few seconds.
func (c *client) close() {
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}
