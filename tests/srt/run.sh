#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real client of `dshbox bwrap` (SPEC 8, docs/bwrap.md): Anthropic's sandbox-runtime (`srt`,
# npm @anthropic-ai/sandbox-runtime) runs its Linux path with a `bwrap` symlink to the built dshbox
# first on PATH, from a current directory in allowWrite (how Claude Code runs it).  Its settings
# must hold, judged on the host: allowWrite lets a write through, a path outside is not writable,
# denyRead hides ~/.ssh, denyWrite blocks a write inside the allowed directory, the dangerous names
# srt masks (.gitconfig, .bashrc, .claude, ...) cannot be made, and none of them appears on the host
# during or after the run (a poller lists the directories while the command runs); a denied domain
# stays denied through its proxy (an allowed one, a local server, is reached through it); a git
# worktree (.git a file) and a .git/hooks symlink to a tracked directory run, with the pointer file,
# the main repository's hooks and config and the hooks refused to writes; and every run went
# through dshbox (its own IPC namespace, which bubblewrap does not make for this argv).
#
#   tests/srt/run.sh BUILD_DIR        (make test-srt)
#
# DSHBOX_SRT_BWRAP=/usr/bin/bwrap runs the same checks with bubblewrap itself: all pass but those
# marked "(dshbox)", where dshbox is stricter or differs: bubblewrap makes the masked names on the
# host for the length of the run, and shares the host's IPC namespace.
#
# Needs node, npm, socat, ripgrep, curl, git and python3 (tools/install-deps.sh) and the npm
# registry: when the registry cannot be reached the run is skipped with the reason printed, and
# that skip fails under DSHBOX_TEST_NO_SKIP=1 (.ci/run).  SRT_VERSION picks the version (default
# 0.0.83, the one tested last): `SRT_VERSION=0.0.90 make test-srt` tries a newer one, installed
# beside it under BUILD_DIR/srt/VERSION.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
version=${SRT_VERSION:-0.0.83}
dshbox=$build/dshbox
e2e_name=sandbox-runtime
# shellcheck source=tests/lib/e2e.sh
. "$(dirname "$0")/../lib/e2e.sh"

[ -x "$dshbox" ] || { echo "tests/srt/run.sh: no $dshbox: build first" >&2; exit 1; }
need_tools node npm socat rg curl python3 git

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
[ -d "$top" ] || exit 1
server_pid=
watch_pid=
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	rm -rf "$top"
}
trap cleanup EXIT
runner=${DSHBOX_SRT_BWRAP:-$dshbox}
differs=
[ "$runner" = "$dshbox" ] || differs=" [runner $runner: expected to fail there]"
echo "runner: $runner"
home=$top/home
ws=$top/ws
mkdir -p "$home/.ssh" "$ws/protected" "$top/outside" "$top/bin" "$top/www" "$top/capture"
secret=secret-$RANDOM$RANDOM
echo "$secret" >"$home/.ssh/id_test"
echo keep >"$ws/protected/existing"
token=token-$RANDOM$RANDOM
echo "$token" >"$top/www/index.html"
ln -s "$runner" "$top/bin/bwrap"
# The unprivileged run reaches its tree through these.
chmod 755 "$top"

