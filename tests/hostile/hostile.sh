#!/usr/bin/env bash
# One hostile-peer test: hostile.sh TARGET SCRIPT [ARGS...]
#
# A network namespace with a bridge br0 (the kernel on it: 192.0.2.1/24,
# 2001:db8::1/64, the legitimate peer), rnic's process under attack on a
# net_tap port htap0 (192.0.2.10, 2001:db8::10) on the bridge, and the
# attacker's veth end atk1 (no addresses of the kernel's; hpeer.py speaks
# raw frames on it as 192.0.2.66 / 2001:db8::66). TARGET is
#   echo     hostile_echo, a TCP echo server on port 5001 (the legitimate
#            client: the kernel's TCP, IPv4 and IPv6, and ping);
#   gateway  rdma-gateway serving a target over iWARP (TCP 7471) and RoCE
#            (the legitimate client: rnic-cp get over each, a second rnic
#            process on its own tap);
#   gateway-iwarp  the gateway, its legitimate client over iWARP only;
#   gateway6 the gateway with 2001:db8::10/64 too (the legitimate client:
#            rnic-cp over RoCE to [2001:db8::10], and ping6);
#   none     no process: SCRIPT starts its own (active-open attacks).
# Then: the legitimate client once (warm-up), /rnic/mem as the baseline,
# SCRIPT (a python attack in this folder, which asserts what it can see on
# the wire), and after it: the process alive, the legitimate client served
# again, the port pools' mbufs in use back within 64 of the baseline, the
# heaps (rte_malloc + C) grown by at most HOSTILE_HEAP_MAX bytes (default
# 4 MiB), SIGTERM ends the process within 5 s with status 0 (or 143: the
# 1.5 s grace of rnic_stop_on_signals() ended a teardown that waited on
# the attacker, noted).
# Skips (exit 77) without root, tun, netns or python3-scapy.
set -u
target=$1 script=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
ns=rnic-h${script%.py}-$$
ns=${ns:0:40}
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import scapy.all' 2>/dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
if [ -z "$PY" ]; then
	echo "SKIP: python3-scapy is not installed (the attacker)"
	exit 77
fi
# shellcheck source=../integration/gateway/netns.sh
. "$here/../integration/gateway/netns.sh"   # ns, br0, work, ok, bad, client, cleanup
heap_max=${HOSTILE_HEAP_MAX:-4194304}
export HOSTILE_IFACE=atk1 PYTHONPATH=$here PYTHONUNBUFFERED=1

ip -n "$ns" addr add 192.0.2.1/24 dev br0
ip -n "$ns" addr add 2001:db8::1/64 dev br0 nodad
ip -n "$ns" link add atk0 type veth peer name atk1
ip netns exec "$ns" sysctl -qw net.ipv6.conf.atk1.disable_ipv6=1
ip -n "$ns" link set atk0 master br0
ip -n "$ns" link set atk0 up
ip -n "$ns" link set atk1 promisc on up
run() { ip netns exec "$ns" "$@"; }

start_target() {
	case $target in
	echo)
		ip netns exec "$ns" "${HOSTILE_ECHO:-$build/tests/hostile/hostile_echo}" --listen 5001 \
			--vdev net_tap0,iface=htap0 --ip 192.0.2.10/24 --ip 2001:db8::10/64 \
			>"$work/gw.out" 2>"$work/gw.err" &
		gwpid=$!
		bridge_tap htap0
		for _ in $(seq 100); do
			grep -q "^hostile_echo: listening" "$work/gw.out" && return 0
			sleep 0.1
		done
		return 1 ;;
	gateway | gateway-iwarp | gateway6)
		local ip6=
		[ "$target" = gateway6 ] && ip6=", 2001:db8::10/64"
		cat > "$work/gw.ini" <<-INI
		[port.0]
		vdev = net_tap0,iface=gwtap0
		ip = 192.0.2.10/24$ip6
		[target.t]
		size = 1M
		access = rw
		[gateway]
		status_ms = 500
		backlog = 64
		INI
		start_gw "target t" ;;
	esac
}

