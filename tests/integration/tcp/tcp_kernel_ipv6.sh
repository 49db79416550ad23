#!/usr/bin/env bash
# Kernel interop over IPv6 on net_tap: rnic's port has an IPv6 address only
# (2001:db8::10/64; its link-local one comes from its MAC). The Linux stack
# in a network namespace resolves it by neighbour discovery and pings it
# (global and link-local address), a Linux client sends to `rnic-tcp sink`,
# `rnic-tcp source` sends to a Linux server, each with equal SHA-256; then
# again with rnic's fault injector dropping 1% in each direction.
# RNIC_TCP_INTEROP_BYTES sets the size (default 64 MiB). Exit 77 (skipped)
# without root, /dev/net/tun or IPv6 in the kernel.
set -u
bin=${RNIC_BUILD_DIR:?}/apps/rnic-tcp/rnic-tcp
bytes=$(numfmt --from=iec "${RNIC_TCP_INTEROP_BYTES:-67108864}")   # 1G, 64M or a number
ns=rnic-k6$$
tap=rnic6k$$
. "$(dirname "$0")/../common/tap_peer.sh"   # work, skip, cleanup, fail
[ -e /proc/net/if_inet6 ] || skip "the kernel has no IPv6"
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
ip -n "$ns" link set lo up

# the tap's kernel side: nodad, or the kernel holds the address back for
# its own duplicate address detection (a second or two)
wait_tap() {
	for _ in $(seq 100); do
		ip -n "$ns" link show "$tap" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip -n "$ns" link show "$tap" >/dev/null 2>&1 || fail "tap never appeared"
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=0" 2>/dev/null
	ip -n "$ns" -6 addr add 2001:db8::1/64 dev "$tap" nodad 2>/dev/null
	ip -n "$ns" link set "$tap" up
}

# Linux pings rnic's global and link-local addresses; then a Linux client
# sends to the rnic sink
to_rnic() {  # $1: extra rnic options
	ip netns exec "$ns" timeout 600 "$bin" sink --listen 5001 --bytes "$bytes" --json \
		--vdev "net_tap0,iface=$tap" --ip 2001:db8::10/64 $1 >"$work/sink.log" 2>&1 &
	local pid=$!
	wait_tap
	sleep 0.5
	if [ -z "$1" ]; then
		ip netns exec "$ns" ping -6 -c 3 -i 0.2 -W 2 2001:db8::10 >"$work/ping.log" 2>&1 ||
			fail "no echo reply from 2001:db8::10"
		local mac ll
		mac=$(ip netns exec "$ns" ip -6 neigh show 2001:db8::10 dev "$tap" | awk '{print $3}')
		[ -n "$mac" ] || fail "the kernel never resolved 2001:db8::10"
		# fe80:: + EUI-64 of the MAC (the universal/local bit flipped)
		ll=$(python3 -c 'import sys
m = [int(x, 16) for x in sys.argv[1].split(":")]
m[0] ^= 2
print("fe80::%x:%x:%x:%x" % (m[0] << 8 | m[1], m[2] << 8 | 0xff, 0xfe << 8 | m[3], m[4] << 8 | m[5]))' "$mac")
		ip netns exec "$ns" ping -6 -c 2 -i 0.2 -W 2 "$ll%$tap" >>"$work/ping.log" 2>&1 ||
			fail "no echo reply from the link-local $ll"
		echo "ping: 2001:db8::10 and $ll (MAC $mac) answer"
	fi
	local sent
	sent=$(ip netns exec "$ns" timeout 600 python3 "$(dirname "$0")/../common/sha_source.py" \
		2001:db8::10 5001 "$bytes") || fail "Linux client failed"
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
	for _ in $(seq 300); do
		[ -e "$work/listening" ] && break
		sleep 0.1
	done
	[ -e "$work/listening" ] || fail "Linux server never listened"
	ip netns exec "$ns" timeout 600 "$bin" source --connect "[2001:db8::1]:5002" --bytes "$bytes" \
		--json --vdev "net_tap0,iface=$tap" --ip 2001:db8::10/64 $1 >"$work/src.log" 2>&1 &
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
