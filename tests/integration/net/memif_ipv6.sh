#!/usr/bin/env bash
# rnic's programs on IPv6-only ports, two processes joined by net_memif (no
# root), over iWARP. rdma-gateway and rnic-cp: the gateway's port has 2001:db8::10/64, the target
# allows 2001:db8::20/127 and 10.0.0.0/8; rnic-cp from 2001:db8::20 puts
# 16 MiB to rdma://[2001:db8::10]/scratch and gets it back (equal bytes);
# a client from 2001:db8::30, outside the allowed networks, is refused by
# the gateway with "not allowed". Then rnic-perf write_bw --server and
# --client 2001:db8::1 (2000 x 64 KiB, JSON out). Exit 77 with the reason when
# DPDK has no net_memif.
set -u
b=${RNIC_BUILD_DIR:?}/apps
work=$(mktemp -d)
. "$(dirname "$0")/../common/memif.sh"
sock=$work/memif.sock
gwpid=
cleanup() { [ -n "$gwpid" ] && kill "$gwpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -5 "$f"; done; exit 1; }
cat >"$work/gw.ini" <<INI
[port.0]
vdev = net_memif0,role=server,socket=$sock
ip = 2001:db8::10/64
[target.scratch]
size = 16M
transport = iwarp
allow = 2001:db8::20/127, 10.0.0.0/8
[gateway]
status_ms = 0
INI
"$b/rdma-gateway/rdma-gateway" --config "$work/gw.ini" >"$work/gw.log" 2>&1 &
gwpid=$!
for _ in $(seq 100); do
	grep -q '^target scratch' "$work/gw.log" && break
	grep -q "cannot create vdev" "$work/gw.log" && { echo "SKIP: DPDK cannot create net_memif here"; exit 77; }
	sleep 0.1
done
grep -q '^target scratch' "$work/gw.log" || fail "rdma-gateway did not start"
head -c 16777216 /dev/urandom >"$work/put.bin"
cli=(--vdev "net_memif0,role=client,socket=$sock" --ip 2001:db8::20/64)
timeout 120 "$b/rnic-cp/rnic-cp" "${cli[@]}" put "$work/put.bin" \
	"rdma://[2001:db8::10]/scratch" >"$work/put.log" 2>&1 || fail "rnic-cp put: exit $?"
timeout 120 "$b/rnic-cp/rnic-cp" "${cli[@]}" get "rdma://[2001:db8::10]/scratch" \
	"$work/get.bin" --length 16777216 >"$work/get.log" 2>&1 || fail "rnic-cp get: exit $?"
cmp -s "$work/put.bin" "$work/get.bin" || fail "what came back differs from what was put"
echo "ok: 16 MiB put to and got from rdma://[2001:db8::10]/scratch ($(tail -1 "$work/put.log"); $(tail -1 "$work/get.log"))"
# a client outside the allowed networks is refused
timeout 60 "$b/rnic-cp/rnic-cp" --vdev "net_memif0,role=client,socket=$sock" \
	--ip 2001:db8::30/64 get "rdma://[2001:db8::10]/scratch" \
	"$work/no.bin" --length 4096 >"$work/refused.log" 2>&1 && fail "a client outside the allowed network got the data"
grep -q "not allowed" "$work/refused.log" || fail "no 'not allowed' in the refusal"
echo "ok: a client from 2001:db8::30 is refused ($(grep -m1 'not allowed' "$work/refused.log"))"
kill -TERM "$gwpid"
wait "$gwpid" || { gwpid=; fail "rdma-gateway exit status $? after SIGTERM"; }
gwpid=
rm -f "$sock"
timeout 120 "$b/rnic-perf/rnic-perf" write_bw --server --transport iwarp -n 2000 --json \
	--vdev "net_memif0,role=server,socket=$sock" --ip 2001:db8::1/64 >"$work/perf-s.log" 2>&1 &
gwpid=$!
wait_memif_listen "$sock" "$gwpid"
timeout 120 "$b/rnic-perf/rnic-perf" write_bw --client 2001:db8::1 --transport iwarp -n 2000 \
	--json --vdev "net_memif0,role=client,socket=$sock" --ip 2001:db8::2/64 \
	>"$work/perf-c.log" 2>"$work/perf-c.err" || fail "rnic-perf --client 2001:db8::1: exit $?"
wait "$gwpid" || { gwpid=; fail "rnic-perf --server: exit $?"; }
gwpid=
gbps=$(tail -1 "$work/perf-c.log" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["completed"] == 2000, r; print(r["gbps"])') ||
	fail "rnic-perf --client: no JSON result with 2000 completions"
echo "ok: rnic-perf write_bw --client 2001:db8::1 over iWARP: $gbps Gbit/s"
echo "1 passed, 0 failed"