# Two git layouts: a worktree (its .git a file) of a repository outside allowWrite, and a
# repository whose .git/hooks is a symlink to a tracked directory.
g() { git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
mkdir -p "$top/repo" "$top/hk/tools/hooks"
g -C "$top/repo" init && echo a >"$top/repo/a" && g -C "$top/repo" add a && g -C "$top/repo" commit -m a
printf '#!/bin/sh\nexit 0\n' >"$top/repo/.git/hooks/pre-commit"
g -C "$top/repo" worktree add "$top/wt" -b wt
printf '#!/bin/sh\nexit 0\n' >"$top/hk/tools/hooks/pre-commit"
g -C "$top/hk" init && g -C "$top/hk" add tools && g -C "$top/hk" commit -m hooks
rm -rf "$top/hk/.git/hooks" && ln -s ../tools/hooks "$top/hk/.git/hooks"
# Its .claude exists (srt then masks .claude/commands and .claude/agents beneath it).
mkdir "$top/hk/.claude" && echo '{}' >"$top/hk/.claude/settings.json"
[ -f "$top/wt/.git" ] && [ -L "$top/hk/.git/hooks" ] || { echo "tests/srt/run.sh: the git fixture was not made" >&2; exit 1; }

# A local server for the allowed domain (no internet here): localhost, through srt's proxy.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$top/www" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

# The names srt masks in its current directory when they do not exist (sandbox-runtime 0.0.83's
# DANGEROUS_FILES and dangerous directories), and the command's attempts to make each.
dangerous=".gitconfig .gitmodules .bashrc .bash_profile .zshrc .zprofile .profile .ripgreprc .mcp.json
.vscode .idea .claude .claude/commands .claude/agents"
try_dangerous='for n in '"$(echo $dangerous)"'; do
	(echo x >"$n") 2>/dev/null && echo "made $n"; mkdir "$n" 2>/dev/null && echo "mkdir $n"
	ln -sT /tmp "$n" 2>/dev/null && echo "symlink $n"
done; echo dangerous-tried'

# A poller on the host lists the directories while srt runs: any name that was not there before
# is written down (a mount point bubblewrap makes lives as long as the run).
watch_start() { # watch_start DIR
	rm -f "$top/appeared"
	python3 - "$top/appeared" "$1" <<'PY' &
import os, sys, time
out, top = sys.argv[1], sys.argv[2]
def names():
    s = set()
    for root, subdirs, files in os.walk(top):
        subdirs[:] = [x for x in subdirs if x != '.git']
        s.update(os.path.join(root, n) for n in subdirs + files)
    return s
before, seen = names(), set()
with open(out, 'w') as f:
    f.write('ready\n'); f.flush()
    while True:
        new = names() - before - seen
        for n in sorted(new):
            f.write(n + '\n'); f.flush()
        seen |= new
        time.sleep(0.01)
PY
	watch_pid=$!
	for _ in $(seq 100); do grep -qx ready "$top/appeared" 2>/dev/null && return; sleep 0.05; done
	echo "tests/srt/run.sh: the poller did not start" >&2
	exit 1
}
watch_stop() { kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true; watch_pid=; }

# run_srt CWD SETTINGS-JSON SCRIPT: srt through a wrapper that records its argv and execs the
# runner under the name bwrap; stdout in $out, stderr in $top/stderr, the status in $rc.
n_run=0
run_srt() {
	n_run=$((n_run + 1))
	echo "$2" >"$top/settings.$n_run.json"
	printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\0" "$a"; done >"%s/argv.%s.$$"\nexec "%s/bin/bwrap" "$@"\n' \
		"$top" "$n_run" "$top" >"$top/capture/bwrap"
	chmod +x "$top/capture/bwrap"
	set +e
	out=$(cd "$1" && HOME=$home PATH="$top/capture:$PATH" timeout 120 node "$cli" \
		--settings "$top/settings.$n_run.json" -c "$3" 2>"$top/stderr")
	rc=$?
	set -e
	echo "--- srt run $n_run in $1; the argv it emitted (long words cut):"
	python3 - "$top"/argv."$n_run".* <<'PY'
import shlex, sys
for f in sorted(sys.argv[1:]):
    words = open(f, 'rb').read().split(b'\0')[:-1]
    print('    bwrap ' + ' '.join(shlex.quote(w.decode(errors='replace')[:72] + ('...' if len(w) > 72 else ''))
                                 .replace('\n', '\\n') for w in words))
PY
	echo "exit status $rc; stdout:"
	echo "$out" | sed 's/^/    /'
	echo "stderr:"
	sed 's/^/    /' "$top/stderr"
}
has() { grep -qxF -- "$1" <<<"$out"; }
host_ipc=$(readlink /proc/self/ns/ipc)
ran_here() { # NAME: the run ended well, went through dshbox, and printed no bwrap: line
	check "$1: the command ran to its end under srt" "$([ "$rc" = 0 ] && has end; echo $?)" "exit $rc"
	check "$1: the sandbox was dshbox's, an IPC namespace of its own (dshbox)$differs" \
		"$(grep -q '^ipc ipc:' <<<"$out" && ! has "ipc $host_ipc"; echo $?)" "$(grep '^ipc' <<<"$out")"
	check "$1: no bwrap: failure line" "$(! grep -q '^bwrap: ' "$top/stderr"; echo $?)" "$(grep '^bwrap: ' "$top/stderr")"
}
absent_before() { # DIR: which masked names are not there before the run (in $was_absent)
	was_absent=
	for n in $dangerous; do
		[ -e "$1/$n" ] || [ -L "$1/$n" ] || was_absent="$was_absent $n"
	done
}
no_names_made() { # NAME DIR: the command made none of the masked names, nor did the runner on the host
	local made=
	for n in $was_absent; do
		if [ -e "$2/$n" ] || [ -L "$2/$n" ]; then made="$made $n(after)"; fi
		if grep -qxF "$2/$n" "$top/appeared"; then made="$made $n(during)"; fi
	done
	check "$1: the command could make none of the masked names" "$(! grep -qE '^(made|mkdir|symlink) ' <<<"$out" &&
		has dangerous-tried; echo $?)" "$(grep -E '^(made|mkdir|symlink) ' <<<"$out" | tr '\n' ' ')"
	check "$1: no masked name on the host, during or after the run (dshbox)$differs" \
		"$([ -z "$made" ]; echo $?)" "on the host:$made"
}

