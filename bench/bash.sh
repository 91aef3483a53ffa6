#!/bin/sh
# What Boris adds to running a command: the bash tool running `true`, called over STDIO by
# a minimal MCP client, next to spawning /bin/bash -c true directly (medians, alternating).
# With -confined: what confining commands (--allow-dir with Landlock) adds to that call.
# Usage: bench/bash.sh [-n CALLS] [-command CMD] [-confined]
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/boris" ./cmd/boris
go run ./bench/bashbench -boris "$tmp/boris" "$@"
