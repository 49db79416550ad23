#!/bin/bash
# rdma-gateway and rnic-cp in separate processes, each on its own net_tap
# port, the taps bridged in a network namespace (issue 7):
#  - put 32 MiB of random data into a file-backed target, SIGTERM the
#    gateway (exit 0, file synced), restart it, get it back: identical;
#  - rejects: an address outside allow, a write to an ro target, an unknown
#    target, a port nobody listens on, a range past the target's end;
#  - 16 clients at once, on a gateway whose mbuf pool is smaller than their
#    send queues would take (4096 mbufs; 16 x 1 MiB of Read Responses
#    is about 11600): the gateway must hold back and keep every client
#    going, not stall one of them for good;
#  - a client killed mid-transfer: the gateway keeps serving the others.
set -uo pipefail
ns=rnic-gwt-$$
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, gw, work, ok, bad, bridge_tap
cp=$build/apps/rnic-cp/rnic-cp

cat > "$work/gw.ini" <<INI
[port.0]
vdev = net_tap0,iface=gwtap0
ip = 192.0.2.10/24
mbufs = 4096
[target.scratch]
size = 64M
file = $work/scratch.bin
access = rw
[target.ro]
size = 1M
access = ro
[target.only10]
size = 1M
allow = 10.0.0.0/8
[gateway]
status_ms = 500
INI

head -c 33554432 /dev/urandom > "$work/put.bin"
start_gw "target only10" || { bad "gateway did not start"; exit 1; }
rcp 0 put "$work/put.bin" rdma://192.0.2.10/scratch > "$work/put.out" 2>&1 &&
	grep -q '^put 33554432 bytes into scratch' "$work/put.out" && ok ||
	{ cat "$work/put.out"; bad "put 32 MiB"; }
stop_gw && ok || bad "gateway exit status after SIGTERM"
cmp -s <(head -c 33554432 "$work/scratch.bin") "$work/put.bin" && ok ||
	bad "the file target does not hold the data after SIGTERM"

start_gw "target only10" || { bad "gateway did not restart"; exit 1; }
rcp 0 get rdma://192.0.2.10/scratch "$work/get.bin" --length 33554432 > "$work/get.out" 2>&1 &&
	cmp -s "$work/get.bin" "$work/put.bin" && ok ||
	{ cat "$work/get.out"; bad "get after restart differs"; }

expect_reject "allow" "rejected: 192.0.2.21 is not allowed" get rdma://192.0.2.10/only10 "$work/x" --length 16
expect_reject "ro" "rejected: target is read-only" put "$work/put.bin" rdma://192.0.2.10/ro
expect_reject "unknown target" "rejected: no target 'nope'" get rdma://192.0.2.10/nope "$work/x" --length 16
expect_reject "closed port" "unreachable" get rdma://192.0.2.10:5000/scratch "$work/x" --length 16
expect_reject "too small" "too small" get "rdma://192.0.2.10/scratch?offset=67108860" "$work/x" --length 16

# a client that vanishes mid-transfer
bridge_tap clitap2 &
bp=$!
ip netns exec "$ns" "$cp" --vdev net_tap0,iface=clitap2 --ip 192.0.2.22/24 --depth 1 --chunk 64K \
	put "$work/put.bin" rdma://192.0.2.10/scratch > /dev/null 2>&1 &
victim=$!
sleep 3
kill -9 "$victim" 2>/dev/null
wait "$victim" "$bp" 2>/dev/null

# 16 clients at once, each reading its own 1 MiB slice
for n in $(seq 3 18); do
	rcp "$n" get "rdma://192.0.2.10/scratch?offset=$(( (n - 3) * 1048576 ))" "$work/c$n.bin" \
		--length 1048576 > "$work/c$n.out" 2>&1 &
	cpid[n]=$!
done
all=1
for n in $(seq 3 18); do
	wait "${cpid[n]}"
	rc=$?
	# exit 124: timeout(1) stopped a client that hung
	[ "$rc" = 0 ] || { all=0; cat "$work/c$n.out"; echo "client $n: exit $rc" \
		"$([ "$rc" = 124 ] && echo '(hung, stopped after 120 s)')," \
		"$(stat -c %s "$work/c$n.bin") of 1048576 bytes written"; continue; }
	cmp -s "$work/c$n.bin" <(tail -c +$(( (n - 3) * 1048576 + 1 )) "$work/put.bin" | head -c 1048576) ||
		{ all=0; cat "$work/c$n.out"; echo "client $n differs"; }
done
[ "$all" = 1 ] && ok || bad "16 clients at once"
# still serving after the vanished client
rcp 1 get rdma://192.0.2.10/scratch "$work/get2.bin" --length 4096 > "$work/last.out" 2>&1 &&
	ok || { cat "$work/last.out"; bad "serving after a client vanished"; }
kill -0 "$gwpid" 2>/dev/null && ok || bad "the gateway died"
stop_gw && ok || bad "second SIGTERM"
gw_tail
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
