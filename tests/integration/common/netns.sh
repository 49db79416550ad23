# Sourced by the tests that put rnic's net_tap ports on a bridge in a
# network namespace of their own: the pass and fail counters (ok, bad);
# namespace $ns (set it first) with its loopback up and a bridge br0;
# work, a temporary directory; bridge_tap; on exit, the namespace's
# processes killed, the namespace and $work removed (after the caller's
# extra_cleanup, when it defines one). Skips the test (exit 77) with the
# reason when there is no root, tun or netns. Sets build.
build=${RNIC_BUILD_DIR:?}
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
	echo "SKIP: cannot create a network namespace (iproute2)"
	exit 77
fi
work=$(mktemp -d)
cleanup() {
	declare -F extra_cleanup >/dev/null && extra_cleanup
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	sleep 0.2
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
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
