#!/usr/bin/env bash
# Interop through the drop-in with Linux siw and rxe in the qemu guest
# (shared/interop): perftest's ib_write_bw -R and ib_send_lat -R under
# rnic-run against the same tool on the guest's siw0 (iWARP) and rxe0
# (RoCEv2), in both roles, one guest boot per device (rdma_cm in the
# guest takes the first device that owns its address: peer.order).
# Each run is captured on rnic's port; with tshark, nothing may be
# malformed and every FPDU (siw) must carry a good CRC32c. A failed run
# gets one more attempt (the emulated guest can freeze for seconds on a
# busy host), said aloud.
# With rnic as the client, perftest connects its data QP right after its
# handshake with the server, while the server creates its data listener:
# the emulated guest is often later than rnic, refuses the connection
# (TCP RST from siw's host, a CM REJ from rxe's), and Debian's perftest
# 4.5-0.17 then crashes on its own retry path (it reuses the ids it just
# destroyed; fixed upstream in perftest 3d9d8d0, Dec 2025). So rnic's
# perftest runs with connect_delay.so (CONNECT_DELAY_MS, 500 ms before
# each rdma_connect), standing in for a server as fast as real hardware.
# An attempt that still lost that race (the REJECTED event in rnic's
# perftest output and the refusal from the guest in the capture) is
# retried up to LATE_TRIES times; a pair that lost it every time is
# reported as not run, never as passed.
# Skips (exit 77) with a reason when root, /dev/net/tun, perftest or the
# guest harness is missing, or when the guest cannot be booted.
set -u
build=${RNIC_BUILD_DIR:?}
src=${RNIC_SOURCE_DIR:?}
interop=$(cd "$src/../shared/interop" 2>/dev/null && pwd)
run=$build/apps/rnic-run/rnic-run
delay_so=${CONNECT_DELAY_SO:-$build/tests/integration/dropin/libconnect_delay.so}
guest_ip=192.0.2.6 rnic_ip=192.0.2.16 tap=rnicpt0
port="--vdev net_tap0,iface=$tap,mac=02:00:c0:00:02:10 --ip $rnic_ip/24"
iters=${PT_ITERS:-200}
work=$(mktemp -d)
skip() { echo "SKIP: $*"; rm -rf "$work"; exit 77; }
stop_guest() { [ -f "$work/guest.pid" ] && kill "$(cat "$work/guest.pid")" 2>/dev/null; sleep 1; rm -f "$work/guest.pid"; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -6 "$f"; done
	 stop_guest; if [ -n "${PT_KEEP:-}" ]; then echo "kept: $work"; else rm -rf "$work"; fi; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap, qemu)"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
command -v ib_write_bw >/dev/null || skip "perftest is not installed"
[ -f "$delay_so" ] || skip "no $delay_so: build the tests first"
[ -n "$interop" ] && [ -x "$interop/boot.sh" ] || skip "shared/interop is not beside the project"
. "$(dirname "$0")/../common/guest.sh"   # gsh, attach, guest_bg, guest_result
"$interop/net.sh" up >/dev/null 2>&1 || skip "cannot create the rnic-peers namespace"

boot() {  # boot ORDER: a guest whose rdma_cm takes ORDER's first device
	APPEND="peer.ip=$guest_ip/24 peer.order=$1 peer.end=wait" TAP=peertap6 \
		MAC=52:54:00:5a:00:06 PIDFILE="$work/guest.pid" TIMEOUT=900 \
		"$interop/boot.sh" >"$work/guest.log" 2>&1 &
	for _ in $(seq 600); do
		grep -q "PEER: waiting" "$work/guest.log" && return 0
		grep -q "qemu exit" "$work/guest.log" && break
		sleep 1
	done
	return 1
}

# result line of a perftest report: bw "65536 200 ..." or lat "2 200 ..."
has_result() { grep -Eq "^\s*[0-9]+\s+$iters\s+[0-9.]+\s+[0-9.]+" "$1"; }

