#!/bin/sh
# Large policies (issue 24): 200,000 literal rules in a 3.6 MB dshbox.yml, a quarter each in 1,000
# absent directories, in /usr (absent names in a directory that exists), in the workspace and in
# its absent subdirectories.  Wall-clock and CPU seconds of `check` (one path), `explain` and
# `explain --json`: each the median of 5.  The goal is under 2 s for check and explain; the unit
# test policy_scale counts the index's work, this measures the time.
set -eu
D="$BUILD/dshbox"
N=${DSHBOX_BENCH_RULES:-200000}
S=$(mktemp -d /var/tmp/dshbox-bench-policy.XXXXXX)
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/ws/src" "$S/ws/s"
awk -v n="$N" 'BEGIN {
	print "mode: workspace-write"; print "access: |"
	for (i = 0; i < n; i++) {
		k = i % 4
		if (k == 0) printf "  -- s/d%d/f%d\n", i % 1000, i
		else if (k == 1) printf "  r- /nx/d%d/%d\n", i % 1000, i
		else if (k == 2) printf "  -- /usr/f%d\n", i
		else printf "  r- src/f%d\n", i
	}
}' > "$S/big.yml"
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }
measure() {
	: > "$S/wall"
	: > "$S/cpu"
	for _ in 1 2 3 4 5; do
		/usr/bin/time -f '%e %U %S' -o "$S/t" "$D" "$@" > /dev/null
		read -r e u s < "$S/t"
		echo "$e" >> "$S/wall"
		echo "$u $s" | awk '{ print $1 + $2 }' >> "$S/cpu"
	done
	echo "wall $(median < "$S/wall") s  cpu $(median < "$S/cpu") s"
}
echo "-- $N rules ($(wc -c < "$S/big.yml") bytes), median of 5"
cd "$S/ws"
echo "   check         $(measure check --config "$S/big.yml" --workspace . --read src/f3)"
echo "   explain       $(measure explain --config "$S/big.yml" --workspace .)"
echo "   explain json  $(measure explain --json --config "$S/big.yml" --workspace .)"
