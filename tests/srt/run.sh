#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real client of `dshbox bwrap` (SPEC 8, docs/bwrap.md): Anthropic's sandbox-runtime (`srt`,
# npm @anthropic-ai/sandbox-runtime) runs its Linux path with a `bwrap` symlink to the built dshbox
# first on PATH.  Its settings must hold, judged on the host: allowWrite lets a write through, a
# path outside is not writable, denyRead hides a file, denyWrite blocks a write inside an allowed
# directory, a denied domain stays denied through its proxy (an allowed one, a local server, is
# reached through it), and the command ran under dshbox (its own IPC namespace, which bubblewrap
# does not make for this argv).
#
#   tests/srt/run.sh BUILD_DIR        (make test-srt)
#
# Needs node, npm, socat, ripgrep and curl (tools/install-deps.sh) and the npm registry: when the
# registry cannot be reached the run is skipped with the reason printed, and that skip fails under
# DSHBOX_TEST_NO_SKIP=1 (.ci/run).  SRT_VERSION picks the version (default: the one tested last).
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
version=${SRT_VERSION:-0.0.83}
dshbox=$build/dshbox
failures=0
checks=0

skip() {
	echo "SKIP: sandbox-runtime end-to-end: $*"
	if [ "${DSHBOX_TEST_NO_SKIP:-}" = 1 ]; then
		echo "FAIL: skips fail under DSHBOX_TEST_NO_SKIP=1" >&2
		exit 1
	fi
	exit 0
}
check() { # check NAME CONDITION-STATUS DETAIL
	checks=$((checks + 1))
	if [ "$2" = 0 ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1: $3" >&2
		failures=$((failures + 1))
	fi
}

[ -x "$dshbox" ] || { echo "tests/srt/run.sh: no $dshbox: build first" >&2; exit 1; }
for t in node npm socat rg curl python3; do
	command -v "$t" >/dev/null || skip "$t is not installed (tools/install-deps.sh installs it)"
done

# The package, installed once per build tree and version.
pkgdir=$build/srt/$version
cli=$pkgdir/node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js
if [ ! -f "$cli" ]; then
	mkdir -p "$pkgdir"
	if ! log=$(cd "$pkgdir" && timeout 300 npm install --no-audit --no-fund --no-save --loglevel=error \
		"@anthropic-ai/sandbox-runtime@$version" 2>&1); then
		rm -rf "$pkgdir"
		skip "the npm registry is unreachable or refused @anthropic-ai/sandbox-runtime@$version: $(echo "$log" | grep -m1 -i 'err' || echo "$log" | tail -n1)"
	fi
fi
echo "sandbox-runtime $(node -p "require('$pkgdir/node_modules/@anthropic-ai/sandbox-runtime/package.json').version"), node $(node --version), as uid $(id -u)"

# The fixture, under a real directory of the caller's: srt binds what it allows, so it must exist.
top=$(mktemp -d "${TMPDIR:-/var/tmp}/dshbox-srt.XXXXXX")
server_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	rm -rf "$top"
}
trap cleanup EXIT
ws=$top/ws
mkdir -p "$ws/allowed/protected" "$ws/outside" "$top/bin" "$top/www" "$top/capture"
secret=secret-$RANDOM$RANDOM
echo "$secret" >"$ws/secret.txt"
echo keep >"$ws/allowed/protected/existing"
token=token-$RANDOM$RANDOM
echo "$token" >"$top/www/index.html"
# DSHBOX_SRT_BWRAP=/usr/bin/bwrap runs the same checks against bubblewrap itself: all but the
# IPC check pass there, which shows that one tells the runners apart.
ln -s "${DSHBOX_SRT_BWRAP:-$dshbox}" "$top/bin/bwrap"

# A local server for the allowed domain (no internet here): localhost, through srt's proxy.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$top/www" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

cat >"$top/settings.json" <<EOF
{
  "filesystem": {
    "denyRead": ["$ws/secret.txt"],
    "allowWrite": ["$ws/allowed"],
    "denyWrite": ["$ws/allowed/protected"]
  },
  "network": { "allowedDomains": ["localhost"], "deniedDomains": ["example.com"] }
}
EOF

