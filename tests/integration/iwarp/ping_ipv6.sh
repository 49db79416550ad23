#!/usr/bin/env bash
# rnic-ping over iWARP between two rnic processes on IPv6-only ports,
# joined by net_memif (no root): the client's `-a 2001:db8::1` goes through
# the CM's IPv6 connect, TCP over IPv6 and neighbour discovery; 20 pings of
# 4 KiB whose data the client compares (-V: RDMA Read, Write and Sends).
# PING_TRANSPORT=roce: the same over RoCEv2 (roce_ping_ipv6): the IB CM
# with IPv6 GIDs and the CMA header's IP version 6, RC over UDP/IPv6.
# Exit 77 with the reason when DPDK has no net_memif.
set -u
tp=${PING_TRANSPORT:-iwarp}
ping=${RNIC_BUILD_DIR:?}/apps/rnic-ping/rnic-ping
work=$(mktemp -d)
. "$(dirname "$0")/../common/memif.sh"
sock=$work/memif.sock
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
timeout 60 "$ping" -s -p 7174 -S 4096 --transport "$tp" --vdev "net_memif0,role=server,socket=$sock" \
	--ip 2001:db8::1/64 >"$work/server.log" 2>&1 &
spid=$!
wait_memif_listen "$sock" "$spid"
timeout 60 "$ping" -c -a 2001:db8::1 -p 7174 -C 20 -S 4096 -V -v --transport "$tp" \
	--vdev "net_memif0,role=client,socket=$sock" --ip 2001:db8::2/64 >"$work/client.log" 2>&1
rc=$?
if grep -q "cannot create vdev" "$work/server.log" "$work/client.log"; then
	echo "SKIP: DPDK cannot create net_memif here"
	exit 77
fi
n=$(grep -c "^ping data: rdma-ping-" "$work/client.log")
echo "rnic-ping --transport $tp -c -a 2001:db8::1: exit $rc, $n pings validated"
if [ "$rc" != 0 ] || [ "$n" != 20 ]; then
	echo "FAIL"
	tail -5 "$work/client.log" "$work/server.log"
	exit 1
fi
echo "1 passed, 0 failed"
