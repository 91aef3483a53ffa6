#!/bin/sh
# Compare Boris's grep and find (called over MCP STDIO) with ripgrep and fd on a copy of
# GOROOT/src, and print a Markdown table for docs/performance.md.
# Installs ripgrep and fd-find with apt-get when they are missing.
# Usage: bench/search.sh [-runs N] [-corpus DIR] [-index] [-cache-dir DIR] [-scan]
# (-index waits until grep answers from the search index: for a big tree, such as the one
# bench/index.sh makes; -scan turns the index off, so that every search reads every file)
set -eu
cd "$(dirname "$0")/.."

need=""
command -v rg >/dev/null 2>&1 || need="$need ripgrep"
command -v fdfind >/dev/null 2>&1 || command -v fd >/dev/null 2>&1 || need="$need fd-find"
command -v git >/dev/null 2>&1 || need="$need git"
if [ -n "$need" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update
	# shellcheck disable=SC2086
	$sudo apt-get install -y $need
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/boris" ./cmd/boris
go run ./bench/searchbench -boris "$tmp/boris" "$@"
