#!/usr/bin/env bash
# iWARP and RoCEv2 side by side in one run, with rnic-perf --loopback (two
# stacks in one process over net_ring): write_bw at 64 KiB, write_lat at
# 8 B, write_bw at 64 B (message rate) and read_bw at 64 KiB, each once per
# transport, the two transports alternating. Prints a table and writes every
# run's JSON object, one a line, to a file under /tmp (its path is printed).
# Usage: scripts/bench-roce-iwarp.sh [build-dir] [extra rnic-perf options]
# e.g.   scripts/bench-roce-iwarp.sh build --workers 2
set -uo pipefail
build=${1:-build}
shift || true
perf=$build/apps/rnic-perf/rnic-perf
[ -x "$perf" ] || { echo "no $perf: build first (ninja -C $build)" >&2; exit 1; }
out=$(mktemp /tmp/rnic-perf-bench.XXXXXX.json)
err=${out%.json}.err   # stderr of the failed runs

# name | rnic-perf arguments | figure(s) shown
runs=(
	"write_bw 64 KiB|--test write_bw -s 65536 -n 10000|gbps"
	"write_lat 8 B|--test write_lat -s 8 -n 5000|lat"
	"write_bw 64 B (message rate)|--test write_bw -s 64 -n 200000|mops"
	"read_bw 64 KiB|--test read_bw -s 65536 -n 10000|gbps"
)

# field NAME JSON: the number after "NAME": in the JSON line
field() { sed -n "s/.*\"$1\": \([0-9.eE+-]*\).*/\1/p" <<<"$2"; }

printf '%-30s %-34s %-34s\n' "test" "iWARP" "RoCEv2"
status=0
for r in "${runs[@]}"; do
	IFS='|' read -r name args what <<<"$r"
	cells=()
	for tr in iwarp roce; do
		# shellcheck disable=SC2086
		line=$("$perf" --loopback --transport "$tr" $args --json "$@" 2>"$err.last" |
		       grep '^{' | tail -1)
		if [ -z "$line" ]; then
			cells+=("FAILED (see $err)")
			{ echo "== $tr $args"; grep -v '^EAL\|^TELEMETRY' "$err.last"; } >>"$err"
			status=1
			continue
		fi
		echo "$line" >>"$out"
		case $what in
		gbps) cells+=("$(field gbps "$line") Gbit/s") ;;
		mops) cells+=("$(field mops "$line") Mmsg/s, $(field gbps "$line") Gbit/s") ;;
		lat) cells+=("$(field avg "$line") / $(field p50 "$line") / $(field p99 "$line") us") ;;
		esac
	done
	printf '%-30s %-34s %-34s\n' "$name" "${cells[0]}" "${cells[1]}"
done
echo "(latency: average / p50 / p99, half the round trip)"
echo "JSON: $out"
rm -f "$err.last"
exit $status
