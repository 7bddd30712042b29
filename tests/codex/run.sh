#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real client of `dshbox bwrap` (SPEC 8, docs/bwrap.md): the Codex CLI (npm @openai/codex) runs
# `codex sandbox -c sandbox_mode="workspace-write" -- CMD` (no API key needed) with a `bwrap`
# symlink to the built dshbox first on PATH, outside the working directory, as users run it.  In a
# plain directory and in a git repository, judged on the host: a write in the workspace lands, a
# write outside it is refused, .git/config cannot be written or made, exit status 7 and a death by
# SIGSEGV (139) come back from codex, and no name appears in the workspace during the run (a poller
# lists it while the command runs) or after it.  Every run must have gone through dshbox: Codex
# falls back, silently, to the bubblewrap bundled in its package when `bwrap --help` fails, so the
# PATH `bwrap` is a wrapper that records each argv it gets (the run's must be there) and the
# command sees dshbox's init, not itself, as the first process of the sandbox's procfs
# (/proc/1/cmdline: the bwrap symlink's argv; bubblewrap's --as-pid-1 shows the command there).
#
#   tests/codex/run.sh BUILD_DIR      (make test-codex)
#
# DSHBOX_CODEX_BWRAP=/usr/bin/bwrap runs the same checks with bubblewrap itself: all pass but those
# marked "(dshbox)", where dshbox is stricter or differs: bubblewrap makes .git, .agents, .codex
# and .aws in the workspace on the host for the length of the run (Codex removes them after), and
# its sandbox has no dshbox init.
#
# Needs node, npm, git and python3 (tools/install-deps.sh) and the npm registry: when the registry
# cannot be reached the run is skipped with the reason printed, and that skip fails under
# DSHBOX_TEST_NO_SKIP=1 (.ci/run).  CODEX_VERSION picks the version (default 0.171.0, the one tested
# last): `CODEX_VERSION=0.172.0 make test-codex` tries another, installed beside it under
# BUILD_DIR/codex/VERSION.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
version=${CODEX_VERSION:-0.171.0}
dshbox=$build/dshbox
e2e_name=Codex
# shellcheck source=tests/lib/e2e.sh
. "$(dirname "$0")/../lib/e2e.sh"

[ -x "$dshbox" ] || { echo "tests/codex/run.sh: no $dshbox: build first" >&2; exit 1; }
need_tools node npm python3 git

# The package, installed once per build tree and version (its platform binary comes with it).
pkgdir=$build/codex/$version
codex=$pkgdir/node_modules/.bin/codex
if [ ! -x "$codex" ]; then
	mkdir -p "$pkgdir"
	if ! log=$(cd "$pkgdir" && timeout 600 npm install --no-audit --no-fund --no-save --loglevel=error \
		"@openai/codex@$version" 2>&1); then
		rm -rf "$pkgdir"
		skip "the npm registry is unreachable or refused @openai/codex@$version: $(echo "$log" | grep -m1 -i 'err' || echo "$log" | tail -n1)"
	fi
fi
echo "$("$codex" --version), node $(node --version), as uid $(id -u)"

# The fixture, under a real directory of the caller's outside /tmp (which workspace-write makes
# writable): the workspace, a place outside it, the PATH directory with the wrapper.
top=$(mktemp -d /var/tmp/dshbox-codex.XXXXXX)
[ -d "$top" ] || exit 1
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	rm -rf "$top"
}
trap cleanup EXIT
runner=${DSHBOX_CODEX_BWRAP:-$dshbox}
differs=
[ "$runner" = "$dshbox" ] || differs=" [runner $runner: expected to fail there]"
echo "runner: $runner"
home=$top/home
mkdir -p "$home" "$top/plain" "$top/outside" "$top/bin"
chmod 755 "$top"
# The bwrap Codex finds on PATH: records its argv, then runs the runner under the name bwrap.
ln -s "$runner" "$top/bin/bwrap"
mkdir "$top/path"
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\0" "$a"; done >"%s/argv.$$"\nexec "%s/bin/bwrap" "$@"\n' \
	"$top" "$top" >"$top/path/bwrap"
chmod +x "$top/path/bwrap"

