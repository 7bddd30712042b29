#!/bin/sh
# The filtered network (SPEC 12, docs/network.md) against a direct connection, all on this machine:
# a world of the section's own (tests/lib/net_world.sh under `unshare -n -m`, `unshare -rn -m` as
# a user) with a fast HTTP server on allowed.test:8080 (tools/bench/net_bench.py serve) and a
# second dnsmasq that logs nothing.  One `dshbox run --allow-domain allowed.test:8080` holds the
# sandboxed client for the whole section; the client in the world interleaves its direct
# connections with the sandbox's, one by one, so a busy machine slows both alike.  Nothing leaves
# the machine: the world's network namespace has loopback only.
#   1. connection set-up through the HTTP proxy (CONNECT), SOCKS5 and the mapped address vs direct
#   2. a 1 GiB transfer through the mapped address and the proxy vs direct (DSHBOX_BENCH_BULK bytes)
#   3. 1,000 connections at once through the mapped address, all must succeed, vs direct
#   4. DNS answers from the run's resolver vs dnsmasq answering directly
set -eu
D="$BUILD/dshbox"
here=$(cd "$(dirname "$0")/../.." && pwd)
H="$here/tools/bench/net_bench.py"
PORT=8080

if [ "${1:-}" = inner ]; then
	# In the world: $S is its directory.  The fast server on allowed.test's address (127.0.0.2).
	python3 "$H" serve 127.0.0.2 $PORT "$S/bench.ready" &
	srv=$!
	# The world's dnsmasq logs every query to a file; this one answers the same and logs nothing.
	dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --listen-address=127.0.0.54 \
		--bind-interfaces --address=/allowed.test/127.0.0.2 --user="$(id -un)" --group= \
		--pid-file="$S/dnsmasq-quiet.pid" &
	dq=$!
	i=0
	while ! [ -e "$S/bench.ready" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "   the bench server did not start" >&2; exit 1; }
		sleep 0.05
	done
	py=$(python3 -c 'import sys; print(sys.executable)')
	rc=0
	"$py" "$H" outer 127.0.0.2 $PORT allowed.test 127.0.0.54 "$ROUNDS" "$CONNS" "$BULK" "$CONC" "$DNSQ" -- \
		"$D" run --workspace "$S" --cwd "$S" --allow-domain allowed.test:$PORT -- \
		"$py" "$H" inner allowed.test $PORT || rc=$?
	kill $srv $dq 2>/dev/null || true
	wait 2>/dev/null || true
	exit $rc
fi

for p in unshare dnsmasq python3 openssl ip; do
	command -v $p >/dev/null 2>&1 || { echo "   $p is not installed (tools/install-deps.sh): skipped"; exit 0; }
done
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
# Counts scale from BENCH_N (30: 600 connections per path, 3 rounds of 1 GiB and of 1,000 at once,
# 3,000 DNS queries per side).
CONNS=${DSHBOX_BENCH_CONNS:-$((BENCH_N * 20))}
ROUNDS=${DSHBOX_BENCH_ROUNDS:-$(((BENCH_N + 9) / 10))}
BULK=${DSHBOX_BENCH_BULK:-1073741824}
CONC=${DSHBOX_BENCH_CONC:-1000}
DNSQ=${DSHBOX_BENCH_DNSQ:-$((BENCH_N * 100))}
export S CONNS ROUNDS BULK CONC DNSQ
# Room for 1,000 connections at once: the client's, and the service's two per connection.
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(id -u)" = 0 ] && u=-n || u=-rn
unshare $u -m sh "$here/tests/lib/net_world.sh" "$S" sh "$0" inner
