#!/bin/sh
# What attaching each seccomp program a run loads costs (build/bench/bench_seccomp_attach): the
# deny program, the broker's with its listener, the two joined as the command gets them, init's own
# allow-list, against a one-instruction program (the call's floor: copy, JIT, action cache).
set -eu
"$BUILD/bench/bench_seccomp_attach" "${BENCH_N:-30}"
