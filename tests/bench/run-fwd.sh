#!/usr/bin/env bash
# Forwarding-rate benchmark on net_null, side by side in one run:
# dpdk-testpmd io forwarding on one core, then rnic's fwd_bench on one core.
# Prints one JSON object. Usage: tests/bench/run-fwd.sh [build-dir] [seconds]
set -eu
build=${1:-build}
secs=${2:-5}
# testpmd refuses --in-memory with --no-huge (legacy mem): own file prefix
tp=$(timeout $((secs + 20)) dpdk-testpmd --file-prefix "tpbench$$" --no-pci \
	--no-huge -m 2048 -l 0-1 --vdev net_null0 --vdev net_null1 \
	--log-level='*:error' -- --forward-mode=io --auto-start \
	--stats-period 1 --nb-cores=1 --total-num-mbufs=16384 </dev/null 2>&1 &
	pid=$!; sleep $((secs + 8)); kill -INT $pid; wait $pid) || true  # ~5 s of start-up with --no-huge
# last stats block: Rx-pps of port 0 and port 1 (io forward 0->1 and 1->0)
pps=$(printf '%s\n' "$tp" | sed -n 's/.*Rx-pps: *\([0-9]*\).*/\1/p' | grep -v '^0$' | tail -2)
tp_port=$(printf '%s\n' "$pps" | awk 'NR==1 {printf "%.2f", $1 / 1e6} END {if (!NR) print "null"}')
tp_total=$(printf '%s\n' "$pps" | awk '{s+=$1} END {if (NR) printf "%.2f", s / 1e6; else print "null"}')
rn=$("$build/tests/bench/fwd_bench" "$secs" | tail -1)
echo "{\"testpmd_io_fwd_mpps_per_port\": $tp_port, \"testpmd_io_fwd_mpps_total\": $tp_total, \"rnic\": $rn}"
