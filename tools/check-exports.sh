#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make lint: libdshbox.so exports exactly what include/dshbox/ declares DSH_PUBLIC (export.h).
#   - every function and extern object declared in a public header carries DSH_PUBLIC (a
#     declaration without it would be a promise the hidden-visibility build silently breaks);
#   - every name the library exports is one of them (nothing internal leaks, dsh_* or not);
#   - every one of them is exported (a public function defined nowhere, or defined in a file that
#     does not see its DSH_PUBLIC declaration and so stays hidden, fails here, not in a host's link).
# The version script's node names (tools/libdshbox.map) appear in the dynamic symbol table as
# absolute symbols of their own; they are the versions, not exports, and are the only other names
# allowed.  The headers are read after removing comments and preprocessor lines; a declaration the
# reader does not understand is an error rather than a guess.
#   usage: check-exports.sh LIBDSHBOX_SO [HEADER...]   (default: include/dshbox/*.h)
set -eu
so=${1:?usage: check-exports.sh LIBDSHBOX_SO [HEADER...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
map=$top/tools/libdshbox.map
[ $# -gt 0 ] || set -- "$top"/include/dshbox/*.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per file-scope declaration: "P F name" / "P D name" (public function / object),
# "U name file" (declared without DSH_PUBLIC); what cannot be read goes to stderr, exit 1.
awk '
function fail(msg) { print "check-exports: " msg > "/dev/stderr"; bad = 1 }
function decl(f, s, body,    head, p, name, marked, kind) {
	gsub(/[ \t\n]+/, " ", s)
	sub(/^ /, "", s)
	sub(/ $/, "", s)
	if (s == "")
		return
	if (s ~ /"/ || s ~ /\/\//) {
		fail(f ": cannot read: " s)
		return
	}
	if (s ~ /^typedef /)
		return
	head = s
	sub(/ ?\{.*/, "", head)
	if (s ~ /\{\}/ && !body) {
		if (s !~ /\{\}$/)
			fail(f ": a definition with a declarator: " s)
		return # a struct, union or enum
	}
	marked = (s ~ /^DSH_PUBLIC /)
	if (!marked && s ~ /(^|[^A-Za-z0-9_])DSH_PUBLIC([^A-Za-z0-9_]|$)/) {
		fail(f ": DSH_PUBLIC must open the declaration: " s)
		return
	}
	if (s ~ /^(DSH_PUBLIC )?static /) {
		if (marked)
			fail(f ": DSH_PUBLIC on a static: " s)
		return # a static inline function is compiled into its caller
	}
	if (body) {
		fail(f ": a function defined in a public header must be static inline: " head)
		return
	}
	if (head ~ /^(struct|union|enum) [A-Za-z0-9_]+$/)
		return # an opaque type
	if (index(head, "(")) {
		p = substr(head, 1, index(head, "(") - 1)
		kind = "F"
	} else if (head ~ /^(DSH_PUBLIC )?extern /) {
		p = head
		sub(/ ?=.*/, "", p)
		sub(/ ?\[.*/, "", p)
		kind = "D"
	} else {
		fail(f ": cannot read: " s)
		return
	}
	name = p
	sub(/.*[^A-Za-z0-9_]/, "", name)
	if (name !~ /^dsh_[a-z0-9_]+$/) {
		fail(f ": not a dsh_ function or object: " s)
		return
	}
	if (marked)
		print "P", kind, name
	else
		print "U", name, f
}
function scan(f, t,    out, i, j, rest, cmt, n, lines, pp, code, len, c, depth, stmt) {
	out = ""
	while ((i = index(t, "/*")) > 0) {
		rest = substr(t, i + 2)
		j = index(rest, "*/")
		if (j == 0) {
			fail(f ": unterminated comment")
			return
		}
		out = out substr(t, 1, i - 1) " "
		t = substr(rest, j + 2)
	}
	n = split(out t, lines, "\n")
	code = ""
	pp = 0
	for (i = 1; i <= n; i++) {
		if (pp || lines[i] ~ /^[ \t]*#/) {
			pp = (lines[i] ~ /\\$/)
			continue
		}
		code = code " " lines[i]
	}
	# File-scope statements: a ; at depth 0 ends one, a body reads as {}; a body closed at
	# depth 0 right after a parameter list is a function definition.
	depth = 0
	stmt = ""
	len = length(code)
	for (i = 1; i <= len; i++) {
		c = substr(code, i, 1)
		if (c == "{") {
			if (depth++ == 0)
				stmt = stmt "{"
		} else if (c == "}") {
			if (--depth == 0) {
				if (stmt ~ /\) ?\{$/) {
					decl(f, stmt "}", 1)
					stmt = ""
				} else {
					stmt = stmt "}"
				}
			}
		} else if (depth == 0) {
			if (c == ";") {
				decl(f, stmt, 0)
				stmt = ""
			} else {
				stmt = stmt c
			}
		}
	}
	if (depth != 0 || stmt ~ /[^ \t]/)
		fail(f ": unbalanced braces or a declaration without its semicolon")
}
FNR == 1 {
	if (NR > 1)
		scan(file, text)
	file = FILENAME
	text = ""
}
{ text = text $0 "\n" }
END {
	if (NR > 0)
		scan(file, text)
	exit bad
}' "$@" > "$tmp/decls"

sed -n 's/^P //p' "$tmp/decls" | sort -u > "$tmp/kinds"
sed 's/^[FD] //' "$tmp/kinds" | sort -u > "$tmp/public"
if [ ! -s "$tmp/public" ]; then
	echo "check-exports: no DSH_PUBLIC declaration in $*" >&2
	exit 1
fi

nodes=$(sed -n 's/^\([A-Z][A-Z0-9_.]*\) {$/\1/p' "$map")
nm -D --defined-only "$so" > "$tmp/nm"
awk '{ sub(/@.*/, "", $3); print $2, $3 }' "$tmp/nm" | while read -r type name; do
	if [ "$type" = A ] && printf '%s\n' "$nodes" | grep -qx "$name"; then
		continue
	fi
	echo "$name"
done | sort -u > "$tmp/exported"
if [ ! -s "$tmp/exported" ]; then
	echo "check-exports: $so exports nothing (nm -D failed?)" >&2
	exit 1
fi

fail=0
unmarked=$(sed -n 's/^U //p' "$tmp/decls")
if [ -n "$unmarked" ]; then
	printf '%s\n' "$unmarked" | while read -r name file; do
		echo "check-exports: $name is declared in ${file#"$top"/} without DSH_PUBLIC" >&2
	done
	fail=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/public" | paste -s -d ' ' -)
if [ -n "$extra" ]; then
	echo "check-exports: $so exports names include/dshbox/ does not declare DSH_PUBLIC: $extra" >&2
	fail=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/public" | paste -s -d ' ' -)
if [ -n "$missing" ]; then
	echo "check-exports: declared DSH_PUBLIC but not exported by $so (defined nowhere, or where" \
		"the definition does not see the public header): $missing" >&2
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "check-exports: $so exports exactly the $(wc -l < "$tmp/public") DSH_PUBLIC declarations" \
	"(functions $(grep -c '^F' "$tmp/kinds"), objects $(grep -c '^D' "$tmp/kinds"))"
