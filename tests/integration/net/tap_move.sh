#!/usr/bin/env bash
# The user guide's "Ping the default gateway" recipe (issue 18): the kernel
# side of rdma-gateway's net_tap moves into another network namespace, gets
# an address there and pings rnic: 10 echoes over 10 s, 10 replies, and the
# port stays up (telemetry link_up 1, no link_down drops). Moving the tap is
# not a cable pull: the tap's file descriptor stays attached and frames flow,
# only the interface left rnic's namespace, where the PMD looks for it.
# Then two real losses must still take the link down: the kernel side set
# down while in rnic's namespace, and the tap deleted from the other one.
# Exit 77 (meson: skipped) with a reason when root, /dev/net/tun or network
# namespaces are missing.
set -u
build=${RNIC_BUILD_DIR:?}
gw=$build/apps/rdma-gateway/rdma-gateway
home=rnic-mh$$          # rnic's namespace, where the tap is born
peer=rnic-mp$$          # where the recipe moves it
tap=rnicm$$
log=$(mktemp)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; echo "--- gateway log"; cat "$log"; cleanup; exit 1; }
cleanup() {
	[ -n "${gwpid:-}" ] && kill -TERM "$gwpid" 2>/dev/null && wait "$gwpid" 2>/dev/null
	ip netns del "$home" 2>/dev/null
	ip netns del "$peer" 2>/dev/null
	rm -f "$log"
}
[ "$(id -u)" = 0 ] || skip "needs root for net_tap and network namespaces"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
ip netns add "$home" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$peer" 2>/dev/null || { ip netns del "$home"; skip "cannot create a network namespace"; }

ip netns exec "$home" "$gw" --vdev "net_tap0,iface=$tap" --ip 192.0.2.10/24 >"$log" 2>&1 &
gwpid=$!
for _ in $(seq 100); do
	ip -n "$home" link show "$tap" >/dev/null 2>&1 && break
	kill -0 "$gwpid" 2>/dev/null || fail "gateway exited early"
	sleep 0.1
done
ip -n "$home" link show "$tap" >/dev/null 2>&1 || fail "tap $tap never appeared"
for _ in $(seq 50); do
	grep -q 'file-prefix rnic-' "$log" && break
	sleep 0.1
done
prefix=$(sed -n 's/.*file-prefix \(rnic-[0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$prefix" ] || fail "gateway did not print its EAL file-prefix"

# port FIELD: port 0's FIELD in /rnic/ports (an integer)
port() {
	echo /rnic/ports | timeout 10 dpdk-telemetry.py -f "$prefix" 2>/dev/null |
		sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" | head -1
}
# wait_link V: link_up becomes V within 3 s (worker 0 polls every 100 ms)
wait_link() {
	for _ in $(seq 30); do
		[ "$(port link_up)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# the recipe, as the user guide writes it
ip -n "$home" link set "$tap" netns "$peer" || fail "cannot move the tap"
ip -n "$peer" addr add 192.0.2.1/24 dev "$tap"
ip -n "$peer" link set "$tap" up
out=$(ip netns exec "$peer" ping -c 10 -i 1 -W 2 192.0.2.10 2>&1)
echo "$out" | tail -3
echo "$out" | grep -q '^10 packets transmitted, 10 received' ||
	fail "the moved tap did not get 10 of 10 echoes (link_up $(port link_up), link_down_drops $(port link_down_drops))"
[ "$(port link_up)" = 1 ] || fail "link_up is $(port link_up) after the tap moved"
drops=$(port link_down_drops)
[ "$drops" = 0 ] || fail "$drops link_down drops after the tap moved"
echo "ok: 10 of 10 echoes through the moved tap, link up, 0 link_down drops"

# back home, then a real loss: the kernel side set down in rnic's namespace
ip -n "$peer" link set "$tap" netns "$home" || fail "cannot move the tap back"
ip -n "$home" link set "$tap" up
wait_link 1 || fail "link not up with the tap back home and up"
ip -n "$home" link set "$tap" down
wait_link 0 || fail "link still up with the kernel side down in rnic's namespace"
ip -n "$home" link set "$tap" up
wait_link 1 || fail "link not back up"
echo "ok: kernel side down in rnic's namespace: link down, and up again"

# the tap moved away and deleted there: the file descriptor is detached
ip -n "$home" link set "$tap" netns "$peer" || fail "cannot move the tap again"
sleep 0.3
[ "$(port link_up)" = 1 ] || fail "link down while the tap is merely away"
ip -n "$peer" link del "$tap" || fail "cannot delete the tap"
wait_link 0 || fail "link still up with the tap deleted"
echo "ok: the tap deleted in the other namespace: link down"

kill -TERM "$gwpid"
wait "$gwpid"
rc=$?
gwpid=
[ "$rc" = 0 ] || fail "gateway exit status $rc after SIGTERM"
cleanup
echo "3 passed, 0 failed"
