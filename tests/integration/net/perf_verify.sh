#!/usr/bin/env bash
# rnic-perf write_bw --verify between two processes (issue 18, "How it
# will be checked"): --server on one end, --client on the other, both
# transports, --verify --json: both exit 0, the client reports
# "verified": true with every completion seen once and in order and the
# last Writes found in their slots at the server (read back with an RDMA
# Read). Over net_memif, and over net_af_xdp on a veth pair (each end in
# its own namespace; skipped without root). Over memif also with 2 workers
# and 8 QPs a side: no frame redirected between workers at either end;
# and with the memif client in zero-copy mode (where hugepages are free).
# Also: --verify at one end only is refused with the reason.
set -u
perf=${RNIC_BUILD_DIR:?}/apps/rnic-perf/rnic-perf
work=$(mktemp -d)
a=rnic-pva$$ b=rnic-pvb$$ ia=rnicpva$$ ib=rnicpvb$$
pass=0 fails=0
cleanup() {
	local ns
	for ns in "$a" "$b"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$work"/*.log "$work"/*.err; do [ -e "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done
	fails=$((fails + 1))
}

# run NAME TRANSPORT SRV_PREFIX... -- CLI_PREFIX...: the server's and the
# client's command prefixes (namespace, port) up to and after "--"; $more:
# options for both ends; $zero_redirects=1: no frame may be redirected
# between workers at either end
more=() zero_redirects=0
# wait_server PID: until the server listens (a memif client fails to start
# without its server's socket), at most 20 s
wait_server() {
	for _ in $(seq 200); do
		grep -qs "waiting for a client" "$work/s.err" && return
		kill -0 "$1" 2>/dev/null || return
		sleep 0.1
	done
}
run() {
	local name=$1 tr=$2 srv=() cli=() spid
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	# the last run's server log must be gone before wait_server reads it:
	# the background job truncates it only once it starts
	rm -f "$work/s.err"
	"${srv[@]}" write_bw --server --verify --json --transport "$tr" -n 3000 "${more[@]}" \
		>"$work/s.log" 2>"$work/s.err" &
	spid=$!
	wait_server "$spid"
	local crc=0
	"${cli[@]}" write_bw --client 192.0.2.1 --verify --json --transport "$tr" -n 3000 "${more[@]}" \
		>"$work/c.log" 2>"$work/c.err" || crc=$?
	if [ "$crc" != 0 ]; then
		fail "$name: the client's exit status $crc"
		kill "$spid" 2>/dev/null   # it would wait for a client until its timeout
		wait "$spid"
		return
	fi
	wait "$spid" || { fail "$name: the server's exit status $?"; return; }
	local got
	got=$(python3 -c '
import json, sys
c = json.loads(open(sys.argv[1]).read())
s = json.loads(open(sys.argv[2]).read())   # the server: JSON only too
ok = (c["verified"] and c["completions_seen"] == c["completions_expected"] == 3000 * c["qps"] and
      c["duplicates"] == 0 and c["missing"] == 0 and c["out_of_order"] == 0 and
      c["bad_payload"] == 0 and c["writes_checked"] > 0)
if sys.argv[3] == "1" and (c["redirected_in_run"] != 0 or s["redirected_in_run"] != 0):
    ok = False
print("ok" if ok else "bad", c["completions_seen"], c["writes_checked"], c["gbps"],
      "%d/%d" % (c["redirected_in_run"], c["redirected"]),
      "%d/%d" % (s["redirected_in_run"], s["redirected"]))
' "$work/c.log" "$work/s.log" "$zero_redirects") || { fail "$name: stdout is not one JSON object"; return; }
	set -- $got
	[ "$1" = ok ] || { fail "$name: not verified (or redirects): $(cat "$work/c.log" "$work/s.log")"; return; }
	echo "ok: $name: verified, $2 completions, $3 Writes found in their slots, $4 Gbit/s," \
	     "frames redirected between workers during the run/in all: client $5, server $6"
	pass=$((pass + 1))
}

sock=$work/m.sock
msrv=("$perf" --vdev "net_memif0,role=server,socket=$sock,socket-abstract=no" --ip 192.0.2.1/24)
mcli=("$perf" --vdev "net_memif0,role=client,socket=$sock,socket-abstract=no" --ip 192.0.2.2/24)
for tr in iwarp roce; do
	rm -f "$sock"
	run "memif, $tr" "$tr" timeout 120 "${msrv[@]}" -- timeout 120 "${mcli[@]}"
	grep -q "cannot create vdev" "$work"/*.err 2>/dev/null && { echo "SKIP: no net_memif"; exit 77; }
done

# 2 workers, 8 QPs on 2 CQs a side (QP i on CQ i % 2, each CQ on its own
# worker), 2 memif queue pairs: every QP's frames leave from its worker's
# queue and arrive on the queue of the worker that owns the QP at the other
# end (RoCE: by QPN; iWARP: its TCP connection, by the symmetric hash), so
# neither end redirects a frame during the run (before it, a connection's
# first frames may have waited for ARP and left from the worker that got
# the ARP reply)
more=(--workers 2 --qps 8 --cqs 2) zero_redirects=1
for tr in iwarp roce; do
	rm -f "$sock"
	run "memif, $tr, 2 workers, 8 QPs" "$tr" timeout 120 "${msrv[@]}" -- timeout 120 "${mcli[@]}"
done
more=() zero_redirects=0

# memif zero copy (client role): the PMD hands the server the client's own
# mbufs, so the client's memory must be hugepage files, taken at start
# (rnic adds --single-file-segments and -m itself: the PMD closes the EAL's
# segment descriptors at connect, and the heap could not grow after it;
# that made this client fail to start in 2 of 3 runs before)
if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -gt 160 ] 2>/dev/null; then
	zcli=("$perf" --vdev "net_memif0,role=client,socket=$sock,socket-abstract=no,zero-copy=yes"
	      --ip 192.0.2.2/24)
	for tr in iwarp roce; do
		rm -f "$sock"
		run "memif zero-copy client, $tr" "$tr" timeout 120 "${msrv[@]}" -- timeout 120 "${zcli[@]}"
	done
else
	echo "not run: memif zero copy (fewer than 160 free hugepages for the client's shared memory)"
fi

# --verify at one end only: the server refuses the client, saying why
rm -f "$sock"
timeout 60 "${msrv[@]}" write_bw --server --json -n 100 >"$work/s.log" 2>"$work/s.err" &
spid=$!
wait_server "$spid"
if timeout 60 "${mcli[@]}" write_bw --client 192.0.2.1 --verify --json -n 100 \
	>"$work/c.log" 2>"$work/c.err"; then
	fail "a client with --verify against a server without it ran"
elif ! grep -q -- "--verify is given at one end only" "$work/c.err"; then
	fail "the refusal does not say why: $(grep refused "$work/c.err")"
else
	echo "ok: --verify at one end only: $(grep -o 'the server refused: .*' "$work/c.err")"
	pass=$((pass + 1))
fi
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

# af_xdp on a veth pair: rnic at both ends, each in its own namespace
if [ "$(id -u)" != 0 ]; then
	echo "note: af_xdp part skipped (needs root for namespaces and XDP)"
elif ! ip netns add "$a" 2>/dev/null || ! ip netns add "$b" 2>/dev/null ||
	! ip link add "$ia" netns "$a" type veth peer name "$ib" netns "$b"; then
	echo "note: af_xdp part skipped (cannot create namespaces or a veth pair)"
else
	ip -n "$a" link set "$ia" up
	ip -n "$b" link set "$ib" up
	for tr in iwarp roce; do
		run "af_xdp on veth, $tr" "$tr" ip netns exec "$a" timeout 120 "$perf" \
			--vdev "net_af_xdp0,iface=$ia" --ip 192.0.2.1/24 -- \
			ip netns exec "$b" timeout 120 "$perf" --vdev "net_af_xdp0,iface=$ib" \
			--ip 192.0.2.2/24
	done
fi
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
