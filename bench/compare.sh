#!/bin/sh
# Boris next to a minimal Go SDK server (bench/minimal): cold start, peak memory after
# STDIO calls, after HTTP load and after viewing a 10 MB file, and the time of a small
# str_replace. Runs alternate between the two; medians are printed with the ratio.
# Usage: bench/compare.sh [flags of bench/compare, e.g. -rounds 7 -n 500]
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/boris" ./cmd/boris
go build -o "$tmp/minimal" ./bench/minimal
go run ./bench/compare -boris "$tmp/boris" -minimal "$tmp/minimal" "$@"
