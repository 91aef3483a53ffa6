#!/bin/sh
# Load benchmark for HTTP: sessions calling bash and view concurrently, at 8 and 32
# sessions. Reports calls/s, p99 latency and resident memory, and compares with the
# previous run (kept in bench/results/, which is not committed).
# Usage: bench/load.sh [COUNT]    (COUNT repetitions per case, default 5)
set -eu
cd "$(dirname "$0")/.."
count=${1:-5}
mkdir -p bench/results
prev=$(ls -t bench/results/load-*.txt 2>/dev/null | head -n 1 || true)
out=bench/results/load-$(date +%Y%m%d-%H%M%S).txt
go test -run '^$' -bench '^BenchmarkLoad$' -benchtime 1x -count "$count" ./internal/server | tee "$out"
if [ -n "$prev" ]; then
	echo
	echo "compared with $prev:"
	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$prev" "$out"
fi
