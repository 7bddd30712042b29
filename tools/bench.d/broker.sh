#!/bin/sh
# The runtime broker (SPEC 3.12) on against runtimeBroker: off, in the same run: open+read+close of a
# file (not brokered: the filter's cost on a reader), ns per call, minimum over repetitions that
# alternate the two; `tar x` of 10,000 small files (every create, mkdir and utimensat brokered),
# medians of interleaved runs; building this project (make -j2 all), broker on, off and bare.
set -eu
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd) # before the cd below: $0 may be relative
D="$BUILD/dshbox"
REPS=${DSHBOX_BENCH_REPS:-9}
ITERS=${DSHBOX_BENCH_ITERS:-20000}
C=/var/tmp/dshbox-bench-cache-$(id -u)
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
cd "$S"
printf 'runtimeBroker: true\n' > "$S/on.yml"
printf 'runtimeBroker: false\nallowDegraded: true\n' > "$S/off.yml"
P=/usr/lib/os-release
[ -e "$P" ] || P=/etc/passwd
echo "-- open+read+close of $P, ns per call (minimum of $REPS x $ITERS)"
r=0
: > "$S/orc"
while [ $r -lt "$REPS" ]; do
	printf '%s %s %s\n' "$("$BUILD/bench/bench_syscall" orc "$ITERS" "$P")" \
		"$("$D" run --config "$S/on.yml" --workspace "$S" -- "$BUILD/bench/bench_syscall" orc "$ITERS" "$P")" \
		"$("$D" run --config "$S/off.yml" --workspace "$S" -- "$BUILD/bench/bench_syscall" orc "$ITERS" "$P" 2>/dev/null)" >> "$S/orc"
	r=$((r + 1))
done
awk 'NR == 1 { a = $1; b = $2; c = $3 } { if ($1 < a) a = $1; if ($2 < b) b = $2; if ($3 < c) c = $3 }
	END { printf "   bare %.1f   broker on %.1f   broker off %.1f   on / off = %.3f   on / bare = %.3f\n", a, b, c, b / c, b / a }' "$S/orc"

echo "-- the same, the filters alone on a bare process: dshbox's deny filter, joined with the broker's, and"
echo "   one filter that does nothing but read an open's flags (ns per call, minimum of $REPS x $ITERS)"
r=0
: > "$S/flt"
while [ $r -lt "$REPS" ]; do
	printf '%s %s %s %s\n' "$("$BUILD/bench/bench_syscall" orc "$ITERS" "$P")" \
		"$("$BUILD/bench/bench_syscall" --seccomp orc "$ITERS" "$P")" \
		"$("$BUILD/bench/bench_syscall" --broker orc "$ITERS" "$P")" \
		"$("$BUILD/bench/bench_syscall" --floor orc "$ITERS" "$P")" >> "$S/flt"
	r=$((r + 1))
done
awk 'NR == 1 { a = $1; b = $2; c = $3; d = $4 } { if ($1 < a) a = $1; if ($2 < b) b = $2; if ($3 < c) c = $3; if ($4 < d) d = $4 }
	END { printf "   bare %.1f   deny %.1f   joined %.1f   floor %.1f   joined / deny = %.3f   floor / deny = %.3f\n", a, b, c, d, c / b, d / b }' "$S/flt"

echo "-- tar x of 10,000 small files inside the workspace"
T="$C/small10k.tar"
if [ ! -e "$T" ]; then
	mkdir -p "$C" "$S/src"
	d=0
	while [ $d -lt 100 ]; do
		mkdir "$S/src/d$d"
		seq -f "$S/src/d$d/f%g" 0 99 | xargs -n 100 sh -c 'for f; do echo "$f" > "$f"; done' sh
		d=$((d + 1))
	done
	tar cf "$T.tmp" -C "$S/src" . && mv "$T.tmp" "$T"
	rm -rf "$S/src"
fi
printf 'rm -rf "$1"; mkdir "$1"; exec tar xf "$2" -C "$1"\n' > "$S/x.sh"
"$BUILD/bench/bench_run" "${DSHBOX_BENCH_TAR_RUNS:-7}" broker-on "$D run --config $S/on.yml --workspace $S -- sh $S/x.sh $S/x $T" \
	broker-off "$D run --config $S/off.yml --workspace $S -- sh $S/x.sh $S/x $T" \
	bare "sh $S/x.sh $S/x $T"

echo "-- building this project (make -j2 all from clean) inside the workspace"
# The tree as committed (git archive), or as it is here when git is missing.  Runs are interleaved and
# few: each is a whole build (DSHBOX_BENCH_BUILD_RUNS, 0 skips the section).
N=${DSHBOX_BENCH_BUILD_RUNS:-3}
if [ "$N" -gt 0 ]; then
	mkdir -p "$S/src"
	if git -C "$TOPDIR" rev-parse HEAD >/dev/null 2>&1; then
		git -C "$TOPDIR" archive HEAD | tar x -C "$S/src"
	else
		tar c -C "$TOPDIR" --exclude=./build --exclude=./build-san . | tar x -C "$S/src"
	fi
	printf 'cd "$1" && rm -rf build && exec make -s -j2 BUILD=build all >"$2" 2>&1\n' > "$S/b.sh"
	"$BUILD/bench/bench_run" "$N" broker-on "$D run --config $S/on.yml --workspace $S -- sh $S/b.sh $S/src $S/build.log" \
		broker-off "$D run --config $S/off.yml --workspace $S -- sh $S/b.sh $S/src $S/build.log" \
		bare "sh $S/b.sh $S/src $S/build.log" || { echo "   a build failed; its last lines:"; tail -5 "$S/build.log"; }
fi