# 1. The current directory in allowWrite, ~/.ssh in denyRead, a denyWrite inside, the proxy.
absent_before "$ws"
watch_start "$ws"
run_srt "$ws" '{
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["'"$ws"'"], "denyWrite": ["'"$ws"'/protected"] },
  "network": { "allowedDomains": ["localhost"], "deniedDomains": ["example.com"] }
}' '
echo allowed > '"$ws"'/new && echo write-allowed-ok
echo outside > '"$top"'/outside/new || echo write-outside-refused
cat '"$home"'/.ssh/id_test || echo read-denied-refused
echo changed > '"$ws"'/protected/new || echo write-protected-refused
echo changed > '"$ws"'/protected/existing || echo overwrite-protected-refused
'"$try_dangerous"'
echo "denied-domain $(curl -s -m 20 --noproxy "" -x "$HTTP_PROXY" -o /dev/null -w "%{http_code}" http://example.com/)"
echo "allowed-domain $(curl -s -m 20 --noproxy "" -x "$HTTP_PROXY" http://localhost:'"$port"'/)"
curl -s -m 5 -o /dev/null http://127.0.0.1:'"$port"'/ || echo direct-refused
echo "ipc $(readlink /proc/self/ns/ipc)"
echo end
'
watch_stop
ran_here "cwd in allowWrite"
check "allowWrite: the write reached the host" \
	"$([ "$(cat "$ws/new" 2>/dev/null)" = allowed ] && has write-allowed-ok; echo $?)" "no $ws/new"
check "outside allowWrite: nothing written on the host" \
	"$([ ! -e "$top/outside/new" ] && has write-outside-refused; echo $?)" "$top/outside/new exists or the write succeeded"
check "denyRead ~/.ssh: the key's content is hidden" \
	"$(! grep -qF "$secret" <<<"$out" && ! grep -qF "$secret" "$top/stderr" && has read-denied-refused; echo $?)" \
	"the secret was read"
check "denyWrite inside allowWrite: no new file, the existing one unchanged" \
	"$([ ! -e "$ws/protected/new" ] && [ "$(cat "$ws/protected/existing")" = keep ] &&
		has write-protected-refused && has overwrite-protected-refused; echo $?)" "a protected write went through"
no_names_made "cwd in allowWrite" "$ws"
check "a denied domain stays denied (the proxy's answer is not 200)" \
	"$(grep -qE '^denied-domain (403|000)$' <<<"$out"; echo $?)" "$(grep denied-domain <<<"$out")"
check "an allowed domain is reached through the proxy (the host server's token)" \
	"$(has "allowed-domain $token"; echo $?)" "$(grep allowed-domain <<<"$out")"
check "the allowed domain is not reached directly" "$(has direct-refused; echo $?)" "it was"

# 2. A git worktree: its .git a file pointing into a repository outside allowWrite.
pointer=$(cat "$top/wt/.git")
absent_before "$top/wt"
watch_start "$top/wt"
run_srt "$top/wt" '{ "filesystem": { "denyRead": [], "allowWrite": ["'"$top/wt"'"], "denyWrite": [] },
  "network": { "allowedDomains": [], "deniedDomains": [] } }' '
git status --short >/dev/null && echo git-status-ok
echo worktree > wt-new && echo worktree-write-ok
echo "gitdir: /tmp" > .git || echo pointer-refused
echo x >> '"$top"'/repo/.git/hooks/pre-commit || echo main-hooks-refused
echo x >> '"$top"'/repo/.git/config || echo main-config-refused
'"$try_dangerous"'
echo "ipc $(readlink /proc/self/ns/ipc)"
echo end
'
watch_stop
ran_here "worktree"
check "worktree: git works and the worktree is writable" \
	"$(has git-status-ok && has worktree-write-ok && [ -f "$top/wt/wt-new" ]; echo $?)" "$(head -n2 <<<"$out" | tr '\n' ' ')"
check "worktree: the .git pointer, the main repository's hooks and config refused to writes, unchanged" \
	"$(has pointer-refused && has main-hooks-refused && has main-config-refused && [ "$(cat "$top/wt/.git")" = "$pointer" ] &&
		[ "$(tail -n1 "$top/repo/.git/hooks/pre-commit")" = "exit 0" ] && ! grep -qx x "$top/repo/.git/config"; echo $?)" \
	"$(grep -E 'refused' <<<"$out" | tr '\n' ' ')"
no_names_made "worktree" "$top/wt"

# 3. .git/hooks a symlink to a tracked directory of the repository.
absent_before "$top/hk"
watch_start "$top/hk"
run_srt "$top/hk" '{ "filesystem": { "denyRead": [], "allowWrite": ["'"$top/hk"'"], "denyWrite": [] },
  "network": { "allowedDomains": [], "deniedDomains": [] } }' '
echo started
echo x >> .git/hooks/pre-commit || echo hook-write-refused
echo x > .git/hooks/post-commit || echo hook-new-refused
echo x >> tools/hooks/pre-commit || echo tracked-hook-refused
echo x >> .git/config || echo config-refused
'"$try_dangerous"'
echo "ipc $(readlink /proc/self/ns/ipc)"
echo end
'
watch_stop
ran_here "hooks symlink"
check "hooks symlink: writes through it and to its target refused, the hooks unchanged" \
	"$(has started && has hook-write-refused && has hook-new-refused && has tracked-hook-refused && has config-refused &&
		[ "$(tail -n1 "$top/hk/tools/hooks/pre-commit")" = "exit 0" ] && [ ! -e "$top/hk/tools/hooks/post-commit" ]; echo $?)" \
	"$(grep -E 'started|refused' <<<"$out" | tr '\n' ' ')"
no_names_made "hooks symlink" "$top/hk"

e2e_summary
