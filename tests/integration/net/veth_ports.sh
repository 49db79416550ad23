#!/usr/bin/env bash
# rnic on a real Linux interface (issue 18): one end of a veth pair given to
# rnic through net_af_packet or net_af_xdp (the first argument), the other
# end in a network namespace with a kernel address. The kernel pings rnic;
# a Linux client sends to `rnic-tcp sink` and `rnic-tcp source` sends to a
# Linux server, each with equal SHA-256 (RNIC_VETH_BYTES, default 32 MiB;
# 1G by hand); then the same with two workers: for af_packet over two
# queues (qpairs=2 on a two-queue veth), for af_xdp sharing its one queue;
# and for af_xdp at MTU 3000 (chained TCP segments made whole).
# The kernel end's TX checksum offload is turned off (ethtool -K PEER tx
# off): over veth the kernel hands its frames over with the TCP checksum
# left to a NIC that does not exist, and neither PMD says so (docs/user-
# guide.md, "Ports on Linux interfaces").
# Exit 77 (skipped) with a reason without root, network namespaces, veth,
# ethtool, or the PMD in DPDK.
set -u
pmd=${1:?usage: veth_ports.sh af_packet|af_xdp}
bin=${RNIC_BUILD_DIR:?}/apps/rnic-tcp/rnic-tcp
bytes=${RNIC_VETH_BYTES:-32M}
r=rnic-vr$$           # rnic's namespace
k=rnic-vk$$           # the kernel peer's
rif=rnicvr$$ kif=rnicvk$$
work=$(mktemp -d)
first=1               # no rnic port has come up yet
skip() { echo "SKIP: $*"; cleanup; exit 77; }
cleanup() {
	local ns
	for ns in "$r" "$k"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
	sleep 0.2
	ip netns del "$r" 2>/dev/null
	ip netns del "$k" 2>/dev/null
	rm -rf "$work"
}
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -5 "$f"; done; cleanup; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root for veth pairs, network namespaces and $pmd"
command -v ethtool >/dev/null || skip "ethtool is missing (scripts/deps.sh installs it)"
ip netns add "$r" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$k" 2>/dev/null || skip "cannot create a network namespace"

# veth Q [MTU]: a fresh pair with Q queues each way, rnic's end up without
# an address, the kernel's with 192.0.2.1/24 and no TX checksum offload
veth() {
	mtu=${2:-1500}
	ip -n "$r" link del "$rif" 2>/dev/null
	ip link add "$rif" netns "$r" mtu "$mtu" numtxqueues "$1" numrxqueues "$1" type veth \
		peer name "$kif" netns "$k" mtu "$mtu" numtxqueues "$1" numrxqueues "$1" ||
		skip "cannot create a veth pair"
	ip -n "$r" link set lo up
	ip -n "$k" link set lo up
	ip netns exec "$k" ethtool -K "$kif" tx off >/dev/null ||
		fail "ethtool -K $kif tx off"
	ip -n "$k" addr add 192.0.2.1/24 dev "$kif"
	ip -n "$r" link set "$rif" up
	ip -n "$k" link set "$kif" up
}

# vdev Q: the PMD's device string for Q queues
vdev() {
	case $pmd in
	af_packet) echo "net_af_packet0,iface=$rif,qpairs=$1" ;;
	af_xdp) echo "net_af_xdp0,iface=$rif,start_queue=0,queue_count=$1" ;;
	*) fail "unknown PMD $pmd" ;;
	esac
}

# rnic LOG ARGS...: rnic-tcp in rnic's namespace, in the background ($!)
rnic() {
	local log=$1
	shift
	ip netns exec "$r" timeout 300 "$bin" "$@" >"$log" 2>&1 &
}

