#!/bin/bash
# Unmodified librdmacm programs over rnic (issue 17), each end in its own
# rnic-run process on its own net_tap port, the taps bridged in a network
# namespace:
#  - rping -s / rping -c -v -C 10 over iWARP and over RoCE (the client's
#    --transport; the server's listener hears both): both exit 0, the
#    client prints rdma-ping-0..9 and the server reads the same ten;
#  - rdma_server / rdma_client (rdma_getaddrinfo, the synchronous
#    rdma_create_ep and rdma_get_request) over both transports: exit 0.
set -uo pipefail
build=${RNIC_BUILD_DIR:?}
run=$build/apps/rnic-run/rnic-run
ns=rnic-cm-$$
pass=0 fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { pass=$((pass + 1)); }

for t in rping rdma_server rdma_client; do
	if ! command -v "$t" >/dev/null; then
		echo "SKIP: $t not found (install rdmacm-utils: scripts/deps.sh)"
		exit 77
	fi
done
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

# pair NAME TRANSPORT "SERVER ARGS" "CLIENT ARGS": the server on rv0
# (192.0.2.1), then the client on rv1 (192.0.2.2) with TRANSPORT; their
# output in $work/NAME.{s,c}; fails unless both exit 0
pair() {
	local name=$1 tr=$2 sargs=$3 cargs=$4
	bridge_tap rv0 &
	local bp0=$!
	# shellcheck disable=SC2086
	ip netns exec "$ns" timeout 30 "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 \
		-- $sargs > "$work/$name.s" 2>&1 &
	local spid=$!
	# the stack starts on the program's first rdma_cm call; it listens
	# right after
	for _ in $(seq 100); do
		grep -q "EAL file-prefix" "$work/$name.s" && break
		sleep 0.05
	done
	sleep 0.5
	bridge_tap rv1 &
	local bp=$!
	# shellcheck disable=SC2086
	ip netns exec "$ns" timeout 20 "$run" --vdev net_tap1,iface=rv1 --ip 192.0.2.2/24 \
		--transport "$tr" -- $cargs > "$work/$name.c" 2>&1
	local crc=$?
	wait "$bp0" "$bp"
	wait "$spid"
	local src=$?
	if [ "$crc" = 0 ] && [ "$src" = 0 ]; then
		return 0
	fi
	echo "--- $name client (exit $crc$([ "$crc" = 124 ] && echo ', hung'))"
	cat "$work/$name.c"
	echo "--- $name server (exit $src$([ "$src" = 124 ] && echo ', hung'))"
	cat "$work/$name.s"
	return 1
}

# the ten data lines rping -v prints, N = 0..9, on the client ($1 "") or
# the server ($1 "server ")
pings() {
	local want got
	want=$(seq 0 9 | sed "s/^/$1ping data: rdma-ping-/")
	got=$(grep -o "^$1ping data: rdma-ping-[0-9]*" "$2")
	[ "$want" = "$got" ]
}

for tr in iwarp roce; do
	if pair "rping-$tr" "$tr" "rping -s -a 0.0.0.0 -v -C 10" "rping -c -a 192.0.2.1 -v -C 10"; then
		ok
		pings "" "$work/rping-$tr.c" && ok ||
			{ cat "$work/rping-$tr.c"; bad "rping over $tr: the client's -v lines"; }
		pings "server " "$work/rping-$tr.s" && ok ||
			{ cat "$work/rping-$tr.s"; bad "rping over $tr: the server's -v lines"; }
	else
		bad "rping over $tr: exit status"
	fi
	if pair "rdma-$tr" "$tr" "rdma_server" "rdma_client -s 192.0.2.1"; then
		grep -q "rdma_client: end 0" "$work/rdma-$tr.c" &&
			grep -q "rdma_server: end 0" "$work/rdma-$tr.s" && ok ||
			bad "rdma_server/rdma_client over $tr: no 'end 0'"
	else
		bad "rdma_server/rdma_client over $tr: exit status"
	fi
done

echo "rdmacm_tools: $pass passed, $fails failed"
[ "$fails" = 0 ]
