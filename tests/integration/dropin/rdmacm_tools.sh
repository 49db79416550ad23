#!/bin/bash
# Unmodified librdmacm programs over rnic (issue 17), each end in its own
# rnic-run process on its own net_tap port, the taps bridged in a network
# namespace:
#  - rping -s / rping -c -v -C 10 over iWARP and over RoCE (the client's
#    --transport; the server's listener hears both): both exit 0, the
#    client prints rdma-ping-0..9 and the server reads the same ten;
#  - the same with -q on both ends: rping creates and moves its own QP
#    (conn_param.qp_num, rdma_init_qp_attr, CONNECT_RESPONSE and
#    rdma_establish on the client);
#  - rdma_server / rdma_client (rdma_getaddrinfo, the synchronous
#    rdma_create_ep and rdma_get_request) over both transports: exit 0;
#  - cmtime -c 10 (ten connections at once, each QP destroyed right after
#    its rdma_disconnect() and before its DISCONNECTED) against cmtime's
#    server: the client exits 0 with its table;
#  - rping (iWARP and RoCE) and rdma_server/rdma_client (iWARP) on IPv6
#    addresses;
#  - rping -c to a port nobody listens on: REJECTED as Linux reports it
#    (-111 on iWARP, IB CM reason 8 on RoCE) and rping's own exit status
#    (255), not a crash: its event thread calls exit() while its main
#    thread does too, and the exit handlers must not trip on each other.
set -uo pipefail
for t in rping rdma_server rdma_client cmtime; do
	if ! command -v "$t" >/dev/null; then
		echo "SKIP: $t not found (install rdmacm-utils: scripts/deps.sh)"
		exit 77
	fi
done
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, run, work, ok, bad, pair

# the ten data lines rping -v prints, N = 0..9, on the client ($1 "") or
# the server ($1 "server ")
pings() {
	local want got
	want=$(seq 0 9 | sed "s/^/$1ping data: rdma-ping-/")
	got=$(grep -o "^$1ping data: rdma-ping-[0-9]*" "$2")
	[ "$want" = "$got" ]
}

for tr in iwarp roce; do
	# -d: rping says "rdma_listen" (the readiness line) before it listens
	if pair "rping-$tr" "$tr" "rping -s -d -a 0.0.0.0 -v -C 10" \
		"rping -c -a 192.0.2.1 -v -C 10" "^rdma_listen"; then
		ok
		pings "" "$work/rping-$tr.c" && ok ||
			{ cat "$work/rping-$tr.c"; bad "rping over $tr: the client's -v lines"; }
		pings "server " "$work/rping-$tr.s" && ok ||
			{ cat "$work/rping-$tr.s"; bad "rping over $tr: the server's -v lines"; }
	else
		bad "rping over $tr: exit status"
	fi
	if pair "rpingq-$tr" "$tr" "rping -s -q -d -a 0.0.0.0 -v -C 10" \
		"rping -c -q -a 192.0.2.1 -v -C 10" "^rdma_listen"; then
		pings "" "$work/rpingq-$tr.c" && pings "server " "$work/rpingq-$tr.s" && ok ||
			{ cat "$work/rpingq-$tr.c"; bad "rping -q over $tr: the -v lines"; }
	else
		bad "rping -q over $tr: exit status"
	fi
	if pair "rdma-$tr" "$tr" "rdma_server" "rdma_client -s 192.0.2.1"; then
		grep -q "rdma_client: end 0" "$work/rdma-$tr.c" &&
			grep -q "rdma_server: end 0" "$work/rdma-$tr.s" && ok ||
			bad "rdma_server/rdma_client over $tr: no 'end 0'"
	else
		bad "rdma_server/rdma_client over $tr: exit status"
	fi
	if PERSISTENT=1 pair "cmtime-$tr" "$tr" "cmtime" "cmtime -s 192.0.2.1 -c 10"; then
		grep -q "^disconnect *:" "$work/cmtime-$tr.c" && ok ||
			{ cat "$work/cmtime-$tr.c"; bad "cmtime over $tr: no table"; }
	else
		bad "cmtime over $tr: exit status"
	fi
	want=$([ "$tr" = roce ] && echo 8 || echo -111)
	if CLIENT_EXIT=255 PERSISTENT=1 pair "refused-$tr" "$tr" "rping -s -d -a 0.0.0.0 -p 7000" \
		"rping -c -a 192.0.2.1 -C 1" "^rdma_listen"; then
		grep -q "RDMA_CM_EVENT_REJECTED, error $want\$" "$work/refused-$tr.c" && ok ||
			{ cat "$work/refused-$tr.c"; bad "rping to a closed port over $tr: no REJECTED $want"; }
	else
		bad "rping to a closed port over $tr: exit status"
	fi
done

# IPv6 (issue 20): rping over iWARP and RoCE, rdma_server/rdma_client over
# iWARP, between 2001:db8::1 and ::2 (the ports dual-stack, the server on
# the IPv6 any address)
export PAIR_IP6=1
for tr in iwarp roce; do
	if pair "rping6-$tr" $tr "rping -s -d -a :: -v -C 10" "rping -c -d -a 2001:db8::1 -v -C 10" \
		"^rdma_listen"; then
		pings "" "$work/rping6-$tr.c" && pings "server " "$work/rping6-$tr.s" && ok ||
			{ cat "$work/rping6-$tr.c"; bad "rping over IPv6, $tr: the -v lines"; }
	else
		bad "rping over IPv6, $tr: exit status"
	fi
done
if pair "rdma6" iwarp "rdma_server" "rdma_client -s 2001:db8::1"; then
	grep -q "rdma_client: end 0" "$work/rdma6.c" && grep -q "rdma_server: end 0" "$work/rdma6.s" &&
		ok || bad "rdma_server/rdma_client over IPv6: no 'end 0'"
else
	bad "rdma_server/rdma_client over IPv6: exit status"
fi
unset PAIR_IP6

echo "rdmacm_tools: $pass passed, $fails failed"
[ "$fails" = 0 ]