# up LOG PID: wait until rnic answers ping (5 of 5 once it does)
up() {
	for _ in $(seq 50); do
		grep -q "cannot create vdev" "$1" && [ "$first" = 1 ] &&
			skip "DPDK cannot create net_$pmd here: $(grep 'cannot create' "$1")"
		kill -0 "$2" 2>/dev/null || fail "rnic-tcp exited early"
		ip netns exec "$k" ping -c 1 -W 0.2 192.0.2.10 >/dev/null 2>&1 && break
	done
	first=0
	ip netns exec "$k" ping -c 5 -i 0.2 -W 2 192.0.2.10 >"$work/ping.log" 2>&1 ||
		fail "the kernel's ping of rnic over $pmd got no reply"
	grep -q '5 packets transmitted, 5 received' "$work/ping.log" ||
		fail "ping: $(grep transmitted "$work/ping.log")"
}

# to_rnic Q W: Linux client -> rnic sink, Q queues, W workers
to_rnic() {
	local q=$1 w=$2 pid sent got
	rnic "$work/sink.log" sink --listen 5001 --bytes "$bytes" --json \
		--vdev "$(vdev "$q")" --ip 192.0.2.10/24 --workers "$w" --mtu "$mtu"
	pid=$!
	up "$work/sink.log" "$pid"
	sent=$(ip netns exec "$k" timeout 300 python3 "$(dirname "$0")/../common/sha_source.py" \
		192.0.2.10 5001 "$bytes") || fail "Linux client failed"
	wait "$pid" || fail "rnic-tcp sink exit $?"
	got=$(grep '^{' "$work/sink.log" | tail -1 |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sha256"], r["bytes"], r["gbps"])')
	echo "ok: linux -> rnic over $pmd, $q queue(s), $w worker(s), MTU $mtu: sent $sent; rnic got $got"
	[ "${got%% *}" = "${sent%% *}" ] || fail "SHA-256 differs (linux -> rnic, $q queue(s), $w worker(s))"
	set -- $got
	[ "$2" = "${sent#* }" ] || fail "rnic got $2 bytes of ${sent#* }"
}

# from_rnic Q W: rnic source -> Linux server, Q queues, W workers
from_rnic() {
	local q=$1 w=$2 spid pid got sent
	rm -f "$work/listening"
	ip netns exec "$k" timeout 300 python3 "$(dirname "$0")/../common/sha_sink.py" "$work/listening" 5002 >"$work/server.log" 2>&1 &
	spid=$!
	for _ in $(seq 300); do
		[ -e "$work/listening" ] && break
		sleep 0.1
	done
	[ -e "$work/listening" ] || fail "Linux server never listened"
	rnic "$work/src.log" source --connect 192.0.2.1:5002 --bytes "$bytes" --json \
		--vdev "$(vdev "$q")" --ip 192.0.2.10/24 --workers "$w" --mtu "$mtu"
	pid=$!
	wait "$pid" || fail "rnic-tcp source exit $?"
	wait "$spid" || fail "Linux server failed"
	got=$(tail -1 "$work/server.log")
	sent=$(grep '^{' "$work/src.log" | tail -1 |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sha256"], r["bytes"], r["gbps"])')
	echo "ok: rnic -> linux over $pmd, $q queue(s), $w worker(s), MTU $mtu: rnic sent $sent; linux got $got"
	[ "${got%% *}" = "${sent%% *}" ] || fail "SHA-256 differs (rnic -> linux, $q queue(s), $w worker(s))"
	set -- $sent
	[ "${got#* }" = "$2" ] || fail "Linux got ${got#* } bytes of $2"
}

# QUEUES:WORKERS:MTU. DPDK 22.11's net_af_xdp takes as many queues as the
# interface has ethtool "combined" channels, and veth has none (it reports
# RX and TX channels apart), so over veth it runs one queue; two workers
# then share it (RX steered in software, TX under a lock). At MTU 3000
# rnic's TCP segments are chains (payload behind the header), which
# net_af_xdp cannot send: the port copies them whole first.
runs="1:1:1500 2:2:1500"
[ "$pmd" = af_xdp ] && runs="1:1:1500 1:2:1500 1:1:3000" &&
	echo "note: af_xdp runs one queue on veth (no combined channels); 2 queues need a NIC"
n=0
for qwm in $runs; do
	IFS=: read -r q w m <<<"$qwm"
	veth "$q" "$m"
	to_rnic "$q" "$w"
	from_rnic "$q" "$w"
	n=$((n + 2))
done
cleanup
echo "$n passed, 0 failed"
