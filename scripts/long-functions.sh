#!/usr/bin/env bash
# List C functions longer than a limit: scripts/long-functions.sh [LIMIT] [DIR...]
# (LIMIT 80, DIR lib). A function runs from its opening line (column 0, with
# a parenthesis, no semicolon) to its closing brace at column 0, both
# counted; the style keeps bodies at one tab, so this is what a reader sees.
# Prints "lines file:line name", longest first; exits 1 when any is listed.
set -u
cd "$(dirname "$0")/.."
limit=${1:-80}
shift $(( $# > 0 ? 1 : 0 ))
dirs=${*:-lib}
out=$(find $dirs -name '*.c' -print0 | xargs -0 awk -v limit="$limit" '
	FNR == 1 { start = 0 }
	start == 0 && /^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !/^(typedef|enum|#)/ {
		start = FNR; name = $0; sub(/\(.*/, "", name)
		n = split(name, w, /[ *]+/); name = w[n]; next
	}
	start > 0 && /^}/ {
		len = FNR - start + 1
		if (len > limit)
			print len, FILENAME ":" start, name
		start = 0
	}' | sort -rn)
[ -z "$out" ] && exit 0
echo "$out"
exit 1
