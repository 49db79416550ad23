# Sourced by the drop-in tests: a network namespace $ns holding a bridge
# and two persistent taps rv0 and rv1 on it, which the two rnic-run
# processes of each case attach to with net_tap (--vdev net_tap0,iface=rv0
# and net_tap1,iface=rv1: 192.0.2.1 and 192.0.2.2); their out-of-band
# exchanges (perftest, ibv_*_pingpong) go over the namespace's loopback.
# Skips (exit 77) with the reason when root, tun, netns or a tool is
# missing. Defines pair(), the pass/fail counters and the cleanup.
build=${RNIC_BUILD_DIR:?}
run=$build/apps/rnic-run/rnic-run
pass=0 fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { pass=$((pass + 1)); }

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespace, tap devices)"
	exit 77
fi
if [ ! -c /dev/net/tun ]; then
	echo "SKIP: no /dev/net/tun (net_tap ports)"
	exit 77
fi
for tool in $tools; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed (scripts/deps.sh installs it)"
		exit 77
	fi
done
if ! ip netns add "$ns" 2>/dev/null; then
	echo "SKIP: cannot create a network namespace"
	exit 77
fi
work=$(mktemp -d)
cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	sleep 0.2
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ip -n "$ns" link set lo up
ip -n "$ns" link add br0 type bridge
ip -n "$ns" link set br0 up
for t in rv0 rv1; do
	ip -n "$ns" tuntap add dev $t mode tap multi_queue
	ip -n "$ns" link set $t master br0
	ip -n "$ns" link set $t up
done

# pair NAME TRANSPORT SERVER-CMD CLIENT-CMD: the server on rv0, then the
# client on rv1; both must exit 0. Their output: $work/NAME.{s,c}.
pair() {
	local name=$1 t=$2 scmd=$3 ccmd=$4 spid src crc
	ip netns exec "$ns" timeout 60 "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 \
		--transport "$t" -- $scmd > "$work/$name.s" 2>&1 &
	spid=$!
	sleep "${server_delay:-2}"
	ip netns exec "$ns" timeout 60 "$run" --vdev net_tap1,iface=rv1 --ip 192.0.2.2/24 \
		--transport "$t" -- $ccmd > "$work/$name.c" 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $src != 0 ] || [ $crc != 0 ]; then
		bad "$name: server exit $src, client exit $crc"
		tail -5 "$work/$name.s" | sed 's/^/  server: /'
		tail -5 "$work/$name.c" | sed 's/^/  client: /'
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
