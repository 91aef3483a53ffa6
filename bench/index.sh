#!/bin/sh
# Make a tree of N copies of GOROOT/src in one git repository (35 copies: about 400,000
# files) and compare grep by scan, grep with the search index and ripgrep on it.
# Installs ripgrep with apt-get when it is missing.
# Usage: bench/index.sh [COPIES] [DIR]   (defaults: 4, a temporary directory)
set -eu
cd "$(dirname "$0")/.."
copies=${1:-4}
tree=${2:-}
if ! command -v rg >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get install -y ripgrep
fi
if [ -z "$tree" ]; then
	tree=$(mktemp -d)
	trap 'rm -rf "$tree"' EXIT
fi
if [ ! -d "$tree/.git" ]; then
	src=$(go env GOROOT)/src
	i=0
	while [ "$i" -lt "$copies" ]; do
		mkdir -p "$tree/c$i" && cp -r "$src/." "$tree/c$i/"
		i=$((i + 1))
	done
	git -C "$tree" init -q && git -C "$tree" add -A && git -C "$tree" -c user.name=b -c user.email=b@b commit -qm tree
fi
echo "tree: $(git -C "$tree" ls-files | wc -l) files in $copies copies of GOROOT/src"
BORIS_BENCH_INDEX_TREE=$tree go test ./internal/search -run '^$' -bench 'BenchmarkIndex' -benchtime 5x -timeout 60m
