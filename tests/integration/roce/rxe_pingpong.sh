#!/usr/bin/env bash
# Interop with Linux soft-RoCE (rxe) in a qemu guest (shared/interop/): one
# guest boot, then at each size (64 B, 4 KiB, 64 KiB by default)
#   1. rnic-pingpong (client) against the guest's `ibv_rc_pingpong -d rxe0 -g 1`;
#   2. the guest's `ibv_rc_pingpong -d rxe0 -g 1 ADDR` against rnic-pingpong;
# both sides must exit 0 with every iteration done. Each run is captured on
# rnic's port; when tshark is installed it must decode the RoCE frames as
# RRoCE (infiniband) with nothing malformed. A failed run is tried once more
# (the emulated guest can freeze for seconds when the host is busy), and the
# retry is printed with the first attempt's error.
# Knobs: RXE_PP_SIZES="64 4096 65536", RXE_PP_ITERS=200, RXE_PP_KEEP=1 (keep the
# logs and captures of a failed run), RXE_PP_ROLES="client server" (the
# roles to run, in order), RXE_PP_DROPIN=1 (rnic's side is the
# unmodified ibv_rc_pingpong under rnic-run, through librnic-verbs, instead
# of rnic-pingpong), RXE_PP_IPV6=1 (RoCEv2 over IPv6 only: rnic's port has
# 2001:db8::14/64 and no IPv4 address, so its GID 1 is that address; the
# guest's rc_pingpong runs with -g on the GID index rxe gives 2001:db8::4,
# read from sysfs; the guest keeps its IPv4 address for the control shell
# only; every RoCE frame of the capture must be IPv6).
# Skips (exit 77) with a reason when root, /dev/net/tun or the guest harness
# is missing, when the guest cannot be built or booted, or while rnic has
# no RoCE QPs (EOPNOTSUPP).
set -u
build=${RNIC_BUILD_DIR:?}
src=${RNIC_SOURCE_DIR:?}
interop=$(cd "$src/../shared/interop" 2>/dev/null && pwd)
pp=$build/apps/rnic-pingpong/rnic-pingpong
dropin=${RXE_PP_DROPIN:-}
ipv6=${RXE_PP_IPV6:-}
sizes=${RXE_PP_SIZES:-64 4096 65536}
iters=${RXE_PP_ITERS:-200}
# addresses of their own, so a siw test on the same bridge does not collide
guest_ip=192.0.2.4 rnic_ip=192.0.2.14 tap=rnicpp0
port="--vdev net_tap0,iface=$tap,mac=02:00:c0:00:02:0e --ip $rnic_ip/24"
if [ -n "$dropin" ]; then
	command -v ibv_rc_pingpong >/dev/null || { echo "SKIP: ibverbs-utils is not installed"; exit 77; }
	guest_ip=192.0.2.5 rnic_ip=192.0.2.15 tap=rnicpp1
	port="--vdev net_tap0,iface=$tap,mac=02:00:c0:00:02:0f --ip $rnic_ip/24"
fi
# the addresses the pingpong runs use (the TCP exchange and the GIDs)
guest_pp_addr=$guest_ip rnic_pp_addr=$rnic_ip ggid=1 append6=
if [ -n "$ipv6" ]; then
	[ -n "$dropin" ] && { echo "SKIP: the IPv6 variant drives rnic-pingpong only"; exit 77; }
	guest_ip=192.0.2.6 tap=rnicpp2
	guest_pp_addr=2001:db8::4 rnic_pp_addr=2001:db8::14
	port="--vdev net_tap0,iface=$tap,mac=02:00:c0:00:02:1e --ip 2001:db8::14/64"
	append6=" peer.ip6=2001:db8::4/64"
fi
# rnic's side: rnic_pp SIZE PCAP [SERVER] runs rnic-pingpong, or with the
# drop-in the unmodified ibv_rc_pingpong (RoCE face first) under rnic-run
rnic_pp() {
	if [ -n "$dropin" ]; then
		ip netns exec rnic-peers timeout 120 "$build/apps/rnic-run/rnic-run" $port \
			--pcap "$2" --transport roce -- ibv_rc_pingpong -g 1 -s "$1" -n "$iters" ${3:-}
	else
		ip netns exec rnic-peers timeout 120 "$pp" -g 1 -s "$1" -n "$iters" $port \
			--pcap "$2" ${3:-}
	fi
}
work=$(mktemp -d)
skip() { echo "SKIP: $*"; rm -rf "$work"; exit 77; }
stop_guest() { [ -f "$work/guest.pid" ] && kill "$(cat "$work/guest.pid")" 2>/dev/null; sleep 1; }
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -8 "$f"; done
	 stop_guest
	 if [ -n "${RXE_PP_KEEP:-}" ]; then echo "logs and captures kept in $work"; else rm -rf "$work"; fi
	 exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap, qemu)"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing"
