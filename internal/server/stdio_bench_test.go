package server

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStdioBashTrue is the server's side of a `bash true` call over STDIO, with a
// client that only writes a line and reads one, so that a CPU profile shows the server:
//
//	go test -run '^$' -bench StdioBashTrue -benchtime 3000x -cpuprofile cpu.out ./internal/server
//
// bench/bashbench measures the same over a real process boundary, next to a raw spawn.
func BenchmarkStdioBashTrue(b *testing.B) {
	c := stdioPipes(b, os.Environ())
	roundTrip := func(line string) string {
		c.write(line + "\n")
		return c.read()
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	c.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true"}}}`
	defer selfCPUPerOp(b)()
	for b.Loop() {
		if reply := roundTrip(call); !strings.Contains(reply, `exit_code: 0`) {
			b.Fatalf("unexpected reply: %s", reply)
		}
	}
	if err := c.close(); err != nil {
		b.Fatal(err)
	}
}

// selfCPUPerOp reports the CPU time this process spent per op, children excluded: less
// noisy than wall time on a shared machine.
func selfCPUPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/float64(b.N), "self-cpu-µs/op")
	}
}

// BenchmarkLineFilterLargeLine passes one 16 MB message through the line filter, read 64 kB
// at a time as a pipe gives it: each read is searched for the line's end once, rather than
// the whole line so far at every read.
func BenchmarkLineFilterLargeLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/x","params":{"x":"` + strings.Repeat("y", 16<<20) + `"}}` + "\n")
	out := make([]byte, 1<<20)
	for b.Loop() {
		got := 0
		f := &lineFilter{r: &chunkReader{b: line, n: 64 << 10}, accept: func(int) {},
			reject: func(_ json.RawMessage, _ int, msg string) { b.Fatal(msg) }}
		for {
			n, err := f.Read(out)
			got += n
			if err != nil {
				break
			}
		}
		if got != len(line) {
			b.Fatalf("read %d bytes of %d", got, len(line))
		}
	}
	b.SetBytes(int64(len(line)))
}

// chunkReader reads b at most n bytes at a time.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}
