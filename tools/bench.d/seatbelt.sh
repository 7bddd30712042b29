#!/bin/sh
# Seatbelt profile generation (pure; no peer on Linux).
set -eu
"$BUILD/bench/bench_sbpl"
