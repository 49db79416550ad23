# Sourced by the gateway tests: a network namespace $ns with a bridge br0
# that the net_tap ports of the gateway and of its clients join, the pass
# and fail counters, and the cleanup of everything (the gateway $gwpid, the
# namespace's processes, $work) on exit. Needs ns set; sets build, gw (the
# rdma-gateway binary) and work (a temporary directory). Skips the test
# (exit 77) with the reason when there is no root, tun or netns.
build=${RNIC_BUILD_DIR:?}
gw=$build/apps/rdma-gateway/rdma-gateway
pass=0 fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { pass=$((pass + 1)); }

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespace, tap devices)"
	exit 77
fi
if [ ! -c /dev/net/tun ]; then
	echo "SKIP: no /dev/net/tun (net_tap ports)"
	exit 77
fi
if ! ip netns add "$ns" 2>/dev/null; then
	echo "SKIP: cannot create a network namespace"
	exit 77
fi
cleanup() {
	[ -n "${gwpid:-}" ] && kill -9 "$gwpid" 2>/dev/null
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	sleep 0.2
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
work=$(mktemp -d)
trap cleanup EXIT
ip -n "$ns" link set lo up
ip -n "$ns" link add br0 type bridge
ip -n "$ns" link set br0 up

# bridge tap $1 once its process has created it
bridge_tap() {
	for _ in $(seq 200); do
		if ip -n "$ns" link show "$1" >/dev/null 2>&1; then
			ip -n "$ns" link set "$1" master br0 && ip -n "$ns" link set "$1" up
			return
		fi
		sleep 0.05
	done
}
