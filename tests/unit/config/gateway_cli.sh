#!/usr/bin/env bash
# rdma-gateway's command line and configuration, end to end:
#   errors   every bad invocation (bad [target.*] and [responder.*] sections
#            too) prints exactly one line on stderr and exits 2
#            (no EAL is started for them, so this runs in the unit suite)
#   run      on a net_null port with two [target.*] sections: prints one line
#            per target, status lines, exits 0 on SIGTERM with a summary line
# usage: gateway_cli.sh GATEWAY errors|run
set -u
gw=$1
mode=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0
fails=0

bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_error WANT ARGS...: exit 2, stdout empty, stderr exactly WANT
expect_error() {
	local want=$1
	shift
	"$gw" "$@" >"$dir/out" 2>"$dir/err"
	local rc=$?
	local got
	got=$(cat "$dir/err")
	if [ "$rc" != 2 ]; then
		bad "$*: exit $rc, want 2 (stderr: $got)"
	elif [ "$(wc -l <"$dir/err")" != 1 ] || [ "$got" != "$want" ]; then
		bad "$*:"$'\n'"  got  '$got'"$'\n'"  want '$want'"
	elif [ -s "$dir/out" ]; then
		bad "$*: wrote to stdout: $(cat "$dir/out")"
	else
		pass=$((pass + 1))
	fi
}

port='[port.0]
vdev = net_null0
ip = 192.0.2.10/24
'
ini() { printf '%s%s' "$port" "$1" >"$dir/$2.ini"; }

errors() {
	"$gw" --help >"$dir/out" 2>&1 && grep -q '^usage: rdma-gateway --config FILE' "$dir/out" &&
		grep -q -- '--fault-drop' "$dir/out" && pass=$((pass + 1)) || bad "--help"

	expect_error "rdma-gateway: /nonexistent.ini: cannot open: No such file or directory" \
		--config /nonexistent.ini
	expect_error "rdma-gateway: --config: needs a value" --config
	ini $'colour = red\n' k
	expect_error "rdma-gateway: $dir/k.ini: [port.0] colour: unknown key" --config "$dir/k.ini"
	printf '[port.0]\nvdev = net_null0\nip = 300.1.2.3/24\n' >"$dir/a.ini"
	expect_error "rdma-gateway: $dir/a.ini: [port.0] ip: '300.1.2.3/24' is not an IPv4 or IPv6 address/prefix" \
		--config="$dir/a.ini"
	ini $'[colour]\nx = 1\n' s
	expect_error "rdma-gateway: $dir/s.ini: [colour]: unknown section" --config "$dir/s.ini"
	printf 'not ini\n' >"$dir/x.ini"
	expect_error "rdma-gateway: $dir/x.ini: line 1: 'not ini' is neither [section] nor key = value" \
		--config "$dir/x.ini"
	expect_error "rdma-gateway: --ip: '1.2.3' is not an IPv4 or IPv6 address/prefix" \
		--vdev net_null0 --ip 1.2.3
	expect_error "rdma-gateway: --vdev: 'net_null0' has no address (pair it with --ip A.B.C.D/LEN or X:X::X/LEN)" \
		--vdev net_null0
	expect_error "rdma-gateway: unknown argument '--colour' (try --help)" \
		--vdev net_null0 --ip 1.2.3.4/24 --colour red
	expect_error "rdma-gateway: no port configured (--config FILE, or --vdev SPEC --ip CIDR)"

	# [target.NAME]: parsed strictly
	local t
	for t in \
		"access = rx|[target.a] access: 'rx' is not rw or ro" \
		"colour = red|[target.a] colour: unknown key" \
		"transport = iwarp,tcp|[target.a] transport: 'iwarp,tcp' is not a list of iwarp and roce" \
		"transport = roce,roce|[target.a] transport: 'roce,roce' is not a list of iwarp and roce" \
		"listen = 70000|[target.a] listen: '70000' is not a port 1..65535" \
		"allow = 192.0.2.5/24|[target.a] allow: '192.0.2.5/24' has host bits set under /24" \
		"allow = 10.0.0.0/8, 1.2.3|[target.a] allow: '1.2.3' is not an IPv4 or IPv6 address/prefix" \
		"size = 64X|[target.a] size: '64X' is not a size like 4096, 64K, 64M or 2G" \
		"size = 0|[target.a] size: '0' is not a size like 4096, 64K, 64M or 2G" \
		"access = ro|[target.a] size: missing (required, e.g. size = 64M)"; do
		local size=$'size = 1M\n'
		# the size cases bring their own size; the last one has none
		case ${t%%|*} in size*|access\ =\ ro) size= ;; esac
		ini "[target.a]"$'\n'"$size${t%%|*}"$'\n' t
		expect_error "rdma-gateway: $dir/t.ini: ${t#*|}" --config "$dir/t.ini"
	done
	ini $'[target.a]\nsize = 1M\nsize = 2M\n' t
	expect_error "rdma-gateway: $dir/t.ini: [target.a] size: given twice" --config "$dir/t.ini"
	ini $'[target.a b]\nsize = 1M\n' t
	expect_error "rdma-gateway: $dir/t.ini: [target.a b]: target name must be 1..32 letters, digits, '-' or '_'" \
		--config "$dir/t.ini"
	ini $'[target.a]\nsize = 1M\n[target.a]\nsize = 1M\n' t
	expect_error "rdma-gateway: $dir/t.ini: [target.a]: section given twice" --config "$dir/t.ini"

	# [responder.KIND]: parsed strictly too, and ports are one service's
	ini $'[responder.pingpong]\ntransport = iwarp\n' r
	expect_error "rdma-gateway: $dir/r.ini: [responder.pingpong] transport: 'iwarp' is not roce" \
		--config "$dir/r.ini"
	ini $'[responder.echo]\n' r
	expect_error "rdma-gateway: $dir/r.ini: [responder.echo]: unknown responder (perf, ping or pingpong)" \
		--config "$dir/r.ini"
	ini $'[responder.pingpong]\nsize = 0\n' r
	expect_error "rdma-gateway: $dir/r.ini: [responder.pingpong] size: '0' is not a size 1..67108864 (K, M allowed)" \
		--config "$dir/r.ini"
	ini $'[target.a]\nsize = 1M\n[responder.perf]\nlisten = 4791\n' r
	expect_error "rdma-gateway: [responder.perf] listen: port 4791 is also [target.a]'s" \
		--config "$dir/r.ini"
}

