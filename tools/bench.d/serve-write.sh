#!/bin/sh
# dshbox serve --stdio: round trip of a 4 KiB write (goal <= 1 ms median), plain and with
# expectVersion, writes per second with 64 in flight to 64 files, against the bare durable atomic
# replacement in process (build/bench/bench_serve_write), measured in the same run.
set -eu
"$BUILD/bench/bench_serve_write" "$BUILD/dshbox" "${DSHBOX_BENCH_SERVE_WRITE_ROUNDS:-2000}"
