#!/usr/bin/env bash
# Forwarding-rate benchmark on net_null, side by side in one run:
# dpdk-testpmd io forwarding on one core, then rnic's fwd_bench on one core.
# Prints one JSON object. Usage: tests/bench/run-fwd.sh [build-dir] [seconds]
set -eu
build=${1:-build}
secs=${2:-5}
tp=$(timeout $((secs + 20)) dpdk-testpmd --in-memory --no-pci -l 0-1 \
	--vdev net_null0 --vdev net_null1 --log-level='*:error' -- \
	--forward-mode=io --auto-start --stats-period 1 --nb-cores=1 </dev/null 2>&1 &
	pid=$!; sleep "$secs"; kill -INT $pid; wait $pid) || true
tp_pps=$(printf '%s\n' "$tp" | sed -n 's/.*Rx-pps: *\([0-9]*\).*/\1/p' | tail -2 |
	awk '{s+=$1} END {if (NR) printf "%.2f", s / 1e6; else print "null"}')
rn=$("$build/tests/bench/fwd_bench" "$secs" | tail -1)
echo "{\"testpmd_io_fwd_mpps\": $tp_pps, \"rnic\": $rn}"
