# Sourced by the gateway tests: a network namespace $ns with a bridge br0
# that the net_tap ports of the gateway and of its clients join, the pass
# and fail counters, and the cleanup of everything (the gateway $gwpid, the
# namespace's processes, $work) on exit. Needs ns set; sets build, gw (the
# rdma-gateway binary) and work (a temporary directory). Skips the test
# (exit 77) with the reason when there is no root, tun or netns. Also the
# helpers every gateway test uses: start_gw, stop_gw, client, rcp,
# expect_reject, gw_tail (below).
. "$(dirname "${BASH_SOURCE[0]}")/../common/netns.sh"
gw=$build/apps/rdma-gateway/rdma-gateway
extra_cleanup() { [ -n "${gwpid:-}" ] && kill -9 "$gwpid" 2>/dev/null; }

# start_gw LINE: the gateway on $work/gw.ini (stdout to gw.out, stderr to
# gw.err), ready once gw.out has a line that starts with LINE (its last
# target or responder); prints both files and fails otherwise
start_gw() {
	ip netns exec "$ns" "$gw" --config "$work/gw.ini" >"$work/gw.out" 2>"$work/gw.err" &
	gwpid=$!
	bridge_tap gwtap0
	for _ in $(seq 100); do
		grep -q "^$1" "$work/gw.out" && return 0
		sleep 0.1
	done
	cat "$work/gw.out" "$work/gw.err"
	return 1
}
# stop_gw: SIGTERM; the gateway's exit status
stop_gw() {
	kill -TERM "$gwpid"
	wait "$gwpid"
	local rc=$?
	gwpid=
	return $rc
}
# client N EXE ARGS...: EXE on its own port clitapN, 192.0.2.(20+N), in its
# own process, at most 120 s
client() {
	local n=$1 exe=$2
	shift 2
	bridge_tap "clitap$n" &
	local bp=$!
	ip netns exec "$ns" timeout 120 "$exe" "$@" --vdev "net_tap0,iface=clitap$n" \
		--ip "192.0.2.$((20 + n))/24"
	local rc=$?
	wait "$bp"   # not a bare wait: the gateway is our child too
	return $rc
}
# rcp N ARGS...: rnic-cp as client N
rcp() {
	local n=$1
	shift
	client "$n" "$build/apps/rnic-cp/rnic-cp" "$@"
}
# expect_reject WHAT PATTERN ARGS...: rnic-cp (client 1) exits 1 saying PATTERN
expect_reject() {
	local what=$1 pat=$2
	shift 2
	rcp 1 "$@" > "$work/rej.out" 2>&1
	local rc=$?
	[ "$rc" = 1 ] && grep -q "$pat" "$work/rej.out" && ok ||
		{ cat "$work/rej.out"; bad "$what (exit $rc)"; }
}
# the gateway's last lines, when anything failed
gw_tail() {
	[ "$fails" = 0 ] || { echo "--- gateway"; tail -5 "$work/gw.out"; cat "$work/gw.err"; }
}
