#!/bin/sh
# dshbox serve --stdio: round trip of a 4 KiB read (goal <= 50 us median) and requests per second,
# against a bare open+read server on the same pipes (build/bench/bench_serve), measured in the same run.
set -eu
"$BUILD/bench/bench_serve" "$BUILD/dshbox" "${DSHBOX_BENCH_SERVE_ROUNDS:-20000}"
