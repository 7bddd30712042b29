#!/bin/sh
# The runner backend against its peer, bubblewrap run directly with the same arguments, measured in
# the same run: start-up of `true` (mean of N runs), and stderr relaying (the runner's stderr goes
# through dshbox's pipe so that runnerFailureSignatures can be seen).  linux-ns is shown alongside.
set -eu
DSHBOX="$BUILD/dshbox"
command -v bwrap >/dev/null || { echo "   bwrap not installed: skipped"; exit 0; }
N=${BENCH_RUNS:-50}
ws=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
trap 'rm -rf "$ws"' EXIT
printf 'runnerCommand: [bwrap]\nrunnerFailureSignatures: ["bwrap:"]\n' >"$ws/cfg.yml"
BW="--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $ws $ws"

ns() { date +%s%N; }
mean_ms() { # command...
	t0=$(ns)
	i=0
	while [ $i -lt "$N" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
	t1=$(ns)
	echo $(((t1 - t0) / N / 1000))
}
# shellcheck disable=SC2086
bw=$(mean_ms bwrap $BW -- true)
rn=$(mean_ms "$DSHBOX" run --config "$ws/cfg.yml" --backend runner --workspace "$ws" -- true)
ln=$(mean_ms "$DSHBOX" run --backend linux-ns --workspace "$ws" -- true)
no=$(mean_ms "$DSHBOX" run --mode danger-full-access --workspace "$ws" -- true)
printf '   start-up of true (mean of %d): bwrap %d us; dshbox --backend runner %d us (%s x bwrap);\n' \
	"$N" "$bw" "$rn" "$(awk "BEGIN{printf \"%.2f\", $rn/$bw}")"
printf '   dshbox linux-ns %d us (%s x bwrap); dshbox unconfined (danger-full-access) %d us\n' \
	"$ln" "$(awk "BEGIN{printf \"%.2f\", $ln/$bw}")" "$no"

MB=${BENCH_STDERR_MB:-200}
gen="head -c ${MB}000000 /dev/zero >&2"
t0=$(ns)
# shellcheck disable=SC2086
bwrap $BW -- sh -c "$gen" 2>/dev/null
t1=$(ns)
# shellcheck disable=SC2086
{ bwrap $BW -- sh -c "$gen" 2>&1 >/dev/null | cat >/dev/null; }
t2=$(ns)
"$DSHBOX" run --config "$ws/cfg.yml" --backend runner --workspace "$ws" -- sh -c "$gen" 2>/dev/null
t3=$(ns)
d=$(((t1 - t0) / 1000000))
p=$(((t2 - t1) / 1000000))
r=$(((t3 - t2) / 1000000))
[ "$d" -gt 0 ] || d=1
[ "$p" -gt 0 ] || p=1
printf '   %d MB on stderr: bwrap straight to /dev/null %d ms; bwrap through a pipe and cat %d ms;\n' "$MB" "$d" "$p"
printf '   dshbox --backend runner (relayed and scanned) %d ms = %s x the pipe, %s x straight\n' \
	"$r" "$(awk "BEGIN{printf \"%.2f\", $r/$p}")" "$(awk "BEGIN{printf \"%.2f\", $r/$d}")"
