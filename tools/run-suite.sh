#!/usr/bin/env bash
# Run one Criterion suite with a wall-clock bound, so that a test that hangs fails the suite with its
# name instead of holding CI until its own limit ends it without a word (a Criterion runner waits on
# a stuck worker for ever unless the test set .timeout).
#
#   tools/run-suite.sh NAME LIMIT_S LOG RUNNER [ARGS...]
#
# The console shows what it showed before (--verbose's per-test start, pass and banner lines are in LOG
# only).  On the way out, when the suite did not pass: the failing tests, and on a timeout the tests
# that had started and not ended.  The exit status is the runner's (124 on the timeout).
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: $0 NAME LIMIT_S LOG RUNNER [ARGS...]" >&2; exit 2; }
name=$1 limit=$2 log=$3
shift 3
mkdir -p "$(dirname "$log")"
: > "$log"

# The runner writes to a file, not a pipe: a process a test left behind then holds the file, not the
# caller's output, and cannot keep whoever reads that output waiting.
timeout -k 30 "$limit" "$@" --verbose > "$log" 2>&1 < /dev/null &
pid=$!
tail -n +1 -s 0.5 --pid="$pid" -f "$log" | grep --line-buffered -v -E '^\[(RUN |PASS)\] |^\[====\] Running |^\[----\] Criterion v'
wait "$pid"
rc=$?

if [ "$rc" != 0 ]; then
	ended() { sed -n -E 's/^\[(PASS|FAIL|SKIP|ERR |WARN)\] ([^:]+::[^:]+).*/\2/p' "$log" | sort -u; }
	failed=$(sed -n -E 's/^\[FAIL\] ([^:]+::[^: ]+).*/\1/p' "$log" | sort -u | tr '\n' ' ')
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		running=$(sed -n -E 's/^\[RUN \] (.*)$/\1/p' "$log" | sort -u | comm -23 - <(ended) | tr '\n' ' ')
		echo "$name: the suite did not end within ${limit}s; still running: ${running:-(none recorded)}" |
			tee -a "$log"
	fi
	echo "$name: exit $rc; failing: ${failed:-(none recorded)}; the whole log: $log" | tee -a "$log"
fi
exit "$rc"
