#!/bin/sh
# The broker's walk before a directory rename (SPEC 3.12, broker/subtree.c): ms per `mv` of a tree of
# 100,000 entries back and forth inside one run, where a rule reaches every name below it
# (-- **/*.pem: every entry read), where rules prune it (-- keys/*.pem: nothing read), and with the
# broker off.  Medians over the renames of each run; the mv process itself is in every figure.
set -eu
D="$BUILD/dshbox"
N=${DSHBOX_BENCH_RENAMES:-10}
S=$(mktemp -d /var/tmp/dshbox-bench-subtree.XXXXXX)
chmod 755 "$S"
trap 'rm -rf "$S"' EXIT
mkdir "$S/ws" "$S/ws/t"
d=0
while [ $d -lt 100 ]; do
	mkdir "$S/ws/t/d$d"
	(cd "$S/ws/t/d$d" && seq -f 'f%g' 1 999 | xargs touch)
	d=$((d + 1))
done
printf 'runtimeBroker: false\n' > "$S/off.yml"
printf 'runtimeBroker: true\n' > "$S/on.yml"
cat > "$S/loop.sh" <<'LOOP'
i=0
while [ $i -lt "$1" ]; do
	s=$(date +%s%N); mv t u; e=$(date +%s%N); echo $(((e - s) / 1000))
	s=$(date +%s%N); mv u t; e=$(date +%s%N); echo $(((e - s) / 1000))
	i=$((i + 1))
done
LOOP
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'; }
echo "-- mv of a directory of $(find "$S/ws/t" | wc -l) entries, ms (median of $((2 * N)))"
every=$(cd "$S/ws" && "$D" run --config "$S/on.yml" --workspace . --access '-- **/*.pem' -- sh "$S/loop.sh" "$N" | median)
pruned=$(cd "$S/ws" && "$D" run --config "$S/on.yml" --workspace . --access '-- keys/*.pem' -- sh "$S/loop.sh" "$N" | median)
off=$(cd "$S/ws" && "$D" run --config "$S/off.yml" --allow-degraded --workspace . -- sh "$S/loop.sh" "$N" | median)
echo "   every entry read $every   pruned $pruned   broker off $off"
