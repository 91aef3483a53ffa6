package server

import (
	"bufio"
	"io"
	"log/slog"
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
	cfg := newConfig(b)
	cfg.Transport = "stdio"
	srv, err := New(&cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), os.Environ())
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.RunStdio(b.Context(), inR, outW) }()
	out := bufio.NewReader(outR)
	roundTrip := func(line string) string {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			b.Fatal(err)
		}
		reply, err := out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return reply
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true"}}}`
	defer selfCPUPerOp(b)()
	for b.Loop() {
		if reply := roundTrip(call); !strings.Contains(reply, `exit_code: 0`) {
			b.Fatalf("unexpected reply: %s", reply)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
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
