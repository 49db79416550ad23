#!/usr/bin/env bash
# Issue 3's TCP benchmark, side by side in one run, one JSON object:
#   throughput  iperf3 over the kernel's loopback, then rnic <-> rnic over
#               net_ring (rnic-tcp --loopback, without SHA-256 so the
#               transport is measured), NewReno and CUBIC, and NewReno
#               with both stacks on the main thread (--drive one)
#   handshakes  tests/bench/tcp_handshake (rnic's passive worker, and the
#               kernel over loopback in the same program)
#   cookies     tests/bench/tcp_syn_cookies (SYN-cookie replies of one worker)
# Handshakes and cookies run twice: the measured worker on its lcore and
# the other stack on the main thread, then both on the main thread (--one:
# one CPU, no cache lines crossing between cores).
# The rnic tools run to completion (one busy thread per CPU); the load
# average before and after is part of the output, since the machine is
# shared.
# Usage: tests/bench/run-tcp.sh [build-dir] [bytes] [seconds]
set -eu
build=${1:-build}
bytes=${2:-1G}
secs=${3:-3}
command -v iperf3 >/dev/null || { echo '{"error": "iperf3 not installed"}'; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
l0=$(load)
iperf3 -s -1 -p 5399 >/dev/null 2>&1 &
sleep 0.5
k=$(iperf3 -c 127.0.0.1 -p 5399 -t 5 -J | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9, 3))')
wait
r=$("$build/apps/rnic-tcp/rnic-tcp" source --loopback --bytes "$bytes" --no-verify --json 2>/dev/null | tail -1)
rc=$("$build/apps/rnic-tcp/rnic-tcp" source --loopback --bytes "$bytes" --no-verify --cc cubic --json 2>/dev/null | tail -1)
r1=$("$build/apps/rnic-tcp/rnic-tcp" source --loopback --bytes "$bytes" --no-verify --drive one --json 2>/dev/null | tail -1)
hs=$("$build/tests/bench/tcp_handshake" --seconds "$secs" 2>/dev/null | tail -1)
hs1=$("$build/tests/bench/tcp_handshake" --seconds "$secs" --one --no-kernel 2>/dev/null | tail -1)
sc=$("$build/tests/bench/tcp_syn_cookies" --seconds "$secs" 2>/dev/null | tail -1)
sc1=$("$build/tests/bench/tcp_syn_cookies" --seconds "$secs" --one 2>/dev/null | tail -1)
l1=$(load)
echo "{\"loadavg_before\": [$l0], \"kernel_loopback_iperf3_gbps\": $k, \"rnic_ring_newreno\": $r, \"rnic_ring_cubic\": $rc, \"rnic_ring_newreno_one_thread\": $r1, \"handshakes\": $hs, \"handshakes_one_thread\": $hs1, \"syn_cookies\": $sc, \"syn_cookies_one_thread\": $sc1, \"loadavg_after\": [$l1]}"
