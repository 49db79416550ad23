#!/usr/bin/env bash
# rnic between two processes (issue 18), side by side with the kernel in
# the same run: `rnic-perf --server` and `--client` as two processes, each
# on a CPU of its own (taskset), over
#   memif    net_memif, one socket file (server and client roles), MTU 1500
#   memif_zc the same with the client in zero-copy mode (LINKS="memif_zc";
#            needs free hugepages)
#   af_xdp   net_af_xdp on the two ends of a veth pair, each end in its own
#            network namespace (MTU 1500, and 3000: XDP on veth takes no
#            9000)
# for iWARP and RoCE: 64 KiB Write bandwidth, 8 B Write latency (p50, p99,
# half the round trip as perftest), 64 B Write message rate, and 64 KiB
# Writes with 2 workers and 8 QPs a side (on 2 CQs: QP i on CQ i % 2, each
# CQ's completion handler on its own worker, so both workers carry QPs). The kernel over a veth pair
# between two namespaces, on the same two CPUs: iperf3 -l 64K at MTU 1500
# and 9000, sockperf TCP ping-pong (14 B) p50 and p99.
# Issue 18's goals: rnic's 64 KiB Writes >= 2x iperf3's Gbit/s at the same
# MTU, 8 B latency p50 <= 0.1x sockperf's. Nothing is asserted: a table (or
# with --json one object) says where each stands.
# Each rnic figure in two layouts (DRIVES, default "lcores one"): lcores,
# the worker on an lcore of its own and the main thread posting and
# polling (two threads per process); one, rnic-perf --drive one: the
# process runs to completion, its main thread running the worker loop
# between its verbs calls (one busy thread per process).
# POLL=busy adds --busy-poll to every rnic process (default: adaptive);
# SECS (default 3) is each bandwidth run's length, REPEAT (default 1) how
# many times each figure is taken (the median is shown); LINKS and
# TRANSPORTS pick a subset ("memif af_xdp", "iwarp roce"). A failed run is
# reported on stderr with the last lines of both processes' stderr.
# Usage (root): tests/bench/run-two-process.sh [build-dir] [--json]
# Needs root (namespaces, XDP), iperf3, sockperf, ethtool.
set -uo pipefail
build=${1:-build}
json=false
[ "${2:-}" = --json ] && json=true
perf=$build/apps/rnic-perf/rnic-perf
secs=${SECS:-3}
repeat=${REPEAT:-1}
poll=()
[ "${POLL:-adaptive}" = busy ] && poll=(--busy-poll)
[ -x "$perf" ] || { echo "no $perf: build first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, XDP)" >&2; exit 1; }
for t in iperf3 sockperf python3 ethtool taskset; do
	command -v $t >/dev/null || { echo "$t is not installed (apt-get install $t)" >&2; exit 1; }
done
cpu_s=0 cpu_c=1
[ "$(nproc)" -lt 2 ] && cpu_c=0
tmp=$(mktemp -d)
na=rnic-2pa$$ nb=rnic-2pb$$          # rnic's namespaces (af_xdp)
ka=rnic-2ka$$ kb=rnic-2kb$$          # the kernel's (iperf3, sockperf)
cleanup() {
	local n
	for n in $na $nb $ka $kb; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.2
	for n in $na $nb $ka $kb; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# pair NS1 IF1 NS2 IF2 MTU: a veth pair between two fresh namespaces
pair() {
	ip netns add "$1" && ip netns add "$3" || exit 1
	ip link add "$2" netns "$1" mtu "$5" type veth peer name "$4" netns "$3" mtu "$5" || exit 1
	ip -n "$1" link set lo up
	ip -n "$3" link set lo up
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}
pair $ka kva$$ $kb kvb$$ 1500
ip -n $ka addr add 198.51.100.1/24 dev kva$$
ip -n $kb addr add 198.51.100.2/24 dev kvb$$
pair $na xva$$ $nb xvb$$ 1500

# field FILE KEY: a number from a JSON line (KEY a.b for nested), or null
field() {
	python3 -c 'import json,sys
try:
    v = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
    for k in sys.argv[2].split("."):
        v = v[k]
    print(v)
except Exception:
    print("null")' "$1" "$2"
}
median() { python3 -c 'import sys,statistics
v=[float(x) for x in sys.argv[1:] if x not in ("null","")]
print(round(statistics.median(v),3) if v else "null")' "$@"; }

# kernel: iperf3 at MTU $1, sockperf (at 1500)
iperf() {
	ip -n $ka link set kva$$ mtu "$1"
	ip -n $kb link set kvb$$ mtu "$1"
	ip netns exec $kb taskset -c $cpu_s iperf3 -s -1 -p 5398 >/dev/null 2>&1 &
	sleep 0.5
	ip netns exec $ka taskset -c $cpu_c iperf3 -c 198.51.100.2 -p 5398 -l 64K -t "$secs" -J 2>/dev/null |
		python3 -c 'import json,sys
print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9, 3))' || echo null
	wait 2>/dev/null
}
sockperf_lat() {   # prints "p50 p99" in us
	ip -n $ka link set kva$$ mtu 1500
	ip -n $kb link set kvb$$ mtu 1500
	ip netns exec $kb taskset -c $cpu_s sockperf server --tcp -i 198.51.100.2 -p 11198 >/dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	ip netns exec $ka taskset -c $cpu_c sockperf ping-pong --tcp -i 198.51.100.2 -p 11198 -m 14 \
		-t "$secs" >"$tmp/sockperf.out" 2>&1
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$tmp/sockperf.out" | head -1)" \
	     "$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$tmp/sockperf.out" | head -1)"
}

