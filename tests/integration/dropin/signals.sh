#!/bin/bash
# Signals through the drop-in as libibverbs and librdmacm have them:
# signal_check (an ordinary libibverbs + librdmacm program) signals its
# own threads blocked in ibv_get_cq_event and rdma_get_cm_event, and the
# process, and checks the EINTR returns (signal_check.c lists the cases),
# in one rnic-run process over net_null (no root, no tap). Then, with root
# and /dev/net/tun: the program's own poll() calls while its net_tap port
# is pinged 200 times from the namespace's kernel must never fail with
# EINTR (DPDK's tap raises a signal per received frame).
set -uo pipefail
build=${RNIC_BUILD_DIR:?}
run=$build/apps/rnic-run/rnic-run
check=$build/tests/integration/dropin/signal_check
fails=0
if [ ! -x "$check" ]; then
	echo "SKIP: signal_check not built (libibverbs-dev, librdmacm-dev missing)"
	exit 77
fi
out=$(timeout 45 "$run" --vdev net_null0 --ip 10.9.$((RANDOM % 200)).1/24 -- "$check" 2>&1)
rc=$?
echo "$out" | sed 's/^/  /'
if [ $rc != 0 ] || ! grep -q "^signal_check: [0-9]* checks, all ok" <<< "$out"; then
	echo "FAIL: signal_check exit $rc"
	fails=$((fails + 1))
fi

if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ]; then
	echo "net_tap part skipped: needs root and /dev/net/tun"
	[ $fails = 0 ]
	exit
fi
ns=rnic-dropin-sig-$$
work=$(mktemp -d)
cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	sleep 0.2
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns" || { echo "FAIL: cannot create a network namespace"; exit 1; }
ip -n "$ns" link set lo up
ip -n "$ns" link add br0 type bridge
ip -n "$ns" link set br0 up
ip -n "$ns" addr add 192.0.2.254/24 dev br0
ip netns exec "$ns" timeout 30 "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 -- \
	"$check" poll 5 > "$work/tap" 2>&1 &
pid=$!
for _ in $(seq 200); do ip -n "$ns" link show rv0 > /dev/null 2>&1 && break; sleep 0.05; done
ip -n "$ns" link set rv0 master br0
ip -n "$ns" link set rv0 up
for _ in $(seq 200); do grep -q "^ready" "$work/tap" && break; sleep 0.05; done
ip netns exec "$ns" ping -c 200 -i 0.01 -q 192.0.2.1 > "$work/ping" 2>&1
wait $pid
rc=$?
sed 's/^/  /' "$work/tap" "$work/ping"
if [ $rc != 0 ] || ! grep -q "^ok: poll() in the program: [0-9]* calls, 0 failed" "$work/tap"; then
	echo "FAIL: the program's poll() over net_tap (exit $rc)"
	fails=$((fails + 1))
fi
got=$(grep -o '[0-9]* received' "$work/ping" | cut -d' ' -f1)
if [ "${got:-0}" -lt 150 ]; then
	echo "FAIL: ${got:-0} of 200 pings answered: the frames did not flow (or the tap's receive trigger was lost)"
	fails=$((fails + 1))
fi
[ $fails = 0 ]
