#!/bin/sh
# The layering, checked mechanically (make lint):
#  - nothing includes a layer above its own (cli > bwrap > supervisor > mechanisms > policy >
#    common; the mechanisms ns/ landlock/ seccomp/ fence/ broker/ seatbelt/ winacl/ are one layer,
#    and none of them
#    includes another: what two mechanisms share belongs below them or is composed above);
#  - cli/ sees the library through the public headers (include/dshbox/): it never includes
#    policy/policy.h, the compiled policy's in-tree layout (it does fill in the configuration and
#    run options whose fields policy/options.h keeps from hosts);
#  - the library never prints, exits or reads the environment: only cli/ may;
#  - no production function over 150 lines, no file over 1,000 (tools/check-size.sh).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
fail=0

rank() {
	case "$1" in
	cli) echo 5 ;;
	bwrap) echo 4 ;;
	supervisor) echo 3 ;;
	ns | landlock | seccomp | fence | broker | seatbelt | winacl | net) echo 2 ;;
	policy) echo 1 ;;
	common | dshbox) echo 0 ;;
	*) echo -1 ;;
	esac
}

for f in $(git ls-files '*.c' '*.h' | grep -Ev '^(tests|tools)/'); do
	dir=${f%%/*}
	[ "$dir" = include ] && dir=dshbox
	mine=$(rank "$dir")
	[ "$mine" -ge 0 ] || continue
	for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
		theirs=$(rank "$inc")
		if [ "$theirs" -gt "$mine" ]; then
			echo "layering: $f includes $inc/ (a layer above its own)"
			fail=1
		elif [ "$mine" -eq 2 ] && [ "$theirs" -eq 2 ] && [ "$inc" != "$dir" ]; then
			echo "layering: $f includes $inc/ (one mechanism including another)"
			fail=1
		fi
	done
done

for f in $(git ls-files 'cli/*.c' 'cli/*.h'); do
	if grep -q '^#include "policy/policy.h"' "$f"; then
		echo "layering: $f includes policy/policy.h (the CLI uses the query API of include/dshbox/)"
		fail=1
	fi
done

# What only the command line may call or touch, with the names _FORTIFY_SOURCE compiles printf and
# friends to (__printf_chk ...), and the standard streams themselves (fprintf(stderr, ...) refers
# to stderr; a memstream's fprintf does not).
LIBRARY_MAY_NOT='exit|getenv|secure_getenv|printf|puts|putchar|perror|vprintf|__printf_chk|__vprintf_chk|stdout|stderr'
# The check itself, on a scratch object built the way the library is: a fortified printf and a
# fprintf to stderr must both be seen.
probe=$(mktemp -d)
printf '#include <stdio.h>\nvoid f(int x) { printf("%%d\\n", x); fprintf(stderr, "%%d", x); }\n' > "$probe/p.c"
if ${CC:-cc} -O2 -D_FORTIFY_SOURCE=2 -c -o "$probe/p.o" "$probe/p.c" 2>/dev/null; then
	seen=$(nm -u "$probe/p.o" | awk '{print $2}' | grep -cE "^($LIBRARY_MAY_NOT)$" || true)
	if [ "$seen" -lt 2 ]; then
		echo "layering: the library check misses a fortified printf or stderr ($(nm -u "$probe/p.o" | awk '{print $2}' | tr '\n' ' '))"
		fail=1
	fi
fi
rm -rf "$probe"
if [ -f "$BUILD/libdshbox.a" ]; then
	bad=$(nm -u "$BUILD/libdshbox.a" 2>/dev/null | awk '{print $2}' |
		grep -E "^($LIBRARY_MAY_NOT)$" | sort -u || true)
	if [ -n "$bad" ]; then
		echo "layering: libdshbox.a calls what only the command line may: $(echo $bad)"
		fail=1
	fi
fi

# Rooms small enough to review (issue 21): no function over 150 lines, no file over 1,000.
tools/check-size.sh || fail=1
exit $fail
