#!/usr/bin/env bash
# Kernel interop over net_tap: the Linux TCP stack in a network namespace is
# the peer. A Linux client sends to `rnic-tcp sink`; `rnic-tcp source` sends
# to a Linux server; each with equal SHA-256, first clean, then with rnic's
# fault injector dropping 1% in each direction. RNIC_TCP_INTEROP_BYTES sets
# the size (default 256 MiB, for CI's time; RNIC_TCP_INTEROP_BYTES=1G for
# the gigabyte each way). Exit 77 (skipped) without root or /dev/net/tun.
set -u
bin=${RNIC_BUILD_DIR:?}/apps/rnic-tcp/rnic-tcp
bytes=$(numfmt --from=iec "${RNIC_TCP_INTEROP_BYTES:-268435456}")   # 1G, 64M or a number
ns=rnic-k$$
tap=rnick$$
. "$(dirname "$0")/../common/tap_peer.sh"   # work, skip, cleanup, fail
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
ip -n "$ns" link set lo up

wait_tap() {
	for _ in $(seq 100); do
		ip -n "$ns" link show "$tap" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip -n "$ns" link show "$tap" >/dev/null 2>&1 || fail "tap never appeared"
	ip -n "$ns" addr add 192.0.2.1/24 dev "$tap" 2>/dev/null
	ip -n "$ns" link set "$tap" up
}

# Linux client -> rnic sink
to_rnic() {  # $1: extra rnic options
	ip netns exec "$ns" timeout 600 "$bin" sink --listen 5001 --bytes "$bytes" --json \
		--vdev "net_tap0,iface=$tap" --ip 192.0.2.10/24 $1 >"$work/sink.log" 2>&1 &
	local pid=$!
	wait_tap
	sleep 0.5
	local sent
	sent=$(ip netns exec "$ns" timeout 600 python3 "$(dirname "$0")/../common/sha_source.py" \
		192.0.2.10 5001 "$bytes") || fail "Linux client failed"
	wait "$pid" || fail "rnic-tcp sink exit $?"
	local got
	got=$(tail -1 "$work/sink.log" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sha256"], r["bytes"], r["gbps"], r["retransmits"])')
	echo "linux->rnic $1: sent $sent; rnic got $got"
	[ "${got%% *}" = "${sent%% *}" ] || fail "SHA-256 differs (linux->rnic $1)"
}

# rnic source -> Linux server
from_rnic() {
	rm -f "$work/listening"
	ip netns exec "$ns" timeout 600 python3 "$(dirname "$0")/../common/sha_sink.py" "$work/listening" 5002 >"$work/server.log" 2>&1 &
	local spid=$!
	# the server must listen before rnic's SYN arrives, or Linux refuses
	# it (seen on a loaded machine, where python starts slower than rnic)
	for _ in $(seq 300); do
		[ -e "$work/listening" ] && break
		sleep 0.1
	done
	[ -e "$work/listening" ] || fail "Linux server never listened"
	ip netns exec "$ns" timeout 600 "$bin" source --connect 192.0.2.1:5002 --bytes "$bytes" \
		--json --vdev "net_tap0,iface=$tap" --ip 192.0.2.10/24 $1 >"$work/src.log" 2>&1 &
	local pid=$!
	wait_tap
	wait "$pid" || fail "rnic-tcp source exit $?"
	wait "$spid" || fail "Linux server failed"
	local got sent
	got=$(tail -1 "$work/server.log")
	sent=$(tail -1 "$work/src.log" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["sha256"], r["bytes"], r["gbps"], r["retransmits"])')
	echo "rnic->linux $1: rnic sent $sent; linux got $got"
	[ "${got%% *}" = "${sent%% *}" ] || fail "SHA-256 differs (rnic->linux $1)"
	[ "${got#* }" = "$bytes" ] || fail "Linux got ${got#* } bytes"
}

to_rnic ""
from_rnic ""
to_rnic "--fault-drop 1 --fault-seed ${RNIC_SEED:-1}"
from_rnic "--fault-drop 1 --fault-seed ${RNIC_SEED:-1}"
cleanup
echo "1 passed, 0 failed"
