#!/bin/bash
# rdma-gateway and rnic-cp --transport roce in separate processes, each on
# its own net_tap port, the taps bridged in a network namespace (issue 7,
# the RoCE half; the iWARP half is gateway_cp.sh):
#  - put 32 MiB of random data over RoCE into a file-backed target, SIGTERM
#    the gateway (exit 0, file synced), restart it, get it back over RoCE:
#    identical;
#  - rejects over RoCE: an address outside allow, a write to an ro target,
#    a port nobody listens on;
#  - the target's transport list: an iwarp-only target refuses a RoCE
#    client and a roce-only one an iWARP client, with the reason, and each
#    counts one rejection; each takes a client of its own transport.
set -uo pipefail
ns=rnic-gwr-$$
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, gw, work, ok, bad, bridge_tap

cat > "$work/gw.ini" <<INI
[port.0]
vdev = net_tap0,iface=gwtap0
ip = 192.0.2.10/24
[target.scratch]
size = 64M
file = $work/scratch.bin
access = rw
transport = roce
[target.ro]
size = 1M
access = ro
[target.only10]
size = 1M
allow = 10.0.0.0/8
[target.iwonly]
size = 1M
transport = iwarp
[target.roonly]
size = 1M
transport = roce
[gateway]
status_ms = 200
INI

head -c 33554432 /dev/urandom > "$work/put.bin"
start_gw "target roonly" || { bad "gateway did not start"; exit 1; }
grep -q '^target scratch: .*, rw, roce port 4791' "$work/gw.out" && ok ||
	{ cat "$work/gw.out"; bad "a roce-only target is not served"; }
rcp 0 --transport roce put "$work/put.bin" rdma://192.0.2.10/scratch > "$work/put.out" 2>&1 &&
	grep -q '^put 33554432 bytes into scratch' "$work/put.out" && ok ||
	{ cat "$work/put.out"; bad "put 32 MiB over RoCE"; }
tail -1 "$work/put.out"
stop_gw && ok || bad "gateway exit status after SIGTERM"
cmp -s <(head -c 33554432 "$work/scratch.bin") "$work/put.bin" && ok ||
	bad "the file target does not hold the RoCE put after SIGTERM"

start_gw "target roonly" || { bad "gateway did not restart"; exit 1; }
rcp 0 --transport roce get rdma://192.0.2.10/scratch "$work/get.bin" --length 33554432 \
	> "$work/get.out" 2>&1 && cmp -s "$work/get.bin" "$work/put.bin" && ok ||
	{ cat "$work/get.out"; bad "get over RoCE after restart differs"; }
tail -1 "$work/get.out"

expect_reject "allow over RoCE" "rejected: 192.0.2.21 is not allowed" \
	--transport roce get rdma://192.0.2.10/only10 "$work/x" --length 16
expect_reject "ro over RoCE" "rejected: target is read-only" \
	--transport roce put "$work/put.bin" rdma://192.0.2.10/ro
expect_reject "iwarp-only target, RoCE client" "rejected: target iwonly: not offered over roce" \
	--transport roce get rdma://192.0.2.10/iwonly "$work/x" --length 16
expect_reject "roce-only target, iWARP client" "rejected: target roonly: not offered over iwarp" \
	get rdma://192.0.2.10/roonly "$work/x" --length 16
expect_reject "closed port over RoCE" "unreachable over roce" \
	--transport roce get rdma://192.0.2.10:5000/scratch "$work/x" --length 16
# each transport still reaches a target that offers it
rcp 2 --transport roce get rdma://192.0.2.10/roonly "$work/r.bin" --length 4096 \
	> "$work/r.out" 2>&1 && ok || { cat "$work/r.out"; bad "RoCE client of roonly"; }
rcp 2 get rdma://192.0.2.10/iwonly "$work/i.bin" --length 4096 \
	> "$work/i.out" 2>&1 && ok || { cat "$work/i.out"; bad "iWARP client of iwonly"; }

# the counters, from a status line after the last client
sleep 0.5
last=$(grep '| roonly:' "$work/gw.out" | tail -1)
for want in "only10: 0 conn, .* 1 rejected" "ro: 0 conn, .* 1 rejected" \
	    "iwonly: 0 conn, .* 1 rejected" "roonly: 0 conn, .* 1 rejected"; do
	echo "$last" | grep -q "| $want" && ok || { echo "$last"; bad "counter: $want"; }
done
kill -0 "$gwpid" 2>/dev/null && ok || bad "the gateway died"
stop_gw && ok || bad "second SIGTERM"
gw_tail
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
