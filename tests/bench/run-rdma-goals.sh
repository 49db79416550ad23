#!/usr/bin/env bash
# Issue 4's three benchmark goals, measured side by side in one run:
#   64 KiB RDMA Write bandwidth   >= 2x the kernel's TCP (iperf3 -l 64K over 127.0.0.1)
#   8 B Write one-way latency p50 <= 0.1x sockperf's (TCP ping-pong, 14 B,
#                                    sockperf's smallest message; half the RTT)
#   64 B Write rate               >= 5 M/s per worker
# rnic-perf --loopback runs each test over iWARP and RoCEv2, in three layouts:
#   split   a thread per stack, each on its own CPU, running its stack's
#           worker loop and its own QPs (like two hosts: what perftest
#           between two machines, and sockperf's two processes, do)
#   inline  one lcore per stack: stack A's worker on its own lcore, the main
#           thread runs stack B's worker loop and the QPs of both stacks
#   one     both stacks' workers run on the main thread (one CPU in all)
# with --busy-poll (a worker that sleeps when idle adds its wake-up to every
# latency). 64 KiB Writes run at MTU 1500 and at 9000 (--lo-mtu; rnic-perf's
# default is 9000: Linux's lo, which iperf3 uses, has an MTU of 65536); the
# other tests at the default.
# rnic-perf puts its pools on hugepages when enough are free (reserve them
# first: scripts/hugepages.sh, as root) and says which in each JSON line.
# Each rnic figure is the median of REPEAT runs (default 3), the
# kernel's likewise, alternating, so that a burst of other load hits both.
# Prints a table, and with --json one JSON object (every run's figure too).
# Usage: tests/bench/run-rdma-goals.sh [build-dir] [--json]
# Needs iperf3 and sockperf (Debian packages; not CI dependencies).
set -uo pipefail
build=${1:-build}
json=false
[ "${2:-}" = --json ] && json=true
perf=$build/apps/rnic-perf/rnic-perf
repeat=${REPEAT:-3}
[ -x "$perf" ] || { echo "no $perf: build first" >&2; exit 1; }
for t in iperf3 sockperf python3; do
	command -v $t >/dev/null || { echo "$t is not installed (apt-get install $t)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# field FILE NAME: a number from rnic-perf's JSON line
field() {
	python3 -c 'import json,sys
d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
v=d
for k in sys.argv[2].split("."):
    v=v[k]
print(v)' "$1" "$2" 2>/dev/null || echo null
}

iperf_gbps() {
	iperf3 -s -1 -p 5398 >/dev/null 2>&1 &
	sleep 0.3
	iperf3 -c 127.0.0.1 -p 5398 -l 64K -t 3 -J 2>/dev/null | python3 -c 'import json,sys
print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9, 3))' || echo null
	wait 2>/dev/null
}

sockperf_p50() {
	sockperf server --tcp -p 11198 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	sockperf ping-pong --tcp -p 11198 -m 14 -t 3 2>&1 |
		sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' | head -1
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

# run NAME ARGS...: one rnic-perf run, its JSON line kept in $tmp/NAME.N
runs=()
rnic() {
	local name=$1 n=$2
	shift 2
	timeout 120 "$perf" --loopback --busy-poll --json "$@" > "$tmp/$name.$n" 2>/dev/null ||
		echo '{"failed": true}' > "$tmp/$name.$n"
	runs+=("$name.$n")
}

median() { python3 -c 'import sys,statistics
v=[float(x) for x in sys.argv[1:] if x not in ("null","")]
print(round(statistics.median(v),3) if v else "null")' "$@"; }

layouts="split inline one"
declare -A K
for n in $(seq 1 "$repeat"); do
	K[iperf.$n]=$(iperf_gbps)
	K[sockperf.$n]=$(sockperf_p50)
	for tr in iwarp roce; do
		for d in $layouts; do
			rnic "bw64k-$tr-$d" "$n" write_bw --transport $tr --drive $d -s 65536 -n 20000 \
				--lo-mtu 1500
			rnic "bw64kj-$tr-$d" "$n" write_bw --transport $tr --drive $d -s 65536 -n 50000 \
				--lo-mtu 9000
			rnic "lat8-$tr-$d" "$n" write_lat --transport $tr --drive $d -s 8 -n 20000
			rnic "rate64-$tr-$d" "$n" write_bw --transport $tr --drive $d -s 64 -n 2000000
		done
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

kern_bw=$(median $(for n in $(seq 1 "$repeat"); do echo "${K[iperf.$n]}"; done))
kern_lat=$(median $(for n in $(seq 1 "$repeat"); do echo "${K[sockperf.$n]}"; done))
col() {   # col TEST TR D FIELD
	median $(for n in $(seq 1 "$repeat"); do field "$tmp/$1-$2-$3.$n" "$4"; done)
}

if ! $json; then
	echo "issue 4 goals, $(date -u +%FT%TZ), $(nproc) CPUs, load $load_start -> $load_end, median of $repeat"
	echo "kernel: iperf3 64 KiB $kern_bw Gbit/s; sockperf TCP 14 B p50 $kern_lat us (one-way)"
	echo "rnic-perf on hugepages: $(field "$tmp/bw64kj-iwarp-split.1" hugepages)"
	printf '%-8s %-7s %13s %13s %8s %10s %8s %9s\n' transport drive "64KiB@1500" "64KiB@9000" \
		"x kern" "8B p50 us" "x sock" "64B M/s"
	ratio() { python3 -c "print(round($1/$2,${3:-2}) if '$1'!='null' and '$2' not in ('null','') else 'null')"; }
	for tr in iwarp roce; do
		for d in $layouts; do
			bw=$(col bw64k $tr $d gbps); bwj=$(col bw64kj $tr $d gbps)
			lat=$(col lat8 $tr $d lat_us.p50); rate=$(col rate64 $tr $d mops)
			printf '%-8s %-7s %13s %13s %8s %10s %8s %9s\n' $tr $d "$bw" "$bwj" \
				"$(ratio "$bwj" "$kern_bw")" "$lat" "$(ratio "$lat" "$kern_lat" 3)" "$rate"
		done
	done
	echo "(64 KiB Writes in Gbit/s at MTU 1500 and 9000; x kern: the 9000 figure over iperf3's)"
	echo "goals: x kern >= 2, x sock <= 0.1, 64B >= 5 M/s per worker"
	exit 0
fi
{
	printf '{"date": "%s", "cpus": %s, "load_start": "%s", "load_end": "%s", "repeat": %s,' \
		"$(date -u +%FT%TZ)" "$(nproc)" "$load_start" "$load_end" "$repeat"
	printf ' "kernel": {"iperf3_64k_gbps": %s, "sockperf_tcp_14b_p50_us": %s},' "$kern_bw" "${kern_lat:-null}"
	printf ' "rnic": {'
	sep=""
	for tr in iwarp roce; do
		for d in $layouts; do
			printf '%s"%s_%s": {"write_bw_64k_gbps": %s, "write_bw_64k_mtu9000_gbps": %s, "write_lat_8b_p50_us": %s, "write_64b_mops": %s}' \
				"$sep" $tr $d "$(col bw64k $tr $d gbps)" "$(col bw64kj $tr $d gbps)" \
				"$(col lat8 $tr $d lat_us.p50)" "$(col rate64 $tr $d mops)"
			sep=", "
		done
	done
	printf '}, "runs": {'
	sep=""
	for r in "${runs[@]}"; do
		printf '%s"%s": %s' "$sep" "$r" "$(tail -1 "$tmp/$r")"
		sep=", "
	done
	printf '}}\n'
}
