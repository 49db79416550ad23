# Sourced by the net_tap tests that run one rdma-gateway on a tap in a
# network namespace: sets build, gw, ns (rnic-$1$$), tap (rnic$1$$) and
# log; skip, fail and cleanup; start_tap_gw ARGS... (the gateway on the
# tap with ARGS, waiting until DPDK made the tap). Skips (exit 77) with a
# reason when root, /dev/net/tun or network namespaces are missing.
build=${RNIC_BUILD_DIR:?}
gw=$build/apps/rdma-gateway/rdma-gateway
ns=rnic-$1$$
tap=rnic$1$$
log=$(mktemp)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; echo "--- gateway log"; cat "$log"; cleanup; exit 1; }
cleanup() {
	[ -n "${gwpid:-}" ] && kill -TERM "$gwpid" 2>/dev/null && wait "$gwpid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -f "$log"
}
[ "$(id -u)" = 0 ] || skip "needs root for net_tap and network namespaces"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"

start_tap_gw() {
	ip netns exec "$ns" "$gw" --vdev "net_tap0,iface=$tap" "$@" >"$log" 2>&1 &
	gwpid=$!
	for _ in $(seq 100); do
		ip -n "$ns" link show "$tap" >/dev/null 2>&1 && break
		kill -0 "$gwpid" 2>/dev/null || fail "gateway exited early"
		sleep 0.1
	done
	ip -n "$ns" link show "$tap" >/dev/null 2>&1 || fail "tap $tap never appeared"
}
