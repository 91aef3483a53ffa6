#!/bin/sh
# Make a tree of N copies of GOROOT/src in one git repository (35 copies: about 400,000
# files), with a branch "other" that differs from it in 20,000 files (or half the files
# of a smaller tree), and compare grep by scan, grep with the search index and ripgrep on
# it: five query classes in five states (cold, warm, after an edit, after sed -i on 100
# files, after git checkout of the other branch).
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
	git -C "$tree" init -q -b main
	git -C "$tree" add -A
	git -C "$tree" -c user.name=b -c user.email=b@b commit -qm tree
	n=$(git -C "$tree" ls-files '*.go' | wc -l)
	n=$((n / 2))
	[ "$n" -le 20000 ] || n=20000
	git -C "$tree" checkout -q -b other
	git -C "$tree" ls-files -z '*.go' | head -z -n "$n" | (cd "$tree" && xargs -0 sed -i '$a // changed on the other branch')
	git -C "$tree" -c user.name=b -c user.email=b@b commit -qam other
	git -C "$tree" checkout -q main
fi
echo "tree: $(git -C "$tree" ls-files | wc -l) files in $copies copies of GOROOT/src; other branch differs in $(git -C "$tree" diff --name-only main other | wc -l)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
BORIS_BENCH_INDEX_TREE=$tree go test ./internal/search -run '^$' -bench 'BenchmarkIndex$' -benchtime 1x -timeout 60m -v | grep -v '^goos\|^goarch\|^pkg\|^cpu'