host_ipc=$(readlink /proc/self/ns/ipc)
script='
echo allowed > '"$ws"'/allowed/new && echo write-allowed-ok
echo outside > '"$ws"'/outside/new || echo write-outside-refused
cat '"$ws"'/secret.txt || echo read-denied-refused
echo changed > '"$ws"'/allowed/protected/new || echo write-protected-refused
echo changed > '"$ws"'/allowed/protected/existing || echo overwrite-protected-refused
echo "denied-domain $(curl -s -m 20 --noproxy "" -x "$HTTP_PROXY" -o /dev/null -w "%{http_code}" http://example.com/)"
echo "allowed-domain $(curl -s -m 20 --noproxy "" -x "$HTTP_PROXY" http://localhost:'"$port"'/)"
curl -s -m 5 -o /dev/null http://127.0.0.1:'"$port"'/ || echo direct-refused
echo "ipc $(readlink /proc/self/ns/ipc)"
'

run_srt() { # run_srt PATH-PREFIX
	(cd "$ws" && PATH="$1:$PATH" timeout 120 node "$cli" --settings "$top/settings.json" -c "$script")
}

# The argv sandbox-runtime emits, recorded once by a wrapper in front of the same dshbox.
cat >"$top/capture/bwrap" <<EOF
#!/bin/sh
for a in "\$@"; do printf '%s\0' "\$a"; done >"$top/argv.\$\$"
exec "$top/bin/bwrap" "\$@"
EOF
chmod +x "$top/capture/bwrap"
rm -f "$ws/allowed/new"
set +e
run_srt "$top/capture" >/dev/null 2>&1
set -e
echo "the argv sandbox-runtime emitted (each invocation of bwrap; long words cut):"
python3 - "$top"/argv.* <<'PY'
import shlex, sys
for f in sorted(sys.argv[1:]):
    words = open(f, 'rb').read().split(b'\0')[:-1]
    print('    bwrap ' + ' '.join(shlex.quote(w.decode(errors='replace')[:72] + ('...' if len(w) > 72 else ''))
                                 .replace('\n', '\\n') for w in words))
PY
rm -f "$ws/allowed/new"

# The run judged: through the bwrap symlink itself.
set +e
out=$(run_srt "$top/bin" 2>"$top/stderr")
rc=$?
set -e
echo "srt exit status $rc; stdout:"
echo "$out" | sed 's/^/    /'
echo "stderr:"
sed 's/^/    /' "$top/stderr"
has() { grep -qxF -- "$1" <<<"$out"; }

check "the command ran to its end under srt" "$([ "$rc" = 0 ] && has "direct-refused"; echo $?)" "exit $rc"
check "allowWrite: the write reached the host" \
	"$([ "$(cat "$ws/allowed/new" 2>/dev/null)" = allowed ] && has write-allowed-ok; echo $?)" "no $ws/allowed/new"
check "outside allowWrite: nothing written on the host" \
	"$([ ! -e "$ws/outside/new" ] && has write-outside-refused; echo $?)" "$ws/outside/new exists or the write succeeded"
check "denyRead: the file's content is hidden" \
	"$(! grep -qF "$secret" <<<"$out" && ! grep -qF "$secret" "$top/stderr" && has read-denied-refused; echo $?)" "the secret was read"
check "denyWrite inside allowWrite: no new file, the existing one unchanged" \
	"$([ ! -e "$ws/allowed/protected/new" ] && [ "$(cat "$ws/allowed/protected/existing")" = keep ] &&
		has write-protected-refused && has overwrite-protected-refused; echo $?)" "a protected write went through"
check "a denied domain stays denied (the proxy's answer is not 200)" \
	"$(grep -qE '^denied-domain (403|000)$' <<<"$out"; echo $?)" "$(grep denied-domain <<<"$out")"
check "an allowed domain is reached through the proxy (the host server's token)" \
	"$(has "allowed-domain $token"; echo $?)" "$(grep allowed-domain <<<"$out")"
check "the sandbox was dshbox's (an IPC namespace of its own)" \
	"$(grep -q '^ipc ipc:' <<<"$out" && ! has "ipc $host_ipc"; echo $?)" "$(grep '^ipc' <<<"$out")"
check "no bwrap: failure line" "$(! grep -q '^bwrap: ' "$top/stderr"; echo $?)" "$(grep '^bwrap: ' "$top/stderr")"

echo "sandbox-runtime end-to-end: $((checks - failures)) of $checks checks passed"
[ "$failures" = 0 ]
