# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by the end-to-end scripts of real clients (tests/srt/run.sh, tests/codex/run.sh), sourced
# after they set e2e_name: a printed skip that fails under DSHBOX_TEST_NO_SKIP=1 (CI), a check
# counted and printed, and the closing count, whose status is the script's.

failures=0
checks=0

skip() {
	echo "SKIP: $e2e_name end-to-end: $*"
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

# The tools a script needs, each a skip naming it when missing.
need_tools() {
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t is not installed (tools/install-deps.sh installs it)"
	done
}

e2e_summary() {
	echo "$e2e_name end-to-end: $((checks - failures)) of $checks checks passed"
	[ "$failures" = 0 ]
}
