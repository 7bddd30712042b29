#!/bin/sh
# make bench: every benchmark section in tools/bench.d/, in name order.  Each section prints its
# figures, and where a peer exists (bubblewrap, find, a bare run) the ratio measured in the same run.
# Benchmarks measure; they never pass or fail on a time.
set -eu
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
export BUILD
here=$(cd "$(dirname "$0")" && pwd)
for s in "$here"/bench.d/*.sh; do
	[ -e "$s" ] || continue
	echo "== $(basename "$s" .sh)"
	sh "$s" || echo "   (section failed: exit $?)"
done
