#!/usr/bin/env bash
# Interop with Linux soft-iWARP (siw) in a qemu guest (shared/interop/):
#   1. rnic-ping -c against the guest's `rping -s`, CRC on and off, captured;
#      tshark must show "Good CRC32" on every FPDU, no bad CRC, nothing
#      malformed (when tshark is installed);
#   2. the guest's `rping -c` against rnic-ping -s.
# With RPING_DROPIN=1 rnic's side is the unmodified rping under rnic-run
# (librnic-verbs: rdma_cm over rnic's CM, MPA with CRC, as rdma_cm asks)
# instead of rnic-ping, CRC on only. With RPING_IPV6=1 both sides speak
# IPv6 only: rnic's port has 2001:db8::10/64 and no IPv4 address, the guest
# listens on :: (rping-server6) and its client connects to 2001:db8::10.
# Skips (exit 77) with a reason when root, /dev/net/tun or the guest
# harness is missing, or when the guest cannot be built or booted.
set -u
build=${RNIC_BUILD_DIR:?}
src=${RNIC_SOURCE_DIR:?}
interop=$(cd "$src/../shared/interop" 2>/dev/null && pwd)
ping=$build/apps/rnic-ping/rnic-ping
dropin=${RPING_DROPIN:-}
ipv6=${RPING_IPV6:-}
if [ -n "$ipv6" ]; then
	rnic_ip=2001:db8::10/64 rnic_addr=2001:db8::10 guest=2001:db8::2 server_test=rping-server6
else
	rnic_ip=192.0.2.10/24 rnic_addr=192.0.2.10 guest=192.0.2.2 server_test=rping-server
fi
me=rnic-ping
[ -n "$dropin" ] && me="rnic-run rping"
run=$build/apps/rnic-run/rnic-run
# rnic's rping: rnic_rping PORT-ARGS -- RPING-ARGS (rnic-ping, or the
# unmodified rping under rnic-run)
rnic_rping() {
	local port=() extra=()
	while [ "$1" != -- ]; do port+=("$1"); shift; done
	shift
	if [ -n "$dropin" ]; then
		for a in "$@"; do [ "$a" = --no-crc ] || extra+=("$a"); done
		ip netns exec rnic-peers timeout 120 "$run" "${port[@]}" -- rping "${extra[@]}"
	else
		ip netns exec rnic-peers timeout 120 "$ping" "$@" "${port[@]}"
	fi
}
work=$(mktemp -d)
skip() { echo "SKIP: $*"; rm -rf "$work"; exit 77; }
stop_guest() { [ -f "$work/guest.pid" ] && kill "$(cat "$work/guest.pid")" 2>/dev/null; sleep 1; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -8 "$f"; done
	 stop_guest; rm -rf "$work"; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap, qemu)"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
[ -n "$interop" ] && [ -x "$interop/boot.sh" ] || skip "shared/interop is not beside the project"
[ -n "$dropin" ] && [ -n "$ipv6" ] && skip "the drop-in's rdma_cm takes IPv4 addresses only"

boot() {  # $1: APPEND, $2: what to wait for in the console
	APPEND="$1" PIDFILE="$work/guest.pid" TIMEOUT=600 "$interop/boot.sh" >"$work/guest.log" 2>&1 &
	for _ in $(seq 600); do
		grep -q "$2" "$work/guest.log" && return 0
		grep -q "qemu exit" "$work/guest.log" && break
		sleep 1
	done
	grep -q "$2" "$work/guest.log"
}
attach() {  # put rnic's tap on the peers' bridge once DPDK made it
	for _ in $(seq 100); do
		ip -n rnic-peers link show "$1" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip -n rnic-peers link set "$1" master peerbr0 up
}

"$interop/net.sh" up >/dev/null 2>&1 || skip "cannot create the rnic-peers namespace"
boot "peer.test=$server_test peer.end=wait" "listening on" ||
	skip "the siw guest did not come up (see shared/interop/README.md): $(tail -2 "$work/guest.log" | tr '\n' ' ')"

crcs="on off"
[ -n "$dropin" ] && crcs=on
for crc in $crcs; do
	opt=""; [ $crc = off ] && opt="--no-crc"
	rnic_rping --vdev net_tap0,iface=rnicsiw0 --ip $rnic_ip --pcap "$work/crc-$crc.pcapng" \
		-- -c -a $guest -p 7174 -C 10 -v -V $opt >"$work/client-$crc.log" 2>&1 &
	pid=$!
	attach rnicsiw0
	wait $pid || fail "rnic-ping -c (CRC $crc) exit $?"
	n=$(grep -c "^ping data: rdma-ping-" "$work/client-$crc.log")
	[ "$n" = 10 ] || fail "rnic-ping -c (CRC $crc): $n of 10 pings"
	echo "$me -c -> siw rping -s, CRC $crc: 10 pings"
	if command -v tshark >/dev/null; then
		v=$(tshark -r "$work/crc-$crc.pcapng" -V 2>/dev/null)
		fpdus=$(tshark -r "$work/crc-$crc.pcapng" 2>/dev/null | grep -c "DDP/RDMA")
		good=$(printf '%s\n' "$v" | grep -c "Good CRC32")
		bad=$(printf '%s\n' "$v" | grep -ciE "Bad CRC|malformed")
		echo "  tshark: $fpdus FPDUs, $good good CRC32, $bad bad or malformed"
		[ "$bad" = 0 ] || fail "tshark found bad CRCs or malformed frames (CRC $crc)"
		[ "$fpdus" -ge 50 ] || fail "tshark decoded only $fpdus FPDUs"
		if [ $crc = on ]; then
			[ "$good" = "$fpdus" ] || fail "$good good CRCs for $fpdus FPDUs"
		fi
	else
		echo "  tshark not installed: capture not decoded"
	fi
done
stop_guest

rnic_rping --vdev net_tap0,iface=rnicsiw1 --ip $rnic_ip -- -s -v -V -C 5 \
	>"$work/server.log" 2>&1 &
spid=$!
attach rnicsiw1
boot "peer.test=rping-client peer.peer=$rnic_addr" "PEER-RESULT" || fail "guest rping client did not run"
grep -q "PEER-RESULT: siw_rping_to_peer PASS" "$work/guest.log" || fail "siw rping -c failed"
wait $spid || fail "rnic-ping -s exit $?"
echo "siw rping -c -> $me -s: PASS ($(grep -c 'server ping data' "$work/server.log") pings served)"
stop_guest
rm -rf "$work"
echo "1 passed, 0 failed"