run() {
	ini $'[target.scratch]\nsize = 64M\nfile = '"$dir"$'/scratch\naccess = rw\ntransport = iwarp, roce\nlisten = 4791\nallow = 192.0.2.0/24, 10.1.2.3\n[target.ro_copy]\nsize = 4K\naccess = ro\n[gateway]\nstatus_ms = 200\n' g
	"$gw" --config "$dir/g.ini" >"$dir/out" 2>"$dir/err" &
	local pid=$!
	for _ in $(seq 100); do
		[ "$(grep -c '^rx ' "$dir/out")" -ge 2 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	local rc=$?
	[ "$rc" = 0 ] && pass=$((pass + 1)) || bad "exit status $rc after SIGTERM"
	grep -q "^target scratch: 67108864 bytes in $dir/scratch, rw, iwarp,roce port 4791, stag 0x" \
		"$dir/out" && grep -q '^target ro_copy: 4096 bytes of memory, ro, iwarp,roce port 4791' \
		"$dir/out" && [ "$(stat -c %s "$dir/scratch")" = 67108864 ] &&
		pass=$((pass + 1)) || bad "target lines"
	[ "$(grep -c '^rx [0-9]* (' "$dir/out")" -ge 2 ] && pass=$((pass + 1)) ||
		bad "fewer than 2 status lines"
	tail -1 "$dir/out" | grep -q '^rdma-gateway: stopped after .* s: rx [0-9]* tx' &&
		pass=$((pass + 1)) || bad "no summary line"
	[ "$fails" = 0 ] || { echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; cat "$dir/err"; }
}

case $mode in
errors) errors ;;
run) run ;;
*) echo "usage: $0 GATEWAY errors|run"; exit 2 ;;
esac
echo "$pass passed, $fails failed"
[ "$fails" = 0 ]
