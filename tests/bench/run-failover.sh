#!/usr/bin/env bash
# Port failover with STag migration (issue 9), side by side in one run:
# rnic-perf write_bw over two ports per stack, port 0's cable pulled at 50%,
# over iWARP and RoCEv2, N runs each, plus a run of each with no failure
# as the baseline. Prints one JSON object: per transport the failover_ms
# of every run (link down -> first byte placed through the survivor), the
# migration query time (asked -> answered, the slowest of the run) and the
# throughput of the failing and the clean run.
# Usage: tests/bench/run-failover.sh [build-dir] [runs]
set -eu
build=${1:-build}
runs=${2:-5}
perf=$build/apps/rnic-perf/rnic-perf
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }
parts=""
for tr in iwarp roce; do
	fo="" q="" g=""
	for i in $(seq "$runs"); do
		line=$("$perf" write_bw --transport "$tr" --loopback --ports 2 --fail-port 0 \
			--fail-at 50 --size 65536 --iters 20000 --verify --json 2>/dev/null | tail -1)
		echo "$line" | grep -q '"verified": true' || { echo "{\"error\": \"$tr run $i not verified\"}"; exit 1; }
		fo="$fo${fo:+, }$(echo "$line" | field failover_ms)"
		q="$q${q:+, }$(echo "$line" | field migration_query_us_max)"
		g="$g${g:+, }$(echo "$line" | field gbps)"
	done
	clean=$("$perf" write_bw --transport "$tr" --loopback --ports 2 --size 65536 \
		--iters 20000 --verify --json 2>/dev/null | tail -1 | field gbps)
	parts="$parts${parts:+, }\"$tr\": {\"failover_ms\": [$fo], \"migration_query_us_max\": [$q], \"gbps_with_failover\": [$g], \"gbps_clean\": $clean}"
done
echo "{$parts}"
