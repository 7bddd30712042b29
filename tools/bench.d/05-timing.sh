#!/bin/sh
# The timing view of a typical start (dshbox run --timing -- /bin/true, workspace-write, broker on, no
# rules): the median of each stage over RUNS runs, in the order the stages run, and the median total
# (their sum).  Shows where a start goes on this kernel; compare kernels or builds with it.
set -eu
D="$BUILD/dshbox"
RUNS=${DSHBOX_BENCH_RUNS:-${BENCH_N:-60}}
S=$(mktemp -d /var/tmp/dshbox-bench.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
cd "$S"
for backend in ${DSHBOX_BENCH_TIMING_BACKENDS:-auto}; do
	echo "-- dshbox run --backend $backend --timing -- /bin/true: median us per stage of $RUNS runs"
	i=0
	while [ $i -lt "$RUNS" ]; do
		"$D" run --backend "$backend" --workspace "$S" --timing -- /bin/true 2>&1 >/dev/null |
			sed -n "s/^dshbox: timing: //p" | awk -v run=$i '{ u = $NF; $NF = ""; sub(/ $/, ""); print run "\t" NR "\t" $0 "\t" u }'
		i=$((i + 1))
	done > "$S/t"
	awk -F '\t' '
		{ k = $2 "\t" $3; v[k, ++n[k]] = $4; if (!(k in seen)) { seen[k] = 1; order[++m] = k } tot[$1] += $4 }
		function median(k,   c, i, j, a, t) {
			c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
			for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return a[int((c + 1) / 2)]
		}
		END {
			for (i = 1; i <= m; i++) { split(order[i], p, "\t"); printf "   %-14s %7d\n", p[2], median(order[i]) }
			c = 0; for (r in tot) all[++c] = tot[r]
			for (i = 2; i <= c; i++) { t = all[i]; for (j = i - 1; j >= 1 && all[j] > t; j--) all[j + 1] = all[j]; all[j + 1] = t }
			printf "   %-14s %7d   (median of the per-run sums)\n", "total", all[int((c + 1) / 2)]
		}' "$S/t"
done
