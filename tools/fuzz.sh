#!/bin/sh
# make fuzz: each libFuzzer harness of tests/fuzz/ first on its regression inputs
# (tests/fuzz/regress/NAME/: each must pass), then SECONDS seconds on a copy of its seed corpus
# (tests/fuzz/corpus/NAME/) in BUILD/fuzz/work/NAME, so that nothing is written into the
# repository.  FUZZ_SEED=N fixes libFuzzer's seed (CI: a run that repeats), else each run
# explores afresh.  Any crash, leak, timeout or sanitizer report fails it; its input is left in
# BUILD/fuzz/artifacts/NAME/.  Usage: tools/fuzz.sh BUILD SECONDS NAME...
set -eu
cd "$(dirname "$0")/.."
build=$1 seconds=$2
shift 2
[ $# -gt 0 ] || { echo "fuzz: no harness under tests/fuzz/" >&2; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
summary=$build/fuzz/summary.txt
: > "$summary"
fail=0
for name in "$@"; do
	bin=$build/fuzz/$name
	work=$build/fuzz/work/$name
	art=$build/fuzz/artifacts/$name
	rm -rf "$work" && mkdir -p "$work" "$art"
	if [ -d "tests/fuzz/regress/$name" ] && [ -n "$(ls -A "tests/fuzz/regress/$name")" ]; then
		echo "fuzz: $name: regression inputs"
		if ! "$bin" -runs=0 "tests/fuzz/regress/$name"/* >"$build/fuzz/$name.regress.log" 2>&1; then
			tail -40 "$build/fuzz/$name.regress.log" >&2
			echo "fuzz: $name: a regression input fails (tests/fuzz/regress/$name)" >&2
			fail=1
			continue
		fi
	fi
	[ -d "tests/fuzz/corpus/$name" ] && cp tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null || true
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	echo "fuzz: $name: $seconds s"
	log=$build/fuzz/$name.log
	seed=
	[ -z "${FUZZ_SEED:-}" ] || seed=-seed=$FUZZ_SEED
	if "$bin" $dict $seed -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" >"$log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		echo "fuzz: $name: ok, $execs executions, $cov" | tee -a "$summary"
	else
		tail -60 "$log" >&2
		echo "fuzz: $name: FAILED (input in $art/, log $log)" | tee -a "$summary" >&2
		fail=1
	fi
done
exit $fail
