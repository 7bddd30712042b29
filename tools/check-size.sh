#!/bin/sh
# Rooms small enough to review (STYLE.md 20, issue 21): no function over 150 lines and no file
# over 1,000 in the production sources. Run by tools/check-layers.sh, so `make lint` fails on an
# offender; prints one line per offender and exits 1.
#
# A function is measured as the kernel style lays it out: from the first line of its signature
# (the last line at column 0 that starts with a name before the body's `{`) to the `}` at column
# 0 that closes it. The body's own `{` stands alone at column 0, so struct and array initialisers
# (whose `{` ends a line) are not mistaken for functions.
#
# Usage: tools/check-size.sh [file...]   (no files: every production source git knows of)
set -eu
cd "$(dirname "$0")/.."
MAX_FUNCTION=${MAX_FUNCTION:-150}
MAX_FILE=${MAX_FILE:-1000}
# The Makefile's LIB_DIRS, the front end and the public headers; tests/ and tools/ are not shipped.
PRODUCTION="common policy ns landlock seccomp fence broker seatbelt winacl supervisor bwrap cli include"

if [ $# -eq 0 ]; then
	set --
	# Untracked files count too, so that a new file is checked before it is committed.
	for f in $(git ls-files --cached --others --exclude-standard -- \
		$(for d in $PRODUCTION; do printf '%s/*.c %s/*.h ' "$d" "$d"; done) | sort -u); do
		if [ -f "$f" ]; then set -- "$@" "$f"; fi
	done
fi
# No files: nothing to measure (and awk would read stdin).
[ $# -gt 0 ] || exit 0

awk -v max_fn="$MAX_FUNCTION" -v max_file="$MAX_FILE" '
function report_file() {
	if (file != "" && lines > max_file) {
		printf "%s:1 (file) %d lines, over %d\n", file, lines, max_file
		bad = 1
	}
}
FNR == 1 {
	report_file()
	file = FILENAME
	sig = 0
	body = 0
}
{ lines = FNR }
# A line that starts with a name at column 0, outside a body: a signature may begin here.
!body && /^[A-Za-z_]/ {
	sig = FNR
	text = $0
	next
}
# Continuation lines of a signature (indented parameters) join its text, for the name.
!body && sig && /^[ \t]/ { text = text " " $0; next }
!body && /^\{/ && sig {
	body = 1
	start = sig
	name = text
	sub(/\(.*/, "", name)
	sub(/.*[^A-Za-z0-9_]/, "", name)
	next
}
body && /^\}/ {
	body = 0
	sig = 0
	n = FNR - start + 1
	if (n > max_fn) {
		printf "%s:%d %s %d lines, over %d\n", file, start, name, n, max_fn
		bad = 1
	}
}
END {
	report_file()
	exit bad
}
' "$@"
