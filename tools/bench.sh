#!/bin/sh
# make bench: the benchmark sections in tools/bench.d/, in name order.  Each section prints its
# figures, and where a peer exists (bubblewrap, the kernel's floor, find, a bare run) the ratio
# measured in the same run.  Benchmarks measure; they never pass or fail on a time.
#
# A section is any tools/bench.d/*.sh: a new one is picked up without editing this file.  One that
# takes more than a minute or so says so with a line `# bench: long`, and runs only with
# BENCH_LONG=1 (the sections below in LONG predate the marker).  Sections may add lines to the
# summary table printed at the end: `bench_run -t TITLE ...` appends its medians to $BENCH_TABLE.
#
#   BENCH_N=30        runs per start-up figure (a section scales its other counts from it)
#   BENCH_LONG=1      the long sections too (a whole make bench then takes an hour or more)
#   BENCH_ONLY='00-table timing'   only the sections whose names contain one of these words
set -eu
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
BENCH_N=${BENCH_N:-30}
BENCH_TABLE=$(mktemp /tmp/dshbox-bench-table.XXXXXX)
export BUILD BENCH_N BENCH_TABLE
trap 'rm -f "$BENCH_TABLE"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
LONG="broker concurrent remask run runner serve serve-write subtree syscall"

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "dshbox bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs, uid $(id -u), BENCH_N=$BENCH_N"
echo "load average before: $(load)"
t0=$(date +%s)
for s in "$here"/bench.d/*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	if [ -n "${BENCH_ONLY:-}" ]; then
		hit=false
		for w in $BENCH_ONLY; do
			case "$name" in *"$w"*) hit=true ;; esac
		done
		$hit || continue
	fi
	long=false
	grep -q '^# bench: long' "$s" && long=true
	for l in $LONG; do [ "$name" = "$l" ] && long=true; done
	if $long && [ "${BENCH_LONG:-0}" != 1 ] && [ -z "${BENCH_ONLY:-}" ]; then
		echo "== $name: long, skipped (BENCH_LONG=1 or BENCH_ONLY=$name runs it)"
		continue
	fi
	echo "== $name"
	sh "$s" || echo "   (section failed: exit $?)"
done

# The summary: each line's first command against every other, and the second (the peer) against
# the last (bare or the floor) when there are three or more.
if [ -s "$BENCH_TABLE" ]; then
	echo
	echo "== summary (medians, ms; ratios of medians measured in this run)"
	awk -F '\t' '{
		n = NF - 1
		for (i = 2; i <= NF; i++) { split($i, kv, "="); lab[i - 1] = kv[1]; ms[i - 1] = kv[2] }
		line = sprintf("   %-38s %s %.2f", $1, lab[1], ms[1])
		for (k = 2; k <= n; k++)
			if (ms[k] > 0) line = line sprintf("   %.2fx %s", ms[1] / ms[k], lab[k])
		if (n >= 3 && ms[n] > 0) line = line sprintf("   (%s %.2fx %s)", lab[2], ms[2] / ms[n], lab[n])
		print line
	}' "$BENCH_TABLE"
fi
echo "load average after: $(load); $(($(date +%s) - t0)) s"
