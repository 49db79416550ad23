#!/bin/bash
# rnic-perf conn_rate --loopback (issue 21): 2000 connections per
# transport, each connected (iWARP: TCP + MPA; RoCE: IB CM REQ/REP/RTU),
# one Send, disconnected and destroyed, 64 at once, with the workers run
# by the main thread and then on their own lcores. Every connection must
# complete and nothing may be left: no connected QP, no TCB once TIME_WAIT
# has passed. The rate is printed, not checked (the machine is shared).
set -uo pipefail
perf=${RNIC_BUILD_DIR:?}/apps/rnic-perf/rnic-perf
pass=0 fails=0

. "$(dirname "$0")/../common/check.sh"   # fail, json_num

# run TRANSPORT DRIVE CONNS
run() {
	local tr=$1 drive=$2 n=$3 out rc line v f
	out=$("$perf" conn_rate --loopback --transport "$tr" --drive "$drive" --conns "$n" \
		--window 64 --json 2>&1)
	rc=$?
	line=$(echo "$out" | grep '^{' | tail -1)
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		fail "$tr $drive: exit status $rc" "$out"
		return
	fi
	v=$(json_num "$line" completed)
	if [ "$v" != "$n" ]; then
		fail "$tr $drive: $v connections completed, not $n" "$out"
		return
	fi
	for f in qps_after tcbs_after; do
		v=$(json_num "$line" "$f")
		if [ "$v" != 0 ]; then
			fail "$tr $drive: $f is '$v'" "$out"
			return
		fi
	done
	pass=$((pass + 1))
	echo "ok: $tr $drive: $line"
}

run iwarp one 2000
run roce one 2000
run iwarp threaded 500
run roce threaded 500

echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
