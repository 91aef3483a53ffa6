#!/bin/sh
# Time the checkpoints' metadata walk (BenchmarkWalk) on a tree of exactly FILES files
# (default 46,000, the size its target is stated for), made of whole copies of GOROOT and
# the first files, by name, of one more.
# Usage: bench/walk.sh [FILES] [DIR] [go test flags...]   (defaults: 46000, a temporary directory)
set -eu
cd "$(dirname "$0")/.."
files=${1:-46000}
tree=${2:-}
[ $# -gt 2 ] && shift 2 || set --
if [ -z "$tree" ]; then
	tree=$(mktemp -d)
	trap 'rm -rf "$tree"' EXIT
fi
if [ ! -e "$tree/.complete" ]; then
	goroot=$(go env GOROOT)
	per=$(find "$goroot" -type f | wc -l)
	want=$((files - 1)) # and the marker .complete
	i=1
	while [ $((i * per)) -le "$want" ]; do
		cp -a "$goroot" "$tree/copy$i"
		i=$((i + 1))
	done
	rest=$((want - (i - 1) * per))
	if [ "$rest" -gt 0 ]; then
		cp -a "$goroot" "$tree/copy$i"
		(cd "$tree/copy$i" && find . -type f | LC_ALL=C sort | tail -n +$((rest + 1)) | xargs rm -f &&
			find . -type d -empty -delete)
	fi
	touch "$tree/.complete"
	echo "$(find "$tree" -type f | wc -l) files in $tree"
fi
BORIS_BENCH_TREES=$tree go test -run '^$' -bench 'BenchmarkWalk$' -benchtime 20x -count 3 "$@" ./internal/checkpoint