g() { git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
mkdir "$top/repo"
g -C "$top/repo" init && echo a >"$top/repo/a" && g -C "$top/repo" add a && g -C "$top/repo" commit -m a
[ -f "$top/repo/.git/config" ] || { echo "tests/codex/run.sh: the git fixture was not made" >&2; exit 1; }

# A poller on the host lists the workspace while Codex runs: any name that was not there before is
# written down (a mount point bubblewrap makes lives as long as the run).
watch_start() { # watch_start DIR
	rm -f "$top/appeared"
	python3 - "$top/appeared" "$1" <<'PY' &
import os, sys, time
out, top = sys.argv[1], sys.argv[2]
def names():
    s = set()
    for root, subdirs, files in os.walk(top):
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
	echo "tests/codex/run.sh: the poller did not start" >&2
	exit 1
}
watch_stop() { kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true; watch_pid=; }

# run_codex WS SCRIPT: `codex sandbox` in workspace-write from WS; stdout in $out, stderr in
# $top/stderr, the status in $rc, the argv the PATH bwrap got printed.
run_codex() {
	rm -f "$top"/argv.*
	set +e
	out=$(cd "$1" && env -u TMPDIR HOME="$home" PATH="$top/path:$PATH" timeout 120 "$codex" sandbox \
		-c sandbox_mode='"workspace-write"' -- /bin/sh -c "$2" 2>"$top/stderr")
	rc=$?
	set -e
	echo "--- codex sandbox in $1; the argv its bwrap got (long words cut):"
	python3 - "$top"/argv.* <<'PY'
import shlex, sys
for f in sorted(sys.argv[1:]):
    try:
        words = open(f, 'rb').read().split(b'\0')[:-1]
    except OSError:
        continue
    print('    bwrap ' + ' '.join(shlex.quote(w.decode(errors='replace')[:72] + ('...' if len(w) > 72 else ''))
                                 .replace('\n', '\\n') for w in words))
PY
	echo "exit status $rc; stdout:"
	echo "$out" | sed 's/^/    /'
	echo "stderr:"
	sed 's/^/    /' "$top/stderr"
}
has() { grep -qxF -- "$1" <<<"$out"; }
# The run's own argv reached the PATH bwrap: --as-pid-1 and the command's words (not the --help
# probe alone, which is all Codex asks before it falls back to its bundled bubblewrap).
went_through_path_bwrap() {
	for f in "$top"/argv.*; do
		[ -f "$f" ] && tr '\0' '\n' <"$f" | grep -qx -- --as-pid-1 && grep -qaF -- "$1" "$f" && return 0
	done
	return 1
}

# SCRIPT's words: each line reports what it saw, the last line ends with exit 7.
script() { # script WS OUTSIDE
	cat <<EOF
echo "pid1 \$(tr '\\0' ' ' </proc/1/cmdline | cut -c1-200)"
echo inside >"$1/new" && echo write-in-ws-ok
echo outside >"$2/new" 2>/dev/null || echo write-outside-refused
echo '[core]' >>"$1/.git/config" 2>/dev/null || echo git-config-refused
echo 'exit 0' >"$1/.git/hooks/pre-commit" 2>/dev/null || echo git-hooks-refused
echo mark-$$-codex-run
exit 7
EOF
}

run_layout() { # run_layout NAME WS
	local name=$1 ws=$2
	local config_before=
	[ -f "$ws/.git/config" ] && config_before=$(cat "$ws/.git/config")
	local before
	before=$(cd "$ws" && find . | sort)
	watch_start "$ws"
	run_codex "$ws" "$(script "$ws" "$top/outside")"
	watch_stop
	check "$name: exit status 7 passes through codex" "$([ "$rc" = 7 ]; echo $?)" "exit $rc"
	check "$name: the run's argv went to the bwrap on PATH (no fallback to Codex's own bubblewrap)" \
		"$(went_through_path_bwrap "mark-$$-codex-run"; echo $?)" "no recorded argv carries the command"
	check "$name: the sandbox's first process is dshbox's init (dshbox)$differs" \
		"$(grep -q "^pid1 $top/bin/bwrap --as-pid-1 " <<<"$out"; echo $?)" "$(grep '^pid1' <<<"$out")"
	check "$name: no bwrap: failure line" "$(! grep -q '^bwrap: ' "$top/stderr"; echo $?)" "$(grep '^bwrap: ' "$top/stderr")"
	check "$name: a write in the workspace lands on the host" \
		"$([ "$(cat "$ws/new" 2>/dev/null)" = inside ] && has write-in-ws-ok; echo $?)" "no $ws/new"
	check "$name: a write outside the workspace is refused, nothing on the host" \
		"$([ ! -e "$top/outside/new" ] && has write-outside-refused; echo $?)" "$top/outside/new exists or the write succeeded"
	check "$name: .git/config cannot be written or made, nor a hook" \
		"$(has git-config-refused && has git-hooks-refused && if [ -n "$config_before" ]; then
			[ "$(cat "$ws/.git/config")" = "$config_before" ]; else [ ! -e "$ws/.git" ]; fi; echo $?)" \
		"$(grep -E 'refused' <<<"$out" | tr '\n' ' ')"
	rm -f "$ws/new"
	local after made
	after=$(cd "$ws" && find . | sort)
	made=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
	check "$name: no name left in the workspace after the run" "$([ -z "$made" ]; echo $?)" "left: $made"
	made=$(grep -v '^ready$' "$top/appeared" | grep -vxF "$ws/new" | tr '\n' ' ' || true)
	check "$name: no name made in the workspace during the run (dshbox)$differs" "$([ -z "$made" ]; echo $?)" \
		"appeared: $made"
}

run_layout "plain directory" "$top/plain"
run_layout "git repository" "$top/repo"

# A death by a signal: the status codex gives back for a command killed by SIGSEGV.
run_codex "$top/plain" 'python3 -c "import ctypes; ctypes.string_at(0)"  # mark-'$$'-codex-segv'
check "a command killed by SIGSEGV: codex ends with 139, through the bwrap on PATH" \
	"$([ "$rc" = 139 ] && went_through_path_bwrap "mark-$$-codex-segv"; echo $?)" "exit $rc"

e2e_summary
