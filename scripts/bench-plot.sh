#!/usr/bin/env bash
# Bandwidth and latency against message size, iWARP vs RoCEv2 vs the
# kernel's TCP, measured in one run and plotted (issue 7):
#   rnic-perf --loopback --json   write_bw 64 B .. 1 MiB (64 MiB a run, 200 to
#                                 20000 messages), write_lat 8 B .. 64 KiB (500),
#                                 each size once per transport, alternating
#   iperf3 over 127.0.0.1         the same bandwidth sizes (-l SIZE, 2 s each)
#   sockperf ping-pong, TCP       the same latency sizes (-m SIZE, 2 s each;
#                                 sockperf takes 14 .. 65507 bytes, so 8 B is
#                                 measured at 14 B and 64 KiB at 65507 B)
# A run that fails (rnic-perf gives up after 30 s without progress) is
# listed under "failed" with the last line of its stderr, and is a missing
# point in the plot. Every figure goes into OUT/bench.json (with the machine, the date and the
# load average before and after); OUT/bw.png and OUT/lat.png are drawn from
# it by scripts/bench_plot.py. Latencies are one-way: half the round trip,
# for rnic-perf (write_lat) and sockperf alike.
# iperf3, sockperf and python3-matplotlib come from Debian; the script
# installs what is missing with apt-get (root only), since they are no
# build or CI dependency.
# Usage: scripts/bench-plot.sh [build-dir] [out-dir]   (takes ~5 minutes)
# BW_SIZES="..." and LAT_SIZES="..." in the environment replace the sizes.
set -uo pipefail
build=${1:-build}
out=${2:-/tmp/rnic-bench-$(date -u +%Y%m%dT%H%M%SZ)}
here=$(cd "$(dirname "$0")" && pwd)
perf=$build/apps/rnic-perf/rnic-perf
py=/usr/bin/python3   # Debian's: python3-matplotlib is installed for it
[ -x "$perf" ] || { echo "no $perf: build first (ninja -C $build)" >&2; exit 1; }

need=()
command -v iperf3 >/dev/null || need+=(iperf3)
command -v sockperf >/dev/null || need+=(sockperf)
"$py" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "missing ${need[*]}: install them (apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "installing ${need[*]} (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
		{ echo "apt-get install ${need[*]} failed" >&2; exit 1; }
fi

BW_SIZES=${BW_SIZES:-"64 512 4096 16384 65536 262144 1048576"}
LAT_SIZES=${LAT_SIZES:-"8 64 512 4096 16384 65536"}
mkdir -p "$out/raw"
raw=$out/raw
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# the machine, before anything runs
{
	echo "nproc=$(nproc)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "kernel=$(uname -r)"
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "load_start=$(loadavg)"
	echo "command=$0 $*"
	echo "commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
} > "$raw/machine.txt"

# bw operations per run: about 64 MiB, 200 .. 20000 messages (a run is a
# few seconds on a loaded 2-CPU machine, EAL start included)
bw_iters() { local n=$(( 67108864 / $1 )); [ $n -lt 200 ] && n=200; [ $n -gt 20000 ] && n=20000; echo $n; }

# rnic-perf TEST TRANSPORT SIZE ITERS: its JSON line into raw/, or a note
rnic() {
	local f=$raw/rnic-$1-$2-$3.json
	timeout 120 "$perf" "$1" --loopback --transport "$2" -s "$3" -n "$4" --json \
		2>"$raw/rnic-$1-$2-$3.err" | grep '^{' | tail -1 > "$f"
	[ -s "$f" ] || { rm -f "$f"; echo "  $1 $2 $3 B: FAILED (see $raw/rnic-$1-$2-$3.err)"; }
}

iperf3 -s -B 127.0.0.1 -p 5299 >/dev/null 2>&1 &
ipid=$!
sockperf sr --tcp -i 127.0.0.1 -p 11299 >/dev/null 2>&1 &
spid=$!
trap 'kill $ipid $spid 2>/dev/null; wait $ipid $spid 2>/dev/null' EXIT
sleep 1

t0=$(date +%s)
echo "bandwidth (write_bw; iperf3)"
for s in $BW_SIZES; do
	echo " $s B"
	for tr in iwarp roce; do
		rnic write_bw "$tr" "$s" "$(bw_iters "$s")"
	done
	timeout 30 iperf3 -c 127.0.0.1 -p 5299 -l "$s" -t 2 --json > "$raw/iperf3-$s.json" 2>&1 ||
		echo "  iperf3 $s B: FAILED (see $raw/iperf3-$s.json)"
done
echo "latency (write_lat; sockperf ping-pong over TCP)"
for s in $LAT_SIZES; do
	echo " $s B"
	for tr in iwarp roce; do
		rnic write_lat "$tr" "$s" 500
	done
	m=$s
	[ "$m" -lt 14 ] && m=14
	[ "$m" -gt 65507 ] && m=65507
	timeout 30 sockperf pp --tcp -i 127.0.0.1 -p 11299 -m "$m" -t 2 \
		> "$raw/sockperf-$s-$m.txt" 2>&1 || echo "  sockperf $m B: FAILED"
done
echo "load_end=$(loadavg)" >> "$raw/machine.txt"
echo "seconds=$(( $(date +%s) - t0 ))" >> "$raw/machine.txt"

"$py" "$here/bench_plot.py" "$raw" "$out" || exit 1
echo "figures: $out/bench.json, plots: $out/bw.png $out/lat.png"
