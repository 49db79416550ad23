#!/usr/bin/env bash
# Multi-queue ports with a worker per queue (issue 18, Deliver 2): 64 TCP
# connections a side over 2 queues and 2 workers. The first argument names
# the link:
#  memif      two rnic processes over net_memif, 2 queue pairs; rnic-tcp
#             sink in one, source in the other, then the roles of the memif
#             server and client swapped. Each end sends a flow from the
#             worker that owns it on that worker's queue, memif hands TX
#             queue q to the peer's RX queue q, and the key is symmetric:
#             after the first connection is up (ARP resolved) no frame may
#             be redirected between workers.
#  af_packet  rnic on a 2-queue veth pair (net_af_packet qpairs=2, the
#             kernel's PACKET_FANOUT spreads flows by its own seeded hash,
#             which rnic cannot predict): software steering redirects, the
#             count is read and printed, the data must still be right.
#  af_xdp     the same with net_af_xdp on a one-queue veth (DPDK 22.11's
#             PMD takes one queue on veth): two workers share it (worker 0
#             receives everything and redirects worker 1's flows).
# Against the kernel: a Linux client opens 64 connections to rnic-tcp sink,
# rnic-tcp source opens 64 to a Linux server. Every connection is checked
# (common/mq_check.py): it lives on the worker the Toeplitz hash with rnic's
# key names (computed in Python, not by rnic), both workers own some, and
# its byte count and SHA-256 equal the other end's.
# Exit 77 with the reason when a PMD, root or namespaces are missing.
set -u
link=${1:?usage: mq_flows.sh memif|af_packet|af_xdp}
bin=${RNIC_BUILD_DIR:?}/apps/rnic-tcp/rnic-tcp
common=$(dirname "$0")/../common
. "$common/memif.sh"
bytes=${RNIC_MQ_BYTES:-1M}   # per connection
conns=64
work=$(mktemp -d)
pass=0
r=rnic-mr$$ k=rnic-mk$$ rif=rnicmr$$ kif=rnicmk$$
cleanup() {
	local ns
	for ns in "$r" "$k"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	ip netns del "$r" 2>/dev/null
	ip netns del "$k" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "${RNIC_MQ_KEEP:-}" ] && trap - EXIT   # keep logs, namespaces (debugging)