# legit: the legitimate client of the target, served whole
legit() {
	case $target in
	echo)
		run "$PY" "$here/hpeer.py" legit both ;;
	gateway | gateway-iwarp)
		local t rc=0 ts="iwarp roce"
		[ "$target" = gateway-iwarp ] && ts=iwarp
		head -c 65536 /dev/urandom > "$work/put.bin"
		for t in $ts; do
			rcp 1 --transport $t put "$work/put.bin" rdma://192.0.2.10/t \
				> "$work/cp.out" 2>&1 &&
			rcp 1 --transport $t get rdma://192.0.2.10/t "$work/get.bin" --length 65536 \
				>> "$work/cp.out" 2>&1 && cmp -s "$work/get.bin" "$work/put.bin" ||
				{ cat "$work/cp.out"; echo "rnic-cp over $t failed"; rc=1; }
		done
		run ping -q -c 2 -i 0.2 -W 2 192.0.2.10 >/dev/null || { echo "no ping reply"; rc=1; }
		return $rc ;;
	gateway6)   # client 1 on 2001:db8::21 too, RoCE over IPv6 only
		local rc=0
		head -c 65536 /dev/urandom > "$work/put.bin"
		rcp 1 --ip 2001:db8::21/64 --transport roce put "$work/put.bin" \
			"rdma://[2001:db8::10]/t" > "$work/cp.out" 2>&1 &&
		rcp 1 --ip 2001:db8::21/64 --transport roce get "rdma://[2001:db8::10]/t" \
			"$work/get.bin" --length 65536 >> "$work/cp.out" 2>&1 &&
			cmp -s "$work/get.bin" "$work/put.bin" ||
			{ cat "$work/cp.out"; echo "rnic-cp over RoCE over IPv6 failed"; rc=1; }
		run ping -6 -q -c 2 -i 0.2 -W 2 2001:db8::10 >/dev/null || { echo "no ping6 reply"; rc=1; }
		return $rc ;;
	esac
}

mem() {   # "MBUFS HEAP" of the process under attack
	run "$PY" -c 'import hpeer; print(hpeer.mbufs_in_use(), hpeer.heap_bytes())'
}

if [ "$target" != none ]; then
	start_target || { cat "$work/gw.out" "$work/gw.err"; bad "target did not start"; exit 1; }
	prefix=$(sed -n 's/.*EAL file-prefix \([^ ]*\) .*/\1/p' "$work/gw.err" "$work/gw.out" | head -1)
	[ -n "$prefix" ] || { cat "$work/gw.err"; bad "no EAL file-prefix printed"; exit 1; }
	export HOSTILE_PREFIX=$prefix
	head -3 "$work/gw.out"
	legit && ok || bad "legitimate client before the attack"
	sleep 0.5
	read -r mb0 heap0 < <(mem)
	echo "baseline: mbufs in use $mb0, heap $heap0 bytes"
fi
export HOSTILE_BUILD=$build

t0=$SECONDS
run timeout 120 "$PY" "$here/$script" "$@" && ok || bad "$script: its checks (above)"
echo "attack $script $*: $((SECONDS - t0)) s"

if [ "$target" != none ]; then
	if kill -0 "$gwpid" 2>/dev/null; then ok; else bad "the target died under the attack"; cat "$work/gw.err"; exit 1; fi
	legit && ok || bad "legitimate client after the attack"
	mb1=
	for _ in $(seq 10); do   # held mbufs go back as timers end
		sleep 0.5
		read -r mb1 heap1 < <(mem)
		[ "$mb1" -le $((mb0 + 64)) ] && break
	done
	echo "after: mbufs in use $mb1 (baseline $mb0), heap $heap1 bytes (baseline $heap0, +$((heap1 - heap0)))"
	[ "$mb1" -gt 0 ] && [ "$mb1" -le $((mb0 + 64)) ] && ok ||
		bad "mbufs in use $mb1, baseline $mb0 (0: telemetry unreadable)"
	[ $((heap1 - heap0)) -le "$heap_max" ] && ok || bad "heap grew $((heap1 - heap0)) bytes (max $heap_max)"
	kill -TERM "$gwpid"
	t1=$(date +%s%N)
	for _ in $(seq 50); do kill -0 "$gwpid" 2>/dev/null || break; sleep 0.1; done
	echo "exit $(( ($(date +%s%N) - t1) / 1000000 )) ms after SIGTERM"
	if kill -0 "$gwpid" 2>/dev/null; then
		bad "no exit within 5 s of SIGTERM"
	else
		wait "$gwpid"
		rc=$?
		# 143: rnic_stop_on_signals' grace (1.5 s) ended a teardown that
		# waited on the attacker (e.g. a DREQ nobody answers): bounded too
		case $rc in
		0) ok ;;
		143) ok; echo "note: exit 143, the stop grace ended the teardown" ;;
		*) bad "exit status $rc after SIGTERM"; tail -5 "$work/gw.err" ;;
		esac
		gwpid=
	fi
	rm -rf "/var/run/dpdk/$prefix"   # the EAL runtime directory it left
	grep -q "still in use at close" "$work/gw.err" "$work/gw.out" &&
		bad "mbufs leaked: $(grep -h 'still in use' "$work/gw.err" "$work/gw.out")"
fi
[ "$fails" = 0 ] || { echo "--- target log (tail)"; tail -5 "$work/gw.err" 2>/dev/null; }
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