# one TOOL run, rnic in ROLE (client|server) over TRANSPORT, attempt N
# @return 0, or 1 with $why set
one() {
	local tool=$1 role=$2 tr=$3 tag=$1-$2-$3-$4 pid
	late=0
	gsh "killall $tool" >/dev/null 2>&1
	if [ "$role" = client ]; then
		guest_bg "$tag" "$tool -R -n $iters"
		sleep 2
		# the delay preload goes before librnic-verbs, which rnic-run
		# puts first in LD_PRELOAD
		ip netns exec rnic-peers timeout 90 "$run" $port --pcap "$work/$tag.pcapng" \
			--transport "$tr" -- sh -c "LD_PRELOAD=$delay_so\${LD_PRELOAD:+:\$LD_PRELOAD} exec \"\$@\"" \
			- $tool -R -n "$iters" $guest_ip >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
	else
		ip netns exec rnic-peers timeout 90 "$run" $port --pcap "$work/$tag.pcapng" \
			--transport "$tr" -- $tool -R -n "$iters" >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
		sleep 3
		guest_bg "$tag" "$tool -R -n $iters $rnic_ip"
	fi
	local rc=0
	wait $pid || rc=$?
	if [ $rc != 0 ]; then
		why="rnic-run $tool exit $rc: $(tail -1 "$work/rnic-$tag.log")"
		[ "$role" = client ] && guest_refused "$tag" "$tr" && late=1
		return 1
	fi
	guest_result "$tag" 60 || { why="guest $tool: $(grep -v '^rc=' "$work/guest-$tag.log" | tail -1)"; return 1; }
	has_result "$work/rnic-$tag.log" || { why="rnic's $tool printed no result"; return 1; }
	has_result "$work/guest-$tag.log" || { why="the guest's $tool printed no result"; return 1; }
	if command -v tshark >/dev/null; then
		# Wireshark's RPC-over-RDMA heuristic takes perftest's small
		# Sends for its own and calls them malformed (siw's as much as
		# rnic's): it is left out
		local ts=(tshark --disable-protocol rpcordma -r "$work/$tag.pcapng") bad fpdus good
		bad=$("${ts[@]}" -Y "_ws.malformed" 2>/dev/null | wc -l)
		[ "$bad" = 0 ] || { why="tshark: $bad malformed frames"; return 1; }
		if [ "$tr" = iwarp ]; then
			fpdus=$("${ts[@]}" 2>/dev/null | grep -c "DDP/RDMA")
			good=$("${ts[@]}" -V 2>/dev/null | grep -c "Good CRC32")
			[ "$fpdus" -gt 0 ] && [ "$good" = "$fpdus" ] ||
				{ why="tshark: $good good CRC32 of $fpdus FPDUs"; return 1; }
			tsh="$fpdus FPDUs, all Good CRC32"
		else
			tsh="$("${ts[@]}" -Y infiniband 2>/dev/null | wc -l) RRoCE frames"
		fi
	fi
	last=$tag
}

# did the guest refuse rnic's data connection (run TAG over TRANSPORT)?
guest_refused() {
	grep -q "RDMA_CM_EVENT_REJECTED" "$work/rnic-$1.log" || return 1
	command -v tshark >/dev/null || return 1
	local f="ip.src == $guest_ip && tcp.flags.reset == 1"
	[ "$2" = roce ] && f="ip.src == $guest_ip && infiniband.cm.rej"
	[ "$(tshark -r "$work/$1.pcapng" -Y "$f" 2>/dev/null | wc -l)" -gt 0 ]
}

n=0 retries=0 not_run=0 t0=$SECONDS
for dev in siw rxe; do
	if [ $dev = siw ]; then order=siw,rxe tr=iwarp; else order=rxe,siw tr=roce; fi
	boot $order || skip "the guest did not come up (see shared/interop/README.md): $(tail -2 "$work/guest.log" | tr '\n' ' ')"
	for tool in ib_write_bw ib_send_lat; do
		for role in ${PT_ROLES:-server client}; do
			if [ $role = client ]; then what="rnic-run $tool -R -> $dev $tool -R"
			else what="$dev $tool -R -> rnic-run $tool -R"; fi
			att=1 lates=0 plain=0 ok=false
			while :; do
				if one $tool $role $tr $att; then ok=true; break; fi
				if [ "$late" = 1 ] && [ $lates -lt "${LATE_TRIES:-6}" ]; then
					lates=$((lates + 1))
					echo "RETRY: $what: the guest listened after rnic connected (REJECTED; perftest 4.5-0.17 then crashes)"
				elif [ "$late" = 0 ] && [ $plain = 0 ]; then
					plain=1
					echo "RETRY: $what: $why"
				elif [ "$late" = 1 ]; then
					break
				else
					fail "$what: $why"
				fi
				retries=$((retries + 1)) att=$((att + 1))
			done
			if ! $ok; then
				echo "NOT RUN: $what: the guest listened late in all $att attempts"
				not_run=$((not_run + 1))
				continue
			fi
			echo "$what: rnic $(grep -E "^\s*[0-9]+\s+$iters\s" "$work/rnic-$last.log" | tr -s ' \t' ' ')"
			echo "  tshark: ${tsh:-not installed}, nothing malformed"
			n=$((n + 1))
		done
	done
	stop_guest
done
rm -rf "$work"
echo "total $((SECONDS - t0)) s"
echo "$n passed ($retries retries), $not_run not run (the guest listened late every time), 0 failed"
