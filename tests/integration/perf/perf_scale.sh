#!/bin/bash
# rnic-perf --loopback with many QPs (issue 21): RoCE with 4200 QP pairs
# (4200 QPs a stack, more than the 4096 a device held before) and iWARP
# with 1100 (more than rnic-perf's former limit of 256 pairs, and more than
# the 1024 connections an iWARP listener held before; each side's buffers
# under one MR; the sparse run loop), two 64-byte Writes each. A run must
# exit 0, complete every Write, and report the memory of a connected QP
# (qp_mem: per_qp, its queue entries' share, the rest). No figure is
# checked beyond being there and positive: the machine is shared.
set -uo pipefail
perf=${RNIC_BUILD_DIR:?}/apps/rnic-perf/rnic-perf
pass=0 fails=0

. "$(dirname "$0")/../common/check.sh"   # fail, json_num

# run TRANSPORT QPS ITERS
run() {
	local tr=$1 qps=$2 iters=$3 out rc line f v
	out=$("$perf" write_bw --loopback --transport "$tr" --qps "$qps" --size 64 \
		--iters "$iters" --tx-depth 4 --json 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$tr --qps $qps: exit status $rc" "$out"
		return
	fi
	line=$(echo "$out" | grep '^{' | tail -1)
	v=$(json_num "$line" completed)
	if [ "$v" != $((qps * iters)) ]; then
		fail "$tr --qps $qps: $v Writes completed, not $((qps * iters))" "$out"
		return
	fi
	for f in per_qp create connect queues beyond_queues; do
		v=$(json_num "$line" "$f")
		if [ -z "$v" ] || { [ "$f" != connect ] && [ "$v" -le 0 ]; }; then
			fail "$tr --qps $qps: qp_mem.$f is '${v}' in: $line" "$out"
			return
		fi
	done
	pass=$((pass + 1))
	echo "ok: $tr --qps $qps: $line"
}

run roce 4200 2
run iwarp 1100 2

echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
