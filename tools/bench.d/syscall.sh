#!/bin/sh
# The hardening's cost on hot calls (tools/bench/bench_syscall.c): getppid (seccomp's action cache:
# no argument check on it), openat+close (Landlock walks the path on every open) and stat (no
# Landlock hook), each measured bare, under dshbox's seccomp filter alone, under the linux-ns
# Landlock grant set alone, under both, and inside `dshbox run` (linux-ns) and
# `dshbox run --backend landlock`.  Configurations alternate within every repetition and each
# figure is the minimum over the repetitions (the least disturbed run), so a busy machine hurts all
# alike.  Goals: getppid <= 1.05x bare; open <= 1.1x bare without Landlock; Landlock's own cost shown.
set -eu
D="$BUILD/dshbox"
B="$BUILD/bench/bench_syscall"
REPS=${DSHBOX_BENCH_REPS:-15}
ITERS=${DSHBOX_BENCH_ITERS:-50000}
P=/usr/lib/os-release
[ -e "$P" ] || P=/etc/passwd
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
cd "$S"
echo "-- ns per call, minimum of $REPS repetitions of $ITERS calls (path: $P)"
printf '   %-8s %9s %9s %9s %9s %9s %9s\n' op bare seccomp landlock both run run-ll
for op in getppid open stat; do
	: > "$S/$op"
	r=0
	while [ $r -lt "$REPS" ]; do
		printf '%s %s %s %s %s %s\n' \
			"$("$B" "$op" "$ITERS" "$P")" \
			"$("$B" --seccomp "$op" "$ITERS" "$P")" \
			"$("$B" --landlock "$S" "$op" "$ITERS" "$P")" \
			"$("$B" --seccomp --landlock "$S" "$op" "$ITERS" "$P")" \
			"$("$D" run --workspace "$S" -- "$B" "$op" "$ITERS" "$P")" \
			"$("$D" run --backend landlock --workspace "$S" -- "$B" "$op" "$ITERS" "$P")" >> "$S/$op"
		r=$((r + 1))
	done
	awk -v op="$op" '
		NR == 1 { for (i = 1; i <= 6; i++) m[i] = $i }
		{ for (i = 1; i <= 6; i++) if ($i < m[i]) m[i] = $i }
		END {
			printf "   %-8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", op, m[1], m[2], m[3], m[4], m[5], m[6]
			printf "   %-8s %9s %8.3fx %8.3fx %8.3fx %8.3fx %8.3fx  (against bare)\n", "", "1", m[2]/m[1], m[3]/m[1], m[4]/m[1], m[5]/m[1], m[6]/m[1]
		}' "$S/$op"
done
echo "   seccomp = the filter alone (the run without Landlock); landlock = the grant set alone (its own cost);"
echo "   run = dshbox run (linux-ns: namespaces, Landlock, seccomp); run-ll = dshbox run --backend landlock"
