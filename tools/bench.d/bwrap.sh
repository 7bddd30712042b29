#!/bin/sh
# dshbox bwrap against bubblewrap with the same argv (SPEC 8): the dsh host's workspace-write
# argv, and sandbox-runtime's way of denying 1,000 files (--ro-bind /dev/null FILE each, applied
# in argv order).  Medians from runs that alternate the two (build/bench/bench_run).
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_run"
RUNS=${DSHBOX_BENCH_RUNS:-60}
if ! command -v bwrap >/dev/null 2>&1; then
	echo "   bwrap not installed: no peer (tools/install-deps.sh installs bubblewrap)"
	exit 0
fi
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
WS="$S/ws"
mkdir -p "$WS/lit"
cd "$WS"

ARGV="--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $WS $WS"
echo "-- start-up: the dsh host's workspace-write argv"
"$B" "$RUNS" dshbox-bwrap "$D bwrap $ARGV -- /bin/true" bwrap "bwrap $ARGV -- /bin/true"

# sandbox-runtime's shape (its proxy socket bound first, then --ro-bind / /, a user namespace
# keeping CAP_SETFCAP for root), without its proxy and seccomp helper.
touch "$S/sock"
SRT="--new-session --die-with-parent --unshare-net --bind $S/sock $S/sock --ro-bind / / --bind $WS $WS --dev /dev --unshare-pid --unshare-user --cap-drop ALL"
[ "$(id -u)" = 0 ] && SRT="$SRT --cap-add CAP_SETFCAP"
SRT="$SRT --proc /proc"
echo "-- start-up: sandbox-runtime's argv shape"
"$B" "$RUNS" dshbox-bwrap "$D bwrap $SRT -- /bin/true" bwrap "bwrap $SRT -- /bin/true"

echo "-- 1,000 files denied with --ro-bind /dev/null FILE"
i=0
args=""
while [ $i -lt 1000 ]; do : > "$WS/lit/f$i"; args="$args --ro-bind /dev/null $WS/lit/f$i"; i=$((i + 1)); done
"$B" 10 dshbox-bwrap "$D bwrap $ARGV $args -- /bin/true" bwrap "bwrap $ARGV $args -- /bin/true"
