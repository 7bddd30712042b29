#!/bin/sh
# dshbox run (linux-ns): start-up against bubblewrap, 1,000 literal file denies, and a '**/*.pem'
# glob over a 100,000-file workspace against find.  Every figure is a median from runs that
# alternate the commands compared (build/bench/bench_run), so a busy machine slows both alike.
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_run"
RUNS=${DSHBOX_BENCH_RUNS:-60}
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
WS="$S/ws"
mkdir -p "$WS"
cd "$WS"

echo "-- start-up: dshbox run -- true vs bwrap (official profile)"
BWRAP="bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $WS $WS --"
if command -v bwrap >/dev/null 2>&1; then
	"$B" "$RUNS" dshbox "$D run --workspace $WS -- /bin/true" bwrap "$BWRAP /bin/true" /bin/true "/bin/true"
else
	echo "   bwrap not installed: no peer"
	"$B" "$RUNS" dshbox "$D run --workspace $WS -- /bin/true"
fi

echo "-- literal file denies (each: '-- FILE'), against the same run without rules"
mkdir -p "$WS/lit"
i=0
while [ $i -lt 2000 ]; do : > "$WS/lit/f$i"; i=$((i + 1)); done
for n in 250 1000 2000; do
	i=0
	: > "$S/rules$n"
	while [ $i -lt $n ]; do echo "-- $WS/lit/f$i" >> "$S/rules$n"; i=$((i + 1)); done
done
"$B" "$RUNS" deny-1000 "$D run --workspace $WS --access-file $S/rules1000 -- /bin/true" \
	no-rules "$D run --workspace $WS -- /bin/true" deny-250 "$D run --workspace $WS --access-file $S/rules250 -- /bin/true" \
	deny-2000 "$D run --workspace $WS --access-file $S/rules2000 -- /bin/true"
if command -v bwrap >/dev/null 2>&1; then
	args=""
	i=0
	while [ $i -lt 1000 ]; do args="$args --ro-bind /dev/null $WS/lit/f$i"; i=$((i + 1)); done
	"$B" 10 deny-1000 "$D run --workspace $WS --access-file $S/rules1000 -- /bin/true" \
		bwrap-1000 "bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $WS $WS $args -- /bin/true"
fi

echo "-- '-- **/*.pem' over 100,000 files (1,000 directories x 100, 1,000 matches), against find"
G="$S/tree"
mkdir -p "$G"
d=0
while [ $d -lt 1000 ]; do
	mkdir -p "$G/d$d"
	(cd "$G/d$d" && f=0 && while [ $f -lt 99 ]; do : > "f$f.txt"; f=$((f + 1)); done && : > k.pem)
	d=$((d + 1))
done
echo "-- **/*.pem" > "$S/globrule"
"$B" "$RUNS" glob-run "$D run --workspace $G --access-file $S/globrule -- /bin/true" \
	no-rules "$D run --workspace $G -- /bin/true" find "find $G -name *.pem"
"$B" "$RUNS" glob-dry-run "$D run --dry-run --workspace $G --access-file $S/globrule -- /bin/true" \
	find "find $G -name *.pem" dry-run-no-rules "$D run --dry-run --workspace $G -- /bin/true"
echo "   (the glob's cost: glob-run minus no-rules, against find; the walk alone: glob-dry-run minus dry-run-no-rules)"
