#!/bin/bash
# With --json a program's stdout is JSON and nothing else (issue 18): a brief
# run of each program that takes --json (rnic-tcp, rnic-perf, rnic-soak) over
# in-process ring ports, with stdout alone handed to Python's JSON parser and
# stderr kept apart. Logs, the EAL file-prefix line among them, belong on
# stderr; a stray line on stdout makes `... --json | jq` fail, and this test.
# rnic-cp's --json needs a gateway: gateway_cp.sh runs it. Each program
# must also leave no EAL runtime directory behind.
set -uo pipefail
b=${RNIC_BUILD_DIR:?}/apps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fails=0

# only_json NAME CMD...: CMD exits 0 and its stdout is one JSON value per
# line, at least one
only_json() {
	local name=$1 rc
	shift
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "FAIL: $name: exit status $rc"
		tail -5 "$work/err"
		fails=$((fails + 1))
	elif ! python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
if not lines:
    sys.exit("stdout is empty")
for n, l in enumerate(lines, 1):
    try:
        json.loads(l)
    except ValueError as e:
        sys.exit("stdout line %d is not JSON (%s): %r" % (n, e, l))
' "$work/out"; then
		echo "FAIL: $name: stdout is not only JSON"
		fails=$((fails + 1))
	elif ! left_nothing "$name"; then
		fails=$((fails + 1))
	else
		echo "ok: $name: $(head -c 160 "$work/out")"
		pass=$((pass + 1))
	fi
}

# The program removed its EAL runtime directory at exit (DPDK 22.11 leaves
# it: about 3 MB a process, rnic-PID each). Root's runtime base only.
left_nothing() {
	local prefix
	prefix=$(sed -n 's/^rnic: EAL file-prefix \([^ ]*\).*/\1/p' "$work/err" | head -1)
	[ -n "$prefix" ] || { echo "FAIL: $1: no EAL file-prefix line on stderr"; return 1; }
	[ "$(id -u)" = 0 ] || return 0
	if [ -e "/var/run/dpdk/$prefix" ]; then
		echo "FAIL: $1: /var/run/dpdk/$prefix is still there after exit"
		return 1
	fi
}

only_json "rnic-tcp --loopback" "$b/rnic-tcp/rnic-tcp" source --loopback --bytes 4M --json
only_json "rnic-perf --loopback iwarp" "$b/rnic-perf/rnic-perf" --loopback --transport iwarp \
	--test write_bw -n 100 --json
only_json "rnic-perf --loopback roce" "$b/rnic-perf/rnic-perf" --loopback --transport roce \
	--test write_lat -n 100 --json
only_json "rnic-soak" "$b/rnic-soak/rnic-soak" --transport iwarp --ops 200 --json
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
