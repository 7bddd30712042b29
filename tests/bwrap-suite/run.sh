#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bubblewrap's own test suite as the measure of `dshbox bwrap` (SPEC 13, docs/bwrap.md): the
# suite's tests/test-run.sh, fetched at test time with `apt-get source bubblewrap` (never kept in
# this tree), run once with real bubblewrap and once with dshbox behind the name `bwrap` (a wrapper
# that execs the built dshbox under that name, as a `bwrap` symlink on PATH does), every case
# counted, and a `N passed, N failed, N skipped` line for each.
#
#   tests/bwrap-suite/run.sh BUILD_DIR        (make test-bwrap-suite)
#
# The suite stops at its first failure (`set -e`, and `fatal` exits): the copy it runs has errexit
# off, an ERR trap that marks the current case failed, and a `fatal` that marks it and returns,
# so a case ends at its own `ok` line and reads `not ok` when anything in it failed.  A case the
# suite cannot run here is its own `ok # SKIP reason`, printed as SKIP with that reason; a case it
# never reached counts as failed.
#
# Exit status: 0 when dshbox fails no case that real bubblewrap passes, other than those listed in
# tests/bwrap-suite/known-failures (each with why, the left-over work of issue 35); 1 otherwise.  A
# listed case dshbox now passes is printed, to be taken off the list.
#
# Needs the deb-src line for the running Debian suite: as root the script adds one, in a file of its
# own under /etc/apt/sources.list.d/, when apt has none; as another user without it, a printed skip
# (a failure under DSHBOX_TEST_NO_SKIP=1).  BWRAP_SUITE_BWRAP picks the real bubblewrap
# (/usr/bin/bwrap by default).
set -uo pipefail

build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dshbox=$build/dshbox
real=${BWRAP_SUITE_BWRAP:-/usr/bin/bwrap}
work=$build/bwrap-suite

skip() {
	echo "SKIP: bubblewrap's test suite: $*"
	if [ "${DSHBOX_TEST_NO_SKIP:-}" = 1 ]; then
		echo "FAIL: skips fail under DSHBOX_TEST_NO_SKIP=1" >&2
		exit 1
	fi
	exit 0
}

[ -x "$dshbox" ] || { echo "tests/bwrap-suite/run.sh: no $dshbox: build first" >&2; exit 1; }
[ -x "$real" ] || skip "no bubblewrap at $real (tools/install-deps.sh installs it)"
command -v dpkg-source >/dev/null || skip "dpkg-source is not installed (dpkg-dev)"

# The source, fetched once per build tree.
fetch_source() {
	local codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || skip "cannot tell the running Debian suite from /etc/os-release"
	if ! apt-get source --print-uris bubblewrap >/dev/null 2>&1; then
		[ "$(id -u)" = 0 ] || skip "apt has no deb-src line for $codename, and only root may add one"
		local list=/etc/apt/sources.list.d/dshbox-bwrap-suite-src.sources
		cat >"$list" <<-SRC
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: $codename
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
		# Only that list is refreshed: the others stay as the machine has them.
		apt-get update -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
			-o APT::Get::List-Cleanup=0 >/dev/null 2>&1 ||
			skip "apt-get update of $list failed"
	fi
	rm -rf "$work/dl" && mkdir -p "$work/dl"
	(cd "$work/dl" && apt-get source --download-only bubblewrap >/dev/null 2>&1) ||
		skip "apt-get source bubblewrap failed (is Debian's archive reachable?)"
	local dsc
	dsc=$(ls "$work"/dl/bubblewrap_*.dsc | head -n1)
	(cd "$work" && dpkg-source --no-check -x "$dsc" src >/dev/null 2>&1) || skip "dpkg-source -x $dsc failed"
}
[ -f "$work/src/tests/test-run.sh" ] || fetch_source
suite=$work/src/tests
version=$(cd "$work/src" && dpkg-parsechangelog -S Version 2>/dev/null || echo unknown)
echo "bubblewrap's test suite from Debian's bubblewrap $version; real bubblewrap: $("$real" --version); as uid $(id -u)"

# What test-run.sh needs built: 0.8.0's needs nothing; later ones run helpers from the tests
# directory (try-syscall), built here from the suite's own sources when it has them.
if [ -f "$suite/try-syscall.c" ] && [ ! -x "$suite/try-syscall" ]; then
	cc -o "$suite/try-syscall" "$suite/try-syscall.c" || { echo "cannot build try-syscall" >&2; exit 1; }
