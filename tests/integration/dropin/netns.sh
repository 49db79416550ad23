# Sourced by the drop-in tests: a network namespace $ns with a bridge br0
# that two net_tap ports join, rv0 (192.0.2.1, the server's) and rv1
# (192.0.2.2, the client's), each in its own rnic-run process; the pass
# and fail counters; cleanup on exit. Skips (exit 77) with the reason
# without root, /dev/net/tun or netns. Sets build, run, work; pair (below).
ns=rnic-dropin-$$
. "$(dirname "${BASH_SOURCE[0]}")/../common/netns.sh"
run=$build/apps/rnic-run/rnic-run

# pair NAME TRANSPORT "SERVER ARGS" "CLIENT ARGS" [READY]: the server on
# rv0 (192.0.2.1), then, once its output has READY (a line it prints
# just before it listens; default: the stack started) and a little more
# for the listen itself, the client on rv1
# (192.0.2.2) with TRANSPORT; their output (line-buffered, so a hung
# program's shows) in $work/NAME.{s,c}; fails unless both exit 0 (the
# client CLIENT_EXIT if set; the client only with PERSISTENT=1: its
# server is stopped after it); with PAIR_IP6=1 each port also takes an IPv6
# address, 2001:db8::1/64 (server) and 2001:db8::2/64 (client)
pair() {
	local name=$1 tr=$2 sargs=$3 cargs=$4 ready=${5:-}
	bridge_tap rv0 &
	local bp0=$!
	# shellcheck disable=SC2086
	local ip6s=() ip6c=()
	[ "${PAIR_IP6:-0}" = 1 ] && ip6s=(--ip 2001:db8::1/64) ip6c=(--ip 2001:db8::2/64)
	ip netns exec "$ns" timeout 30 stdbuf -oL "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 \
		"${ip6s[@]}" -- $sargs > "$work/$name.s" 2>&1 &
	local spid=$!
	for _ in $(seq 200); do
		grep -q "${ready:-EAL file-prefix}" "$work/$name.s" 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.5
	bridge_tap rv1 &
	local bp=$!
	# shellcheck disable=SC2086
	ip netns exec "$ns" timeout 20 stdbuf -oL "$run" --vdev net_tap1,iface=rv1 --ip 192.0.2.2/24 \
		"${ip6c[@]}" --transport "$tr" -- $cargs > "$work/$name.c" 2>&1
	local crc=$?
	wait "$bp0" "$bp"
	# a server that serves for ever (PERSISTENT=1) is stopped now
	[ "${PERSISTENT:-0}" = 1 ] && kill "$spid" 2>/dev/null
	wait "$spid"
	local src=$?
	[ "${PERSISTENT:-0}" = 1 ] && src=0
	if [ "$crc" = "${CLIENT_EXIT:-0}" ] && [ "$src" = 0 ]; then
		return 0
	fi
	echo "--- $name client (exit $crc$([ "$crc" = 124 ] && echo ', hung'))"
	cat "$work/$name.c"
	echo "--- $name server (exit $src$([ "$src" = 124 ] && echo ', hung'))"
	cat "$work/$name.s"
	return 1
}

