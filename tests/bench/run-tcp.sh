#!/usr/bin/env bash
# TCP single-stream throughput, side by side in one run: iperf3 over the
# kernel's loopback, then rnic <-> rnic over net_ring (rnic-tcp --loopback,
# without SHA-256 so the transport is measured). Prints one JSON object.
# Usage: tests/bench/run-tcp.sh [build-dir] [bytes]
set -eu
build=${1:-build}
bytes=${2:-1G}
command -v iperf3 >/dev/null || { echo '{"error": "iperf3 not installed"}'; exit 1; }
iperf3 -s -1 -p 5399 >/dev/null 2>&1 &
sleep 0.5
k=$(iperf3 -c 127.0.0.1 -p 5399 -t 5 -J | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9, 3))')
r=$("$build/apps/rnic-tcp/rnic-tcp" source --loopback --bytes "$bytes" --no-verify --json 2>/dev/null | tail -1)
rc=$("$build/apps/rnic-tcp/rnic-tcp" source --loopback --bytes "$bytes" --no-verify --cc cubic --json 2>/dev/null | tail -1)
echo "{\"kernel_loopback_iperf3_gbps\": $k, \"rnic_ring_newreno\": $r, \"rnic_ring_cubic\": $rc}"
