# Sourced by the drop-in tests of programs that exchange their QP numbers
# out of band over a kernel TCP socket (perftest without -R,
# ibv_*_pingpong): netns.sh's namespace, with two persistent taps rv0 and
# rv1 on its bridge that the two rnic-run processes of each case attach to
# with net_tap (192.0.2.1 and 192.0.2.2); the exchange goes over the
# namespace's loopback. Needs $tools (skips, exit 77, when one is missing);
# defines oob_pair, expect and finish.
for tool in $tools; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed (scripts/deps.sh installs it)"
		exit 77
	fi
done
. "$(dirname "${BASH_SOURCE[0]}")/netns.sh"
for t in rv0 rv1; do
	ip -n "$ns" tuntap add dev $t mode tap multi_queue
	ip -n "$ns" link set $t master br0
	ip -n "$ns" link set $t up
done

# one_pair NAME TRANSPORT SERVER-CMD CLIENT-CMD: the server on rv0; once it
# waits for its client (perftest says so; ibv_*_pingpong listens on TCP
# 18515), the client on rv1. Both must exit 0; their output (line-buffered)
# in $work/NAME.{s,c}; the exit statuses in $src and $crc.
one_pair() {
	local name=$1 t=$2 scmd=$3 ccmd=$4 spid
	ip netns exec "$ns" timeout 60 stdbuf -oL "$run" --vdev net_tap0,iface=rv0 \
		--ip 192.0.2.1/24 --transport "$t" -- $scmd > "$work/$name.s" 2>&1 &
	spid=$!
	for _ in $(seq 400); do
		grep -q "Waiting for client" "$work/$name.s" && break
		ip netns exec "$ns" ss -ltn 2>/dev/null | grep -q ":18515 " && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.05
	done
	sleep 0.2   # from the message to the listen itself
	ip netns exec "$ns" timeout 60 stdbuf -oL "$run" --vdev net_tap1,iface=rv1 \
		--ip 192.0.2.2/24 --transport "$t" -- $ccmd > "$work/$name.c" 2>&1
	crc=$?
	wait $spid
	src=$?
	[ $src = 0 ] && [ $crc = 0 ]
}

# oob_pair NAME TRANSPORT SERVER-CMD CLIENT-CMD: one_pair, counted as a
# failure with both sides' last lines unless both exit 0.
# With RETRY=1 a failed pair is run up to twice more, said aloud:
# perftest -R's client connects its data QP as soon as its handshake ends,
# before the server may listen for it; the REJECTED it then gets sends
# perftest into an error path that crashes on ids it freed (a perftest
# bug, exit 139). On a loaded machine it was seen to lose that race twice
# in a row.
oob_pair() {
	local try=1
	while ! one_pair "$@" && [ "${RETRY:-0}" = 1 ] && [ $try -lt 3 ]; do
		try=$((try + 1))
		echo "RETRY $try: $1: server exit $src, client exit $crc: $(grep -m1 -E 'Failed|ERRNO' "$work/$1.c")"
	done
	if [ $src != 0 ] || [ $crc != 0 ]; then
		bad "$1: server exit $src, client exit $crc"
		tail -5 "$work/$1.s" | sed 's/^/  server: /'
		tail -5 "$work/$1.c" | sed 's/^/  client: /'
		return 1
	fi
	return 0
}

# expect NAME SIDE REGEX: the side's output (s or c) has a matching line
expect() {
	if grep -Eq "$3" "$work/$1.$2"; then
		ok
	else
		bad "$1: no line matching '$3' in the $2 output"
		tail -5 "$work/$1.$2" | sed 's/^/  /'
	fi
}

finish() {
	echo "$pass passed, $fails failed"
	[ $fails = 0 ]
}