# rnic NAME LINK MTU ARGS...: one server/client run; the client's JSON line
# in $tmp/NAME (a failed run leaves {"failed": true})
n_sock=0
rnic() {
	local name=$1 link=$2 mtu=$3 s_run=() c_run=() s_port c_port
	shift 3
	case $link in
	memif | memif_zc)
		n_sock=$((n_sock + 1))
		s_port=(--vdev "net_memif0,role=server,socket=$tmp/m$n_sock.sock")
		c_port=(--vdev "net_memif0,role=client,socket=$tmp/m$n_sock.sock")
		# zero copy (the client's own mbufs on the rings; needs hugepages)
		[ $link = memif_zc ] && c_port[1]+=",zero-copy=yes"
		;;
	af_xdp)
		ip -n $na link set xva$$ mtu "$mtu"
		ip -n $nb link set xvb$$ mtu "$mtu"
		s_run=(ip netns exec $na)
		c_run=(ip netns exec $nb)
		s_port=(--vdev "net_af_xdp0,iface=xva$$")
		c_port=(--vdev "net_af_xdp0,iface=xvb$$")
		;;
	esac
	rm -f "$tmp/$name.server.err"   # a stale one would pass the wait below
	"${s_run[@]}" taskset -c $cpu_s timeout 120 "$perf" --server --json "${poll[@]}" "$@" \
		"${s_port[@]}" --ip 192.0.2.1/24 --mtu "$mtu" >"$tmp/$name.server" 2>"$tmp/$name.server.err" &
	local spid=$!
	for _ in $(seq 100); do
		grep -qs "waiting for a client" "$tmp/$name.server.err" && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	"${c_run[@]}" taskset -c $cpu_c timeout 120 "$perf" --client 192.0.2.1 --json "${poll[@]}" "$@" \
		"${c_port[@]}" --ip 192.0.2.2/24 --mtu "$mtu" >"$tmp/$name" 2>"$tmp/$name.err" ||
		echo '{"failed": true}' >"$tmp/$name"
	wait $spid 2>/dev/null
	grep -q '^{' "$tmp/$name" || echo '{"failed": true}' >"$tmp/$name"
	if grep -q '"failed"' "$tmp/$name"; then
		echo "run $name failed: client: $(grep -v 'libbpf\|libxdp' "$tmp/$name.err" | tail -2 | tr '\n' ' ')" \
		     "server: $(grep -v 'libbpf\|libxdp' "$tmp/$name.server.err" | tail -2 | tr '\n' ' ')" >&2
	fi
}

links=${LINKS:-memif af_xdp}
transports=${TRANSPORTS:-iwarp roce}
drives=${DRIVES:-lcores one}
# drive_args D: rnic-perf's option for layout D
drive_args() { [ "$1" = one ] && echo "--drive one"; }
declare -A K
for r in $(seq 1 "$repeat"); do
	K[bw1500.$r]=$(iperf 1500)
	K[bw9000.$r]=$(iperf 9000)
	K[lat.$r]=$(sockperf_lat)
	for link in $links; do
		for tr in $transports; do
			for d in $drives; do
				k=$link-$tr-$d.$r
				da=$(drive_args $d)
				rnic "bw64k-$k" $link 1500 write_bw --transport $tr -s 65536 --duration "$secs" $da
				[ $link = af_xdp ] &&
					rnic "bw64kj-$k" $link 3000 write_bw --transport $tr -s 65536 \
						--duration "$secs" $da
				rnic "lat8-$k" $link 1500 write_lat --transport $tr -s 8 -n 2000 $da
				rnic "rate64-$k" $link 1500 write_bw --transport $tr -s 64 --duration "$secs" $da
				rnic "mq-$k" $link 1500 write_bw --transport $tr -s 65536 --duration "$secs" \
					--workers 2 --qps 8 --cqs 2 $da
			done
		done
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

