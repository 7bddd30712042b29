#!/bin/sh
# The runtime broker's file calls (issue 25): `tar x` then `rm -rf` of 3,000 small files, and 8
# processes creating 500 files each at once, on tmpfs (/dev/shm) and on the disk (/var/tmp):
# bare, `dshbox run` (every create, mkdir, utimensat and unlink brokered) and bubblewrap with the
# same binds.  Medians of interleaved runs (build/bench/bench_run).  DSHBOX_BENCH_FILES_RUNS sets
# the run count, DSHBOX_BENCH_TMPFS a tmpfs directory to measure too (a workspace under /dev/shm is
# hidden by the sandbox's own /dev), DSHBOX_BENCH_FILES_DIRS the directories outright;
# DSHBOX_BENCH_FILES_PEER another dshbox binary to run alongside (a before/after comparison).
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_run"
RUNS=${DSHBOX_BENCH_FILES_RUNS:-7}
DIRS=${DSHBOX_BENCH_FILES_DIRS:-${DSHBOX_BENCH_TMPFS:-} /var/tmp}
PEER=${DSHBOX_BENCH_FILES_PEER:-}
BW=""
if command -v bwrap >/dev/null 2>&1 && bwrap --ro-bind / / true >/dev/null 2>&1; then
	BW=bwrap
else
	echo "   bwrap missing or refused here: no bubblewrap column"
fi
for base in $DIRS; do
	[ -d "$base" ] && [ -w "$base" ] || { echo "-- $base: not a writable directory, skipped"; continue; }
	S=$(mktemp -d "$base/dshbox-bench.XXXXXX")
	chmod 755 "$S"
	trap 'rm -rf "$S"' EXIT
	fs=$(stat -f -c %T "$S")
	mkdir "$S/src"
	d=0
	while [ $d -lt 30 ]; do
		mkdir "$S/src/d$d"
		seq -f "$S/src/d$d/f%g" 0 99 | xargs sh -c 'for f; do echo "$f" > "$f"; done' sh
		d=$((d + 1))
	done
	tar cf "$S/t.tar" -C "$S/src" .
	rm -rf "$S/src"
	printf 'mkdir "$1" && tar xf "$2" -C "$1" && exec rm -rf "$1"\n' > "$S/x.sh"
	ARGV="--ro-bind / / --dev /dev --unshare-pid --proc /proc --die-with-parent --tmpfs /tmp --bind $S $S"
	echo "-- tar x + rm -rf of 3,000 files on $fs ($base), as uid $(id -u)"
	set -- dshbox "$D run --workspace $S -- sh $S/x.sh $S/x $S/t.tar"
	[ -n "$PEER" ] && set -- "$@" peer "$PEER run --workspace $S -- sh $S/x.sh $S/x $S/t.tar"
	[ -n "$BW" ] && set -- "$@" bwrap "bwrap $ARGV -- sh $S/x.sh $S/x $S/t.tar"
	"$B" "$RUNS" "$@" bare "sh $S/x.sh $S/x $S/t.tar"
	echo "-- 8 processes creating 500 files each at once on $fs ($base)"
	C="$BUILD/bench/bench_broker_files creators 8 500 $S"
	set -- dshbox "$D run --workspace $S -- $C"
	[ -n "$PEER" ] && set -- "$@" peer "$PEER run --workspace $S -- $C"
	[ -n "$BW" ] && set -- "$@" bwrap "bwrap $ARGV -- $C"
	"$B" "$RUNS" "$@" bare "$C"
	rm -rf "$S"
	trap - EXIT
done
