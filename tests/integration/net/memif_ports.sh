#!/usr/bin/env bash
# Two rnic processes joined by net_memif (issue 18): one socket file, the
# server role in one process, the client role in the other.
#  - TCP each way with equal SHA-256 (rnic-tcp sink and source, the memif
#    server on either side; RNIC_MEMIF_BYTES, default 32 MiB);
#  - RDMA Writes and Reads between the processes, data checked, over iWARP
#    and over RoCE: rnic-cp puts a file into an rdma-gateway target (Writes)
#    and gets it back (Reads), and the copy must equal the file;
#  - rnic-perf write_bw --server / --client over both transports, with the
#    workers on their lcores and with --drive one (run to completion):
#    both exit 0 and print one JSON object each (rnic-perf checks
#    every completion's status; the data check between processes is
#    rnic-cp's); the end of such a run is where memif's teardown raced.
# Needs no root (memif's copy mode works without hugepages); exit 77 with
# the reason when DPDK has no net_memif.
set -u
b=${RNIC_BUILD_DIR:?}/apps
bytes=${RNIC_MEMIF_BYTES:-32M}
work=$(mktemp -d)
sock=$work/memif.sock
pass=0 fails=0 pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $1"
	for f in "$work"/*.log; do echo "--- $f"; tail -5 "$f"; done
	fails=$((fails + 1))
}
ok() { echo "ok: $1"; pass=$((pass + 1)); }
. "$(dirname "$0")/../common/memif.sh"
srv() { echo "net_memif0,role=server,socket=$sock"; }
cli() { echo "net_memif0,role=client,socket=$sock"; }

# json LOG KEY...: the values of KEYs in LOG's last JSON line
json() {
	local log=$1
	shift
	grep '^{' "$log" | tail -1 |
		python3 -c 'import json,sys; r=json.load(sys.stdin); print(*[r[k] for k in sys.argv[1:]])' "$@"
}

# tcp NAME SINK_VDEV SOURCE_VDEV: rnic-tcp sink at 192.0.2.1,
# source at .2; the memif server's process starts first (a memif client
# does not start without its server)
tcp() {
	local name=$1 n=$bytes spid cpid got sent
	local sink=(timeout 120 "$b/rnic-tcp/rnic-tcp" sink --listen 5001 --bytes "$n" --json
		    --vdev "$2" --ip 192.0.2.1/24)
	local source=(timeout 120 "$b/rnic-tcp/rnic-tcp" source --connect 192.0.2.1:5001
		      --bytes "$n" --json --vdev "$3" --ip 192.0.2.2/24)
	if [[ $2 == *role=server* ]]; then
		"${sink[@]}" >"$work/sink.log" 2>&1 &
		spid=$!
		wait_memif_listen "$sock" "$spid"
		"${source[@]}" >"$work/source.log" 2>&1 &
		cpid=$!
	else
		"${source[@]}" >"$work/source.log" 2>&1 &
		cpid=$!
		wait_memif_listen "$sock" "$cpid"
		"${sink[@]}" >"$work/sink.log" 2>&1 &
		spid=$!
	fi
	pids+=("$spid" "$cpid")
	wait "$cpid"
	local crc=$?
	wait "$spid"
	local src=$?
	if grep -q "cannot create vdev" "$work/sink.log" "$work/source.log"; then
		echo "SKIP: DPDK cannot create net_memif here: $(grep -h 'cannot create' "$work"/s*.log)"
		exit 77
	fi
	[ "$crc" = 0 ] || { fail "$name: rnic-tcp source exit $crc"; return; }
	[ "$src" = 0 ] || { fail "$name: rnic-tcp sink exit $src"; return; }
	got=$(json "$work/sink.log" sha256 bytes gbps)
	sent=$(json "$work/source.log" sha256 bytes gbps)
	echo "$name: sent $sent, got $got"
	set -- $got
	local gs=$1 gb=$2
	set -- $sent
	if [ "$gs" != "$1" ] || [ "$gb" != "$2" ]; then
		fail "$name: SHA-256 or length differs"
	else
		ok "$name: $2 bytes, equal SHA-256"
	fi
}

tcp "TCP memif client -> server" "$(srv)" "$(cli)"
tcp "TCP memif server -> client" "$(cli)" "$(srv)"

# rdma-gateway (memif server) and rnic-cp (memif client), both transports
cat >"$work/gw.ini" <<INI
[port.0]
vdev = $(srv)
ip = 192.0.2.10/24
[target.scratch]
size = 16M
[gateway]
status_ms = 0
INI
"$b/rdma-gateway/rdma-gateway" --config "$work/gw.ini" >"$work/gw.log" 2>&1 &
gwpid=$!
pids+=("$gwpid")
for _ in $(seq 100); do
	grep -q '^target scratch' "$work/gw.log" && break
	sleep 0.1
done
grep -q '^target scratch' "$work/gw.log" || fail "rdma-gateway did not start"
head -c 16777216 /dev/urandom >"$work/put.bin"
n=0
for tr in iwarp roce; do
	n=$((n + 1))
	# a fresh client address each time: the gateway's ARP cache
	# remembers the previous client's MAC
	cp_args=(--transport "$tr" --vdev "$(cli)" --ip "192.0.2.2$n/24")
	rm -f "$work/get.bin"
	if ! timeout 120 "$b/rnic-cp/rnic-cp" "${cp_args[@]}" put "$work/put.bin" \
		rdma://192.0.2.10/scratch >"$work/put.log" 2>&1; then
		fail "rnic-cp put over $tr: exit status $?"
	elif ! timeout 120 "$b/rnic-cp/rnic-cp" "${cp_args[@]}" get rdma://192.0.2.10/scratch \
		"$work/get.bin" --length 16777216 >"$work/get.log" 2>&1; then
		fail "rnic-cp get over $tr: exit status $?"
	elif ! cmp -s "$work/put.bin" "$work/get.bin"; then
		fail "rnic-cp over $tr: what came back differs from what was put"
	else
		ok "RDMA over $tr between processes: 16 MiB Written, Read back, equal ($(tail -1 "$work/put.log"); $(tail -1 "$work/get.log"))"
	fi
	# the next put must not find this one's data: overwrite the file
	head -c 16777216 /dev/urandom >"$work/put.bin"
done
kill -TERM "$gwpid"
wait "$gwpid" || fail "rdma-gateway exit status $? after SIGTERM"

# rnic-perf between two processes, twice per transport: workers on their
# lcores, then --drive one (each process runs to completion). The two ends
# close at once at the end of a run: DPDK 22.11's memif freed the
# connection from two threads then, and one of the processes crashed in
# about half of these runs (lib/port/port.c, rnic_port_close())
for run in iwarp roce iwarp:one roce:one; do
	tr=${run%:*}
	drive=()
	[ "$run" != "$tr" ] && drive=(--drive one)
	timeout 120 "$b/rnic-perf/rnic-perf" write_bw --server --transport "$tr" -n 2000 --json \
		"${drive[@]}" --vdev "$(srv)" --ip 192.0.2.1/24 >"$work/perf-s.log" 2>"$work/perf-s.err" &
	spid=$!
	pids+=("$spid")
	wait_memif_listen "$sock" "$spid"
	if ! timeout 120 "$b/rnic-perf/rnic-perf" write_bw --client 192.0.2.1 --transport "$tr" \
		-n 2000 --json "${drive[@]}" --vdev "$(cli)" --ip 192.0.2.2/24 >"$work/perf-c.log" \
		2>"$work/perf-c.err"; then
		fail "rnic-perf write_bw --client over $tr ${drive[*]}: exit status $?"
		cat "$work/perf-c.err" | tail -5
		continue
	fi
	wait "$spid" || { fail "rnic-perf --server over $tr ${drive[*]}: exit status $?"; continue; }
	if python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]; [json.loads(l) for l in open(sys.argv[2])]' \
		"$work/perf-s.log" "$work/perf-c.log"; then
		ok "rnic-perf write_bw over $tr between processes ${drive[*]}: $(json "$work/perf-c.log" gbps) Gbit/s"
	else
		fail "rnic-perf over $tr ${drive[*]}: stdout is not JSON only"
	fi
done
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
