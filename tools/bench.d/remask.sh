#!/bin/sh
# The host-side replacement window (SPEC 3.14): median time a replaced protected file shows its
# new inode inside a running sandbox before the keeper's mount covers it again.
set -eu
dir=$(mktemp -d /var/tmp/dshbox-bench-remask.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo secret > "$dir/.env"
cd "$dir"
"$BUILD/bench/bench_remask" host "$BUILD/dshbox" "$dir/.env" 50
