#!/bin/sh
# Start-up as a Node host sees it (issue 25's "from Node" row): the package's run(['/bin/true'])
# (clients/node: dshbox run --report /dev/fd/3) against spawning `dshbox run` without a report, the
# kernel's floor, bubblewrap with the same mounts and /bin/true bare, all from the same Node process,
# alternating run by run (tools/bench/node_spawn.mjs).  Needs node; says so without it.
set -eu
if ! command -v node >/dev/null 2>&1; then
	echo "   node not installed: no figures from a Node host"
	exit 0
fi
N=${BENCH_N:-30}
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
set --
command -v bwrap >/dev/null 2>&1 && set -- bwrap --unshare-user --unshare-pid --unshare-ipc --die-with-parent \
	--ro-bind / / --dev /dev --proc /proc --bind /tmp /tmp --bind "$S" "$S" --
echo "-- start-up from Node: run(['/bin/true']) against spawning dshbox run, the floor, bubblewrap, bare"
if DSHBOX="$BUILD/dshbox" node "$here/bench/node_spawn.mjs" "$N" "$S" "$@" > "$S/out" 2>&1; then
	grep -v '^TABLE' "$S/out"
	sed -n 's/^TABLE\t//p' "$S/out" >> "${BENCH_TABLE:-/dev/null}"
else
	echo "   (failed: $(cat "$S/out"))"
fi
