#!/usr/bin/env bash
# Interop of rnic's IB CM (RoCE connection manager) with Linux rdma_cm over
# soft-RoCE (rxe) in a qemu guest (shared/interop/), one guest boot with
# peer.order=rxe,siw so that rdma_cm in the guest picks rxe0:
#   1. rnic-ping --transport roce -c against the guest's `rping -s`;
#   2. the guest's `rping -c` against rnic-ping --transport roce -s;
# each with -C 10 -v (and -V on rnic's side): both ends must exit 0 and
# rnic must see 10 pings. Each run is captured on rnic's port; when tshark is
# installed every IB CM MAD must decode (REQ, REP, RTU, DREQ, DREP seen)
# with nothing malformed. A failed run is tried once more (the emulated
# guest can freeze for seconds when the host is busy), said aloud.
# Skips (exit 77) with a reason when root, /dev/net/tun or the guest harness
# is missing, or when the guest cannot be built or booted.
set -u
build=${RNIC_BUILD_DIR:?}
src=${RNIC_SOURCE_DIR:?}
interop=$(cd "$src/../shared/interop" 2>/dev/null && pwd)
ping=$build/apps/rnic-ping/rnic-ping
count=${RXE_RPING_COUNT:-10}
# addresses of their own, so the other interop tests on the bridge do not collide
guest_ip=192.0.2.5 rnic_ip=192.0.2.15 tap=rnicrp0
port="--vdev net_tap0,iface=$tap,mac=02:00:c0:00:02:0f --ip $rnic_ip/24"
work=$(mktemp -d)
skip() { echo "SKIP: $*"; rm -rf "$work"; exit 77; }
stop_guest() { [ -f "$work/guest.pid" ] && kill "$(cat "$work/guest.pid")" 2>/dev/null; sleep 1; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -8 "$f"; done
	 stop_guest
	 if [ -n "${RXE_RPING_KEEP:-}" ]; then echo "logs and captures kept in $work"; else rm -rf "$work"; fi
	 exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap, qemu)"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
[ -n "$interop" ] && [ -x "$interop/boot.sh" ] || skip "shared/interop is not beside the project"
[ -x "$ping" ] || fail "$ping is not built"

# shellcheck source=../common/guest.sh
. "$(dirname "$0")/../common/guest.sh"   # gsh, attach, guest_bg, guest_result
# start the guest's rping in the background ($2: its arguments), output to /tmp/$1.log
guest_rping() {
	guest_bg "$1" "rping $2"
}
check_capture() {  # $1: pcapng, $2: what ran
	command -v tshark >/dev/null || { echo "  tshark not installed: capture not decoded"; return 0; }
	local cm bad attrs
	cm=$(tshark -r "$1" -Y "infiniband.mad.mgmtclass == 0x07" 2>/dev/null | wc -l)
	bad=$(tshark -r "$1" -Y "_ws.malformed" 2>/dev/null | wc -l)
	attrs=$(tshark -r "$1" -Y "infiniband.mad.mgmtclass == 0x07" -T fields \
		-e infiniband.mad.attributeid 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
	echo "  tshark: $cm CM MADs (count attribute: $attrs), $bad malformed"
	[ "$bad" = 0 ] || fail "$2: tshark finds malformed frames"
	for a in 0x0010 0x0013 0x0014 0x0015 0x0016; do   # REQ REP RTU DREQ DREP
		echo "$attrs" | grep -q "$a" || fail "$2: no CM attribute $a in the capture"
	done
}

t0=$SECONDS
"$interop/net.sh" up >/dev/null 2>&1 || skip "cannot create the rnic-peers namespace"
APPEND="peer.ip=$guest_ip/24 peer.order=rxe,siw peer.end=wait" TAP=peertap5 \
	MAC=52:54:00:5a:00:05 PIDFILE="$work/guest.pid" TIMEOUT=900 \
	"$interop/boot.sh" >"$work/guest.log" 2>&1 &
for _ in $(seq 900); do
	grep -q "PEER: waiting" "$work/guest.log" && break
	grep -q "qemu exit" "$work/guest.log" && break
	sleep 1
done
grep -q "PEER: waiting" "$work/guest.log" ||
	skip "the rxe guest did not come up (see shared/interop/README.md): $(tail -2 "$work/guest.log" | tr '\n' ' ')"
echo "guest up in $((SECONDS - t0)) s"

# One run of role $1 (client: rnic connects to the guest's rping -s; server:
# the guest's rping -c connects to rnic), attempt $2. @return 0, or 1 with $why.
run() {
	local role=$1 tag=$1-$2 pid
	gsh "killall rping" >/dev/null 2>&1   # a failed attempt's leftovers
	if [ "$role" = client ]; then
		guest_rping $tag "-s -a $guest_ip -v -C $count"
		sleep 3   # rping -s binds and listens (no port to poll for an IB CM listener)
		ip netns exec rnic-peers timeout 180 "$ping" --transport roce -c -a $guest_ip \
			-C "$count" -v -V $port --pcap "$work/$tag.pcapng" >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
	else
		ip netns exec rnic-peers timeout 180 "$ping" --transport roce -s -C "$count" -v -V \
			$port --pcap "$work/$tag.pcapng" >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
		sleep 2
		guest_rping $tag "-c -a $rnic_ip -v -C $count"
	fi
	wait $pid || { why="rnic-ping exit $?: $(tail -1 "$work/rnic-$tag.log")"; return 1; }
	guest_result $tag 120 || { why="guest rping: $(grep -v '^rc=' "$work/guest-$tag.log" | tail -1)"; return 1; }
	local n
	if [ "$role" = client ]; then n=$(grep -c "^ping data: rdma-ping-" "$work/rnic-$tag.log")
	else n=$(grep -c "^server ping data: rdma-ping-" "$work/rnic-$tag.log"); fi
	[ "$n" -ge "$count" ] || { why="rnic-ping saw $n of $count pings"; return 1; }
	last=$tag
}

n=0 retries=0
for role in client server; do
	t1=$SECONDS
	if [ $role = client ]; then what="rnic-ping --transport roce -c -> rxe rping -s"
	else what="rxe rping -c -> rnic-ping --transport roce -s"; fi
	if ! run $role 1; then
		echo "RETRY: $what: $why"
		retries=$((retries + 1))
		run $role 2 || fail "$what: $why"
	fi
	echo "$what: $count pings, both exit 0 ($((SECONDS - t1)) s)"
	check_capture "$work/$last.pcapng" "$what"
	n=$((n + 1))
done
echo "total $((SECONDS - t0)) s"
stop_guest
rm -rf "$work"
echo "$n passed ($retries after a retry), 0 failed"
