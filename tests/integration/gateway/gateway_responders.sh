#!/bin/bash
# rdma-gateway's responders, measured from other processes (issue 7): the
# gateway runs [responder.perf], [responder.ping] and [responder.pingpong]
# on a net_tap port; each client runs in a process of its own on another
# net_tap port, the taps bridged in a network namespace:
#  - rnic-perf --client write_bw and read_bw over iWARP and RoCE, send_lat
#    over iWARP: exit 0 with every operation completed, and the gateway's
#    status line counts exactly the bytes the runs moved (in: the Writes and
#    Sends placed in its memory; out: the Read Responses and Sends);
#  - rnic-ping -c -V: 20 pings whose data the client compares, over iWARP
#    and again over RoCE (the one responder takes either transport);
#  - rnic-pingpong (ibv_rc_pingpong over RoCE): 200 exchanges;
#  - a second perf client while a run is under way is refused ("busy");
#  - the status line's conns are connected QPs: 1 during a one-QP run, 0
#    once every client closed (TCP TIME_WAIT does not count);
#  - a perf client killed mid-run frees the responder (idle_s = 5 s without
#    traffic), which then serves the next client;
#  - SIGTERM: the gateway exits 0.
set -uo pipefail
ns=rnic-gwr-$$
# shellcheck source=netns.sh
. "$(dirname "$0")/netns.sh"   # build, gw, work, ok, bad, bridge_tap
perf=$build/apps/rnic-perf/rnic-perf
ping=$build/apps/rnic-ping/rnic-ping
pp=$build/apps/rnic-pingpong/rnic-pingpong

cat > "$work/gw.ini" <<INI
[port.0]
vdev = net_tap0,iface=gwtap0
ip = 192.0.2.10/24
[responder.perf]
listen = 18520
transport = iwarp, roce
idle_s = 5
[responder.ping]
listen = 7174
size = 4K
[responder.pingpong]
listen = 18515
size = 4096
iters = 200
[gateway]
status_ms = 200
INI

start_gw 'responder pingpong'
grep -q '^responder perf: iwarp,roce port 18520$' "$work/gw.out" &&
	grep -q '^responder ping: iwarp,roce port 7174$' "$work/gw.out" &&
	grep -q '^responder pingpong: roce port 18515$' "$work/gw.out" && ok ||
	{ cat "$work/gw.out" "$work/gw.err"; bad "the gateway did not start its responders"; exit 1; }

# the last status line's "perf: ... in X B, out Y B"
perf_bytes() {
	local line
	sleep 0.5   # a status line after the run's end
	line=$(grep -o 'perf: [0-9]* conn, [0-9]* runs, [0-9]* failed, in [0-9]* B, out [0-9]* B' \
		"$work/gw.out" | tail -1)
	echo "$line" | sed -E 's/.* in ([0-9]+) B, out ([0-9]+) B/\1 \2/'
}
want_in=0 want_out=0 runs=0
# perf N TEST TRANSPORT SIZE ITERS IN_FACTOR OUT_FACTOR
perf_run() {
	local n=$1 test=$2 tr=$3 size=$4 iters=$5
	client "$n" "$perf" "$test" --client 192.0.2.10 --transport "$tr" -s "$size" -n "$iters" \
		--json > "$work/perf$n.out" 2>&1
	local rc=$?
	if [ "$rc" = 0 ] && grep -q "\"test\": \"$test\", \"transport\": \"$tr\", \"mode\": \"client\"" \
		"$work/perf$n.out" && grep -q "\"completed\": $iters," "$work/perf$n.out"; then
		ok
	else
		cat "$work/perf$n.out"
		bad "rnic-perf --client $test over $tr (exit $rc)"
		return
	fi
	runs=$((runs + 1))
	want_in=$((want_in + $6 * size * iters))
	want_out=$((want_out + $7 * size * iters))
	local got
	got=$(perf_bytes)
	[ "$got" = "$want_in $want_out" ] && ok ||
		bad "$test over $tr: the gateway counted in/out '$got', want '$want_in $want_out'"
}
perf_run 1 write_bw iwarp 65536 2000 1 0
perf_run 2 read_bw iwarp 65536 1000 0 1
perf_run 3 send_lat iwarp 64 500 1 1
perf_run 4 write_bw roce 65536 1000 1 0
perf_run 5 read_bw roce 4096 1000 0 1
grep -q "perf: 0 conn, $runs runs, 0 failed" "$work/gw.out" && ok ||
	bad "the status line does not count $runs perf runs: $(grep -o 'perf: [^|]*' "$work/gw.out" | tail -1)"

