package server

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// BenchmarkStdioTTYRoundTrip is task_input's round trip to a waiting Python REPL over
// STDIO (print(1+1) typed, 2 and the prompt back), next to its floor measured in the same
// run: a minimal program that writes the same line to a pseudo-terminal's master and reads
// until the prompt is back. Calls alternate; the medians and their ratio are reported,
// and the medians of a task_list call and a ping made between them: what the protocol
// alone costs.
//
//	go test -run '^$' -bench StdioTTYRoundTrip -benchtime 200x ./internal/server
func BenchmarkStdioTTYRoundTrip(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Fatal("python3 is needed: ", err)
	}
	c := stdioPipes(b, os.Environ())
	roundTrip := func(line string) string {
		c.write(line + "\n")
		return c.read()
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	c.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	start := roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"exec python3 -q","tty":true,"run_in_background":true}}}`)
	if !strings.Contains(start, `waiting for input`) {
		b.Fatalf("REPL not ready: %s", start)
	}
	floor := newPtyFloor(b)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task_input","arguments":{"task_id":"task-1","input":"print(1+1)\n"}}}`
	list := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"task_list","arguments":{}}}`
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	var boris, raw, listed, pinged []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if reply := roundTrip(call); !strings.Contains(reply, `2\n\u003e\u003e\u003e `) {
			b.Fatalf("unexpected reply: %s", reply)
		}
		boris = append(boris, time.Since(t0))
		raw = append(raw, floor.roundTrip(b))
		t1 := time.Now()
		if reply := roundTrip(list); !strings.Contains(reply, `task-1`) {
			b.Fatalf("unexpected task_list reply: %s", reply)
		}
		listed = append(listed, time.Since(t1))
		t2 := time.Now()
		if reply := roundTrip(ping); !strings.Contains(reply, `"id":5`) {
			b.Fatalf("unexpected ping reply: %s", reply)
		}
		pinged = append(pinged, time.Since(t2))
	}
	b.ReportMetric(float64(median(listed).Microseconds())/1000, "task_list-median-ms")
	b.ReportMetric(float64(median(pinged).Microseconds())/1000, "ping-median-ms")
	mb, mr := median(boris), median(raw)
	b.ReportMetric(float64(mb.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "floor-median-ms")
	b.ReportMetric(float64(mb)/float64(mr), "x-floor")
	b.ReportMetric(float64(250*time.Millisecond)/float64(mb), "x-faster-than-250ms")
	if err := c.close(); err != nil {
		b.Fatal(err)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// ptyFloor is a Python REPL in a pseudo-terminal driven directly: what a round trip costs
// with nothing between the caller and the terminal.
type ptyFloor struct {
	master *os.File
	buf    []byte
}

func newPtyFloor(b *testing.B) *ptyFloor {
	cmd := exec.Command("python3", "-q")
	master, err := pty.Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = master.Close() })
	f := &ptyFloor{master: master, buf: make([]byte, 4096)}
	f.readUntil(b, []byte(">>> "))
	return f
}

func (f *ptyFloor) roundTrip(b *testing.B) time.Duration {
	t0 := time.Now()
	if _, err := f.master.WriteString("print(1+1)\n"); err != nil {
		b.Fatal(err)
	}
	f.readUntil(b, []byte("2\r\n>>> "))
	return time.Since(t0)
}

func (f *ptyFloor) readUntil(b *testing.B, want []byte) {
	var got []byte
	for !bytes.Contains(got, want) {
		n, err := f.master.Read(f.buf)
		if err != nil {
			b.Fatal(fmt.Errorf("reading the floor's terminal: %w (so far %q)", err, got))
		}
		got = append(got, f.buf[:n]...)
	}
}