kcol() { median $(for r in $(seq 1 "$repeat"); do echo "${K[$1.$r]}"; done); }
kbw=$(kcol bw1500) kbwj=$(kcol bw9000)
klat50=$(median $(for r in $(seq 1 "$repeat"); do set -- ${K[lat.$r]}; echo "${1:-null}"; done))
klat99=$(median $(for r in $(seq 1 "$repeat"); do set -- ${K[lat.$r]}; echo "${2:-null}"; done))
col() {   # col TEST LINK TR DRIVE FIELD
	median $(for r in $(seq 1 "$repeat"); do field "$tmp/$1-$2-$3-$4.$r" "$5"; done)
}
ratio() { python3 -c "print(round($1/$2, ${3:-2}) if '$1' != 'null' and '$2' not in ('null', '', '0') else 'null')"; }

if ! $json; then
	echo "issue 18, two processes, $(date -u +%FT%TZ), $(nproc) CPUs (server on CPU $cpu_s, client on $cpu_c)," \
	     "poll ${POLL:-adaptive}, load $load_start -> $load_end, median of $repeat"
	echo "kernel over veth between two namespaces: iperf3 64 KiB $kbw Gbit/s (MTU 1500), $kbwj (MTU 9000);" \
	     "sockperf TCP 14 B p50 $klat50 us, p99 $klat99 us"
	printf '%-7s %-6s %-6s %10s %7s %10s %9s %9s %7s %8s %12s\n' link tr drive "64KiB Gb/s" \
		"x iperf" "@3000 Gb/s" "8B p50us" "8B p99us" "x sock" "64B M/s" "2w 8qp Gb/s"
	for link in $links; do
		for tr in $transports; do
			for d in $drives; do
				bw=$(col bw64k $link $tr $d gbps)
				bwj=null
				[ $link = af_xdp ] && bwj=$(col bw64kj $link $tr $d gbps)
				p50=$(col lat8 $link $tr $d lat_us.p50)
				printf '%-7s %-6s %-6s %10s %7s %10s %9s %9s %7s %8s %12s\n' $link $tr $d "$bw" \
					"$(ratio "$bw" "$kbw")" "$bwj" "$p50" \
					"$(col lat8 $link $tr $d lat_us.p99)" "$(ratio "$p50" "$klat50" 3)" \
					"$(col rate64 $link $tr $d mops)" "$(col mq $link $tr $d gbps)"
			done
		done
	done
	echo "(x iperf: 64 KiB Writes at MTU 1500 over iperf3 at 1500; x sock: 8 B p50 over sockperf's p50;"
	echo " goals: x iperf >= 2, x sock <= 0.1; null: the run failed, see the JSON with --json)"
	exit 0
fi
{
	printf '{"date": "%s", "cpus": %s, "poll": "%s", "load_start": "%s", "load_end": "%s", "repeat": %s,' \
		"$(date -u +%FT%TZ)" "$(nproc)" "${POLL:-adaptive}" "$load_start" "$load_end" "$repeat"
	printf ' "kernel": {"iperf3_64k_gbps_mtu1500": %s, "iperf3_64k_gbps_mtu9000": %s,' "$kbw" "$kbwj"
	printf ' "sockperf_tcp_14b_p50_us": %s, "sockperf_tcp_14b_p99_us": %s},' "$klat50" "$klat99"
	printf ' "rnic": {'
	sep=""
	for link in $links; do
		for tr in $transports; do
			for d in $drives; do
				printf '%s"%s_%s_%s": {"write_bw_64k_gbps": %s, "write_bw_64k_mtu3000_gbps": %s, "write_lat_8b_p50_us": %s, "write_lat_8b_p99_us": %s, "write_64b_mops": %s, "write_bw_64k_2w_8qp_gbps": %s}' \
					"$sep" $link $tr $d "$(col bw64k $link $tr $d gbps)" \
					"$([ $link = af_xdp ] && col bw64kj $link $tr $d gbps || echo null)" \
					"$(col lat8 $link $tr $d lat_us.p50)" "$(col lat8 $link $tr $d lat_us.p99)" \
					"$(col rate64 $link $tr $d mops)" "$(col mq $link $tr $d gbps)"
				sep=", "
			done
		done
	done
	printf '}, "runs": {'
	sep=""
	for f in "$tmp"/*-*.[0-9]*; do
		case $f in *.server|*.err) continue ;; esac
		printf '%s"%s": %s' "$sep" "$(basename "$f")" "$(tail -1 "$f")"
		sep=", "
	done
	printf '}}\n'
}