skip() { echo "SKIP: $*"; exit 77; }
fail() {
	echo "FAIL: $*"
	for f in "$work"/*.log "$work"/*.err; do [ -e "$f" ] && { echo "--- $f"; tail -5 "$f" | cut -c1-300; }; done
	exit 1
}
check() {  # check NAME RNIC_JSON LOCAL REMOTE PEER_FLOWS zero|count
	local out
	out=$(python3 "$common/mq_check.py" "$2" "$3" "$4" "$5" "$6") || fail "$1: $out"
	echo "ok: $1: $out"
	pass=$((pass + 1))
}
# peer_view JSON OUT: rnic-tcp's flows as the other end sees them
peer_view() {
	python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); json.dump([[f[1], f[2], f[3], f[4]] for f in r["flows"]], open(sys.argv[2], "w"))' "$1" "$2" ||
		fail "no JSON from rnic-tcp in $1"
}

memif() {
	local sock=$work/m.sock sink_role=$1 src_role spid
	[ "$sink_role" = server ] && src_role=client || src_role=server
	local sink=(timeout 120 "$bin" sink --listen 5001 --bytes "$bytes" --conns $conns --json
		    --workers 2 --vdev "net_memif0,role=$sink_role,socket=$sock,socket-abstract=no"
		    --ip 192.0.2.1/24)
	local src=(timeout 120 "$bin" source --connect 192.0.2.1:5001 --bytes "$bytes" --conns $conns
		   --json --workers 2 --vdev "net_memif0,role=$src_role,socket=$sock,socket-abstract=no"
		   --ip 192.0.2.2/24)
	rm -f "$sock"
	# the memif server starts first
	if [ "$sink_role" = server ]; then
		"${sink[@]}" >"$work/sink.log" 2>"$work/sink.err" &
		spid=$!
		wait_memif_listen "$sock" "$spid"
		if ! "${src[@]}" >"$work/src.log" 2>"$work/src.err"; then
			# the sink's counters too: SIGINT makes it print them
			kill -INT "$spid" 2>/dev/null
			wait "$spid"
			fail "rnic-tcp source exit status not 0"
		fi
		wait "$spid" || fail "rnic-tcp sink exit $?"
	else
		"${src[@]}" >"$work/src.log" 2>"$work/src.err" &
		spid=$!
		wait_memif_listen "$sock" "$spid"
		"${sink[@]}" >"$work/sink.log" 2>"$work/sink.err" || fail "rnic-tcp sink exit $?"
		wait "$spid" || fail "rnic-tcp source exit $?"
	fi
	grep -q "cannot create vdev" "$work"/*.err && skip "DPDK cannot create net_memif here"
	peer_view "$work/src.log" "$work/src.json"
	peer_view "$work/sink.log" "$work/sink.json"
	check "memif (sink is the $sink_role): sink" "$work/sink.log" 192.0.2.1 192.0.2.2 "$work/src.json" zero
	check "memif (sink is the $sink_role): source" "$work/src.log" 192.0.2.2 192.0.2.1 "$work/sink.json" zero
}

# kernel PMD: a veth pair with 2 queues each way, rnic's end in $r
kernel() {
	local pmd=$1 vdev pid
	[ "$(id -u)" = 0 ] || skip "needs root for veth pairs, namespaces and $pmd"
	command -v ethtool >/dev/null || skip "ethtool is missing (scripts/deps.sh installs it)"
	ip netns add "$r" 2>/dev/null && ip netns add "$k" 2>/dev/null || skip "cannot create a network namespace"
	# af_xdp binds queue 0 only (DPDK 22.11 takes no more on veth, which
	# has no combined channels): frames the kernel sends on its TX queue
	# 1 would reach veth's RX queue 1 and rnic's XDP program never: one
	# queue there
	local q=2
	[ "$pmd" = af_xdp ] && q=1
	ip link add "$rif" netns "$r" numtxqueues $q numrxqueues $q type veth \
		peer name "$kif" netns "$k" numtxqueues $q numrxqueues $q || skip "cannot create a veth pair"
	ip netns exec "$k" ethtool -K "$kif" tx off >/dev/null || fail "ethtool -K $kif tx off"
	ip -n "$k" addr add 192.0.2.1/24 dev "$kif"
	ip -n "$r" link set "$rif" up
	ip -n "$k" link set "$kif" up
	case $pmd in
	af_packet) vdev="net_af_packet0,iface=$rif,qpairs=2" ;;
	af_xdp) vdev="net_af_xdp0,iface=$rif,start_queue=0,queue_count=1" ;;
	esac
	local rnic=(ip netns exec "$r" timeout 180 "$bin")
	local opts=(--json --conns $conns --bytes "$bytes" --workers 2 --vdev "$vdev" --ip 192.0.2.10/24)

	# the kernel -> rnic
	"${rnic[@]}" sink --listen 5001 "${opts[@]}" >"$work/sink.log" 2>"$work/sink.err" &
	pid=$!
	for _ in $(seq 50); do
		grep -q "cannot create vdev" "$work/sink.err" && skip "DPDK cannot create net_$pmd here"
		kill -0 "$pid" 2>/dev/null || fail "rnic-tcp sink exited early"
		ip netns exec "$k" ping -c 1 -W 0.2 192.0.2.10 >/dev/null 2>&1 && break
	done
	n=$(python3 -c "import sys; a=sys.argv[1]; print(int(a[:-1]) << {'K': 10, 'M': 20, 'G': 30}[a[-1]] if a[-1] in 'KMG' else int(a))" "$bytes")
	ip netns exec "$k" timeout 120 python3 "$common/mq_kernel.py" client 192.0.2.10 5001 $conns "$n" \
		>"$work/linux.json" 2>"$work/linux.err" || fail "the Linux client failed"
	wait "$pid" || fail "rnic-tcp sink exit $?"
	check "$pmd: the kernel -> rnic sink" "$work/sink.log" 192.0.2.10 192.0.2.1 "$work/linux.json" count

	# rnic -> the kernel
	rm -f "$work/ready"
	ip netns exec "$k" timeout 120 python3 "$common/mq_kernel.py" server "$work/ready" 5002 $conns \
		>"$work/linux.json" 2>"$work/linux.err" &
	local lpid=$!
	for _ in $(seq 100); do [ -e "$work/ready" ] && break; sleep 0.1; done
	"${rnic[@]}" source --connect 192.0.2.1:5002 "${opts[@]}" >"$work/src.log" 2>"$work/src.err" ||
		fail "rnic-tcp source exit $?"
	wait "$lpid" || fail "the Linux server failed"
	check "$pmd: rnic source -> the kernel" "$work/src.log" 192.0.2.10 192.0.2.1 "$work/linux.json" count
}

case $link in
memif) memif server; memif client ;;
af_packet | af_xdp) kernel "$link" ;;
*) fail "unknown link $link" ;;
esac
echo "$pass passed, 0 failed"