# a second client during a run is refused at once
base=$(wc -l < "$work/gw.out")
since() { tail -n +$((base + 1)) "$work/gw.out"; }   # the status lines from here on
client 6 "$perf" write_bw --client 192.0.2.10 -s 65536 --duration 15 > "$work/long.out" 2>&1 &
long=$!
for _ in $(seq 100); do
	since | grep -q 'perf: 1 conn' && break
	sleep 0.1
done
# the stack's conns are connected QPs: the iWARP run's one (a RoCE run has
# two: its RoCE QP and the control connection's iWARP QP)
since | grep 'perf: 1 conn' | tail -1 | grep -q ' conns 1 mbufs' && ok ||
	bad "conns during a one-QP run: $(since | grep 'perf: 1 conn' | tail -1 | cut -d'|' -f1)"
client 7 "$perf" write_bw --client 192.0.2.10 -s 65536 -n 10 > "$work/busy.out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'the server refused: busy: another run is under way' "$work/busy.out" &&
	ok || { cat "$work/busy.out"; bad "a second perf client during a run (exit $rc)"; }
wait "$long" && ok || { cat "$work/long.out"; bad "the run the busy client met"; }

client 8 "$ping" -c -a 192.0.2.10 -p 7174 -C 20 -S 1024 -V > "$work/ping.out" 2>&1 && ok ||
	{ cat "$work/ping.out"; bad "rnic-ping -c -V against [responder.ping]"; }
sleep 0.5
grep -q 'ping: 0 conn, 20 pings, 0 failed, in 20480 B, out 20480 B' "$work/gw.out" && ok ||
	bad "the status line after 20 pings: $(grep -o 'ping: [^|]*' "$work/gw.out" | tail -1)"
# the same responder over RoCE: the request's transport picks the QP's
client 12 "$ping" --transport roce -c -a 192.0.2.10 -p 7174 -C 20 -S 1024 -V \
	> "$work/ping-roce.out" 2>&1 && ok ||
	{ cat "$work/ping-roce.out"; bad "rnic-ping --transport roce -c -V against [responder.ping]"; }
sleep 0.5
grep -q 'ping: 0 conn, 40 pings, 0 failed, in 40960 B, out 40960 B' "$work/gw.out" && ok ||
	bad "the status line after 20 more pings over RoCE: $(grep -o 'ping: [^|]*' "$work/gw.out" | tail -1)"

client 9 "$pp" -g 1 -s 4096 -n 200 192.0.2.10 > "$work/pp.out" 2>&1 &&
	grep -q '^200 iters in' "$work/pp.out" && ok ||
	{ cat "$work/pp.out"; bad "rnic-pingpong against [responder.pingpong]"; }
sleep 1
grep -q 'pingpong: 0 conn, 1 sessions, 0 failed, in 819200 B, out 819200 B' "$work/gw.out" && ok ||
	bad "the status line after a pingpong session: $(grep -o 'pingpong: [^|]*' "$work/gw.out" | tail -1)"

# a perf client that vanishes mid-run (killed: no FIN, no RST) frees the
# responder after idle_s (5 s) without traffic; the next client is served
base=$(wc -l < "$work/gw.out")
client 10 "$perf" write_bw --client 192.0.2.10 -s 65536 --duration 120 > /dev/null 2>&1 &
victim=$!
for _ in $(seq 100); do
	since | grep -q 'perf: 1 conn' && break
	sleep 0.1
done
sleep 1
kill -9 "$victim" 2>/dev/null
ip netns pids "$ns" | while read -r p; do
	grep -qa -- '--client' "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p"
done
wait "$victim" 2>/dev/null
for _ in $(seq 20); do
	tail -1 "$work/gw.out" | grep -q "perf: 0 conn, $((runs + 1)) runs, 1 failed" && break
	sleep 1
done
tail -1 "$work/gw.out" | grep -q "perf: 0 conn, $((runs + 1)) runs, 1 failed" && ok ||
	bad "a vanished perf client: $(tail -1 "$work/gw.out" | grep -o 'perf: [^|]*')"
client 11 "$perf" write_bw --client 192.0.2.10 -s 4096 -n 100 > "$work/after.out" 2>&1 && ok ||
	{ cat "$work/after.out"; bad "a perf client after the vanished one"; }

# every client closed: no connection left, whatever TCP's TIME_WAIT holds
# (the status line that shows it may be up to one status interval late)
for _ in $(seq 50); do
	tail -1 "$work/gw.out" | grep -q ' conns 0 mbufs' && break
	sleep 0.1
done
tail -1 "$work/gw.out" | grep -q ' conns 0 mbufs' && ok ||
	bad "conns after every client closed: $(tail -1 "$work/gw.out" | cut -d'|' -f1)"
stop_gw
rc=$?
[ "$rc" = 0 ] && ok || bad "gateway exit status $rc after SIGTERM"
gw_tail
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
