#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The world outside a filtered run (tests/integration/test_net_filter.c), in a network and mount
# namespace of the test's own (run it under `unshare -n -m`, or `unshare -r -n -m` as a user):
# a DNS server (dnsmasq) on 127.0.0.53 that the namespace's /etc/resolv.conf names, answering
#   allowed.test -> 127.0.0.2   other.test -> 127.0.0.3   denied.test -> 127.0.0.4
#   registry.npmjs.org -> 127.0.0.2 (npm's own registry name, served here from DIR/www)
# and logging every query it gets to DIR/dns.log; fd00::2 on lo; HTTP, HTTPS (a test CA: DIR/ca.pem) and a line
# server on each of those addresses (net_upstream.py, logging to DIR/upstream.log).  Then CMD runs.
# Usage: net_world.sh DIR CMD...
set -eu
dir=$1
shift
here=$(dirname "$0")
ip link set lo up
ip -6 addr add fd00::2/128 dev lo nodad
printf 'nameserver 127.0.0.53\n' >"$dir/resolv.conf"
mount --bind "$dir/resolv.conf" /etc/resolv.conf
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=dshbox-test-ca \
	-keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=allowed.test \
	-keyout "$dir/leaf.key" -out "$dir/leaf.csr" 2>/dev/null
printf 'subjectAltName=DNS:allowed.test,DNS:other.test,DNS:denied.test,DNS:registry.npmjs.org\n' >"$dir/leaf.ext"
openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
	-extfile "$dir/leaf.ext" -out "$dir/leaf.pem" 2>/dev/null
: >"$dir/dns.log"
: >"$dir/upstream.log"
dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --listen-address=127.0.0.53 \
	--bind-interfaces --address=/allowed.test/127.0.0.2 --address=/other.test/127.0.0.3 \
	--address=/registry.npmjs.org/127.0.0.2 \
	--address=/denied.test/127.0.0.4 --log-queries --log-facility="$dir/dns.log" --user="$(id -un)" --group= \
	--pid-file="$dir/dnsmasq.pid" &
dns=$!
python3 "$here/net_upstream.py" "$dir" 127.0.0.2 127.0.0.3 127.0.0.4 &
up=$!
i=0
while ! [ -e "$dir/upstream.ready" ] || ! grep -q started "$dir/dns.log"; do
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "net_world: the servers did not start" >&2; exit 99; }
	sleep 0.05
done
rc=0
"$@" || rc=$?
kill $dns $up 2>/dev/null || true
wait 2>/dev/null || true
exit $rc
