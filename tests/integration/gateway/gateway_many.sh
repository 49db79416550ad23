#!/bin/bash
# rdma-gateway holding many clients at once (issue 21: 10,000 concurrent
# connections with its status line and telemetry right): gw_many, one
# client process on its own net_tap port, connects N QPs over the given
# transport to one target and holds them. While held, the gateway's status
# line must say "conns N" (the stack's connected QPs) and "many: N conn"
# (the target's clients), and the telemetry's /rnic/gateway/targets
# many.connections and /rnic/stats connections must be N; after the client
# closes them all, all of these must come back to 0, and the gateway must
# still stop cleanly (exit 0).
# Usage: gateway_many.sh iwarp|roce [N]   (GW_MANY: the gw_many binary)
set -uo pipefail
tr=${1:-iwarp}
n=${2:-10000}
ns=rnic-gwm-$$
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, gw, work, ok, bad, bridge_tap
many=${GW_MANY:-$build/tests/integration/gateway/gw_many}

cat > "$work/gw.ini" <<INI
[port.0]
vdev = net_tap0,iface=gwtap0
ip = 192.0.2.10/24
[target.many]
size = 1M
transport = $tr
[gateway]
status_ms = 200
INI

start_gw "target many" || { bad "gateway did not start"; exit 1; }
prefix=$(sed -n 's/.*file-prefix \(rnic-[0-9]*\).*/\1/p' "$work/gw.err" | head -1)
[ -n "$prefix" ] || { bad "the gateway did not print its EAL file-prefix"; exit 1; }
# counts now: "STATUS_CONNS TARGET_CONNS TELE_TARGET TELE_STACK": the last
# status line's, then the telemetry's (one query of each command straight
# on the socket, with the system python: pyenv shims take seconds under load)
counts() {
	local line
	line=$(grep ' | many: ' "$work/gw.out" | tail -1)
	echo "$(echo "$line" | sed -n 's/.* conns \([0-9]*\) .*/\1/p')" \
		"$(echo "$line" | sed -n 's/.* many: \([0-9]*\) conn.*/\1/p')" \
		"$(timeout 20 /usr/bin/python3 - "$prefix" <<'PY' 2>/dev/null
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(10)
s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % sys.argv[1])
s.recv(1 << 16)   # the greeting
def ask(cmd):
    s.send(cmd.encode())
    return json.loads(s.recv(1 << 20).decode())[cmd]
t = ask("/rnic/gateway/targets")["many"]["connections"]
st = sum(v["connections"] for v in ask("/rnic/stats").values())
print(t, st)
PY
)"
}
# wait_counts WANT SECONDS: every count equals WANT within SECONDS
wait_counts() {
	local c end=$((SECONDS + $2))
	while :; do
		c=$(counts)
		[ "$c" = "$1 $1 $1 $1" ] && return 0
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.5
	done
	echo "counts (status conns, status target, telemetry target, telemetry stack): $c, want $1"
	return 1
}

bridge_tap clitap1 &
bp=$!
ip netns exec "$ns" timeout 800 "$many" --vdev net_tap0,iface=clitap1 --ip 192.0.2.21/24 \
	--server 192.0.2.10 --target many --conns "$n" --window "${GW_MANY_WINDOW:-512}" --transport "$tr" --release "$work/release" \
	> "$work/cli.out" 2> "$work/cli.err" &
cpid=$!
wait "$bp"
held=0
for _ in $(seq 1500); do
	grep -q "^held $n" "$work/cli.out" && { held=1; break; }
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.5
done
if [ "$held" = 1 ]; then
	ok
	echo "$tr: $(cat "$work/cli.out")"
	wait_counts "$n" 20 && ok || bad "$n connections held, the gateway does not count them"
	echo "while held: $(grep ' | many: ' "$work/gw.out" | tail -1)"
	touch "$work/release"
else
	bad "$n $tr clients did not all connect"
	cat "$work/cli.out" "$work/cli.err"
	kill "$cpid" 2>/dev/null
fi
wait "$cpid"
rc=$?
[ "$held" = 0 ] || { [ "$rc" = 0 ] && grep -q "^closed $n" "$work/cli.out" && ok ||
	{ cat "$work/cli.out" "$work/cli.err"; bad "the client's close (exit $rc)"; }; }
wait_counts 0 30 && ok || bad "the gateway still counts connections after they closed"
echo "after: $(grep ' | many: ' "$work/gw.out" | tail -1)"
kill -0 "$gwpid" 2>/dev/null && ok || bad "the gateway died"
stop_gw && ok || bad "gateway exit status after SIGTERM"
gw_tail
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