fi

# The copy that counts every case: errexit off, failures marked per case.
runner=$work/run
rm -rf "$runner" && mkdir -p "$runner"
cp "$suite"/*.sh "$runner/"
[ -x "$suite/try-syscall" ] && cp "$suite/try-syscall" "$runner/"
cat >"$runner/count-every-case.sh" <<'SHIM'
# Sourced by test-run.sh right after libtest.sh (see tests/bwrap-suite/run.sh).
set +e
set -E
case_failed=0
trap 'case_status=$?; case_failed=1; echo "# failed: $BASH_COMMAND (status $case_status)" >&2' ERR
fatal() { echo "$@" >&2; case_failed=1; return 1; }
assert_not_reached() { fatal "$@"; }
echo() {
	if [ "$case_failed" = 1 ] && [ "${1:-}" != -n ] && [[ "${1:-}" == ok* ]]; then
		case_failed=0
		builtin echo "not $*"
		return 0
	fi
	builtin echo "$@"
}
SHIM
sed -i -e 's/^set -xeuo pipefail$/set -xo pipefail/' \
	-e 's|^\. \${srcd}/libtest\.sh$|&\n. "${srcd}/count-every-case.sh"|' "$runner/test-run.sh"
grep -q count-every-case "$runner/test-run.sh" || { echo "test-run.sh: its shape changed; update run.sh" >&2; exit 1; }

# dshbox behind the name: argv[0] is the wrapper's path, as with a `bwrap` symlink on PATH.
mkdir -p "$work/as-bwrap"
printf '#!/bin/bash\nexec -a "$0" %q "$@"\n' "$dshbox" >"$work/as-bwrap/bwrap"
chmod +x "$work/as-bwrap/bwrap"

# run NAME BWRAP: the suite's TAP lines into $work/NAME.tap, the trace into $work/NAME.log.
run() {
	local name=$1 bw=$2 plan
	(cd "$runner" && BWRAP="$bw" BWRAP_MUST_WORK=1 timeout 900 bash ./test-run.sh) \
		>"$work/$name.tap" 2>"$work/$name.log" </dev/null
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$work/$name.tap" | head -n1)
	local pass fail skipped seen
	pass=$(grep -E '^ok ' "$work/$name.tap" | grep -vc '# SKIP')
	skipped=$(grep -E '^ok .*# SKIP' "$work/$name.tap" | wc -l)
	fail=$(grep -cE '^not ok ' "$work/$name.tap")
	seen=$((pass + skipped + fail))
	grep -E '^ok .*# SKIP' "$work/$name.tap" | sed "s/^ok[ -]*# SKIP */SKIP ($name): /" | sort -u
	grep -E '^not ok ' "$work/$name.tap" | sed "s/^/FAIL ($name): /"
	if [ -n "$plan" ] && [ "$seen" -lt "$plan" ]; then
		builtin echo "FAIL ($name): $((plan - seen)) cases never reached (see $work/$name.log)"
		fail=$((fail + plan - seen))
	fi
	builtin echo "$name: $pass passed, $fail failed, $skipped skipped" | tee -a "$work/summary"
}

rm -f "$work/summary"
run bubblewrap "$real"
run dshbox "$work/as-bwrap/bwrap"

# dshbox against bubblewrap: a case bubblewrap passes and dshbox does not is a regression unless
# it is a known failure (a line of known-failures: the case's text after "ok - ", a tab, why).
known=$here/known-failures
status=0
while IFS= read -r line; do
	c=${line#ok }; c=${c#- }
	if grep -qxF "not $line" "$work/dshbox.tap" || ! grep -qxF "$line" "$work/dshbox.tap"; then
		if grep -qF -- "$c	" "$known" 2>/dev/null; then
			builtin echo "KNOWN: $c"
		else
			builtin echo "REGRESSION: $c (passes with bubblewrap, not with dshbox)"
			status=1
		fi
	elif grep -qF -- "$c	" "$known" 2>/dev/null; then
		builtin echo "NOW PASSES: $c (take it off tests/bwrap-suite/known-failures)"
	fi
done < <(grep -E '^ok ' "$work/bubblewrap.tap" | grep -v '# SKIP' | sort -u)
[ "$status" = 0 ] && builtin echo "dshbox fails no case bubblewrap passes but the known ones"
grep -hE '^(bubblewrap|dshbox): [0-9]+ passed' "$work/summary"
exit "$status"
