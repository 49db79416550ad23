# Shared by the tests whose peer is the Linux kernel behind a net_tap in a
# network namespace (tcp_kernel.sh, tcp_kernel_ipv6.sh). Source it with
# $ns (the namespace) set: it makes $work and defines skip (exit 77),
# cleanup and fail (the logs' ends, exit 1), and skips without root or
# /dev/net/tun.
work=$(mktemp -d)
skip() { echo "SKIP: $*"; rm -rf "$work"; exit 77; }
cleanup() { ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; sleep 0.2
	    ip netns del "$ns" 2>/dev/null; rm -rf "$work"; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -5 "$f"; done; cleanup; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root for net_tap and network namespaces"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
