#!/bin/sh
# 64 `dshbox run -- true` started at once against 64 bwraps (official profile): runs per second
# (median of rounds that alternate the two), every run must succeed (no EAGAIN), the peak resident
# memory of one supervisor, and nothing left behind afterwards: no dshbox or bwrap process of these
# runs, no mount added to the host's table.
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_concurrent"
N=${DSHBOX_BENCH_CONCURRENT:-64}
ROUNDS=${DSHBOX_BENCH_ROUNDS:-7}
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
cd "$S"
mounts_before=$(wc -l < /proc/self/mountinfo)
echo "-- $N at once, $ROUNDS rounds each"
rc=0
if command -v bwrap >/dev/null 2>&1; then
	"$B" "$N" "$ROUNDS" dshbox "$D run --workspace $S -- /bin/true" \
		bwrap "bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $S $S -- /bin/true" || rc=$?
else
	echo "   bwrap not installed (tools/install-deps.sh): no peer"
	"$B" "$N" "$ROUNDS" dshbox "$D run --workspace $S -- /bin/true" || rc=$?
fi
[ $rc -eq 0 ] || echo "   SOME RUNS FAILED (see above)"
# The supervisor does not wait for init's teardown of the namespaces; give it a moment.
sleep 1
left=$(pgrep -c -f "^$D run --workspace $S " || true)
bw=$(pgrep -c -f "^bwrap .*--bind $S $S " || true)
mounts_after=$(wc -l < /proc/self/mountinfo)
echo "   left behind after 1 s: $left dshbox processes, $bw bwrap processes, $((mounts_after - mounts_before)) host mounts"