[ -n "$interop" ] && [ -x "$interop/boot.sh" ] || skip "shared/interop is not beside the project"
[ -x "$pp" ] || fail "$pp is not built"

# rnic-pingpong creates its QP before it waits for a client: a server on
# net_null shows at once whether RoCE QPs exist in this build
timeout 20 "$pp" -g 1 -p 18599 --vdev net_null0 --ip 10.99.0.1/24 >"$work/probe.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
	grep -q "local address" "$work/probe.log" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill $pid 2>/dev/null; wait $pid 2>/dev/null
grep -q "Operation not supported" "$work/probe.log" &&
	skip "rnic has no RoCE QPs yet (rnic_create_qp_transport: EOPNOTSUPP)"

# shellcheck source=../common/guest.sh
. "$(dirname "$0")/../common/guest.sh"   # gsh, attach, guest_bg, guest_result
# start the guest's ibv_rc_pingpong in the background, output to /tmp/$1.log
# guest_listening PORT: wait (at most 10 s) until a TCP socket in the
# guest listens on PORT
guest_listening() {
	for _ in $(seq 50); do
		gsh "netstat -ltn" | grep -q ":$1 " && return
		sleep 0.2
	done
}

guest_pp() {
	guest_bg "$1" "ibv_rc_pingpong -d rxe0 -g $ggid -s $2 -n $iters $3"
}
counters() { gsh 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep -H . *' | tr '\n' ' '; }
usec() { sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$1"; }
check_capture() {  # $1: pcapng, $2: what ran
	command -v tshark >/dev/null || { echo "  tshark not installed: capture not decoded"; return 0; }
	local roce bad
	roce=$(tshark -r "$1" -Y infiniband 2>/dev/null | wc -l)
	bad=$(tshark -r "$1" -Y "_ws.malformed" 2>/dev/null | wc -l)
	echo "  tshark: $roce RRoCE frames, $bad malformed"
	[ "$bad" = 0 ] || fail "$2: tshark finds malformed frames"
	if [ -n "$ipv6" ]; then
		local v6 v4
		v6=$(tshark -r "$1" -Y "infiniband && ipv6" 2>/dev/null | wc -l)
		v4=$(tshark -r "$1" -Y "ip" 2>/dev/null | wc -l)
		echo "  tshark: $v6 RRoCE frames over IPv6, $v4 IPv4 frames"
		[ "$v6" = "$roce" ] && [ "$v4" = 0 ] || fail "$2: RoCE frames not all over IPv6"
	fi
	# the ICRC of every RoCE frame, by a computation of its own (tshark
	# 4.0 does not check it)
	if command -v editcap >/dev/null && command -v python3 >/dev/null; then
		local out
		editcap -F pcap "$1" "$1.pcap" >/dev/null 2>&1 || fail "$2: editcap failed"
		out=$(python3 "$src/tests/integration/common/icrc_check.py" "$1.pcap") ||
			fail "$2: ICRC check: $out"
		echo "  $out"
	fi
	[ "$roce" -ge $((2 * iters)) ] || fail "$2: tshark decoded only $roce RRoCE frames"
}

t0=$SECONDS
"$interop/net.sh" up >/dev/null 2>&1 || skip "cannot create the rnic-peers namespace"
APPEND="peer.ip=$guest_ip/24$append6 peer.order=rxe,siw peer.end=wait" TAP=peertap${guest_ip##*.} \
	MAC=52:54:00:5a:00:0${guest_ip##*.} PIDFILE="$work/guest.pid" TIMEOUT=900 \
	"$interop/boot.sh" >"$work/guest.log" 2>&1 &
for _ in $(seq 600); do
	grep -q "PEER: waiting" "$work/guest.log" && break
	grep -q "qemu exit" "$work/guest.log" && break
	sleep 1
done
grep -q "PEER: waiting" "$work/guest.log" ||
	skip "the rxe guest did not come up (see shared/interop/README.md): $(tail -2 "$work/guest.log" | tr '\n' ' ')"
echo "guest up in $((SECONDS - t0)) s; rxe counters: $(counters)"
if [ -n "$ipv6" ]; then
	# the index rxe gives the guest's global IPv6 address (sysfs prints GIDs
	# as eight groups of four hex digits); DAD may still be running
	want=2001:0db8:0000:0000:0000:0000:0000:0004 ggid=
	for _ in $(seq 30); do
		ggid=$(gsh "cd /sys/class/infiniband/rxe0/ports/1/gids && grep -l $want *" |
		       head -1 | tr -dc 0-9)
		[ -n "$ggid" ] && break
		sleep 1
	done
	[ -n "$ggid" ] || fail "rxe0 has no GID $want: $(gsh 'cat /sys/class/infiniband/rxe0/ports/1/gids/[0-9]' | tr '\n' ' ')"
	echo "rxe GID table: $(gsh 'cd /sys/class/infiniband/rxe0/ports/1/gids && for g in 0 1 2 3; do echo $g=$(cat $g) $(cat ../gid_attrs/types/$g 2>/dev/null); done' | tr '\n' ' ')"
	echo "rxe's 2001:db8::4 is GID $ggid; rnic's 2001:db8::14 is GID 1 (IPv6-only port)"
fi

# One run of role $1 (client: rnic connects to the guest; server: the guest
# connects to rnic) at size $2, attempt $3. @return 0, or 1 with $why set.
run() {
	local role=$1 size=$2 tag=$1-$2-$3 pid
	gsh "killall ibv_rc_pingpong" >/dev/null 2>&1   # a failed attempt's leftovers
	if [ "$role" = client ] && [ -n "$ipv6" ]; then
		# rc_pingpong's server binds the first passive address glibc
		# gives it, 0.0.0.0: it listens on 18516 and a relay in the
		# guest (busybox nc, dual-stack) takes rnic's exchange on
		# [::]:18515 to it over loopback; rnic's side and every RoCE
		# frame stay IPv6
		# (no killall nc: the guest's control shell is a busybox nc too;
		# a relay left by a failed attempt serves the next one the same)
		guest_pp $tag "$size" "-p 18516"
		guest_listening 18516
		guest_bg relay-$tag "busybox nc -l -p 18515 -e busybox nc 127.0.0.1 18516"
		guest_listening 18515
		rnic_pp "$size" "$work/$tag.pcapng" $guest_pp_addr >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
	elif [ "$role" = client ]; then
		guest_pp $tag "$size" ""
		guest_listening 18515
		rnic_pp "$size" "$work/$tag.pcapng" $guest_pp_addr >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
	else
		rnic_pp "$size" "$work/$tag.pcapng" >"$work/rnic-$tag.log" 2>&1 &
		pid=$!
		attach
		if [ -n "$dropin" ]; then
			# ibv_rc_pingpong exchanges addresses over a kernel socket:
			# the guest reaches it at the namespace's bridge address
			for _ in $(seq 100); do
				ip netns exec rnic-peers ss -ltn | grep -q ":18515 " && break
				sleep 0.1
			done
			guest_pp $tag "$size" 192.0.2.1
		else
			for _ in $(seq 100); do
				grep -q "local address" "$work/rnic-$tag.log" && break
				sleep 0.1
			done
			guest_pp $tag "$size" $rnic_pp_addr
		fi
	fi
	wait $pid || { why="rnic exit $?: $(tail -1 "$work/rnic-$tag.log")"; return 1; }
	guest_result $tag 60 || { why="guest: $(grep -v '^rc=' "$work/guest-$tag.log" | tail -1)"; return 1; }
	grep -q "^$iters iters in" "$work/rnic-$tag.log" || { why="rnic printed no result"; return 1; }
	last=$tag
}

n=0 retries=0
for size in $sizes; do
	for role in ${RXE_PP_ROLES:-client server}; do
		t1=$SECONDS
		me=rnic-pingpong
		[ -n "$dropin" ] && me="rnic-run ibv_rc_pingpong"
		if [ $role = client ]; then what="$me -> rxe ibv_rc_pingpong"
		else what="rxe ibv_rc_pingpong -> $me"; fi
		# the guest is an emulated CPU on a shared host and can freeze for
		# seconds (soft lockups): a failed run gets one more attempt, said aloud
		if ! run $role "$size" 1; then
			[ -n "$ipv6" ] && [ $role = client ] &&
				echo "  guest: $(gsh 'netstat -ltn; cat /tmp/relay-*.log' | tr '\n' ' ')"
			echo "RETRY: $what, $size B: $why"
			retries=$((retries + 1))
			run $role "$size" 2 || fail "$what, $size B: $why"
		fi
		echo "$what, $size B x $iters: rnic $(usec "$work/rnic-$last.log") usec/iter," \
		     "rxe $(usec "$work/guest-$last.log") usec/iter"
		check_capture "$work/$last.pcapng" "$what, $size B"
		echo "  ($((SECONDS - t1)) s)"
		n=$((n + 1))
	done
done
echo "rxe counters after: $(counters)"
echo "total $((SECONDS - t0)) s"
stop_guest
rm -rf "$work"
echo "$n passed ($retries after a retry), 0 failed"
