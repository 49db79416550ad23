#!/usr/bin/env bash
# Issue 21's connection setup rate, side by side in one run: rnic-perf
# conn_rate --loopback (connect, RTS, one 8-byte Send, disconnect, QPs
# created and destroyed; both stacks' workers on the main thread, --drive
# one, so the figure is connections per second of one CPU doing both ends)
# for iWARP (TCP handshake + MPA) and RoCE (IB CM REQ/REP/RTU, DREQ/DREP),
# iWARP once more with the 50 ms pause before RTS kept for siw
# (--rts-delay), and tests/bench/kernel_conn_rate: the kernel's TCP
# handshake, one message and a close over loopback, also one thread for
# both ends. With a second build directory (an older commit's), its
# rnic-perf runs each transport too, alternating with this build's, for a
# before/after in the same minute. Prints a table on stderr and one JSON
# object on stdout; the load average before and after is part of it (the
# machine is shared), and so is each run's CPU time: "per CPU s" is the
# rate the run would have had with a CPU to itself.
# Usage: tests/bench/run-conn-rate.sh [build-dir] [conns] [window] [before-build-dir]
# conns: at most 28,232 (B's TIME_WAITs hold its source ports for 2 s, and
# TCP takes one over only after 1 s, Linux's tcp_tw_reuse delay). One more
# iWARP run is sustained: 100,000 connections between the same address
# pair and port with --tw-reuse-ms 5 (TIME_WAITs taken over after 5 ms).
set -eu
build=${1:-build}
n=${2:-20000}
win=${3:-64}
before=${4:-}
perf="$build/apps/rnic-perf/rnic-perf"
load() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
num() { echo "$1" | sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p"; }
cr() { "$1" conn_rate --loopback --transport "$2" --conns "$n" --window "$win" --json \
	2>/dev/null | tail -1; }
l0=$(load)
biw='' bro=''
[ -n "$before" ] && biw=$(cr "$before/apps/rnic-perf/rnic-perf" iwarp)
iw=$(cr "$perf" iwarp)
[ -n "$before" ] && bro=$(cr "$before/apps/rnic-perf/rnic-perf" roce)
ro=$(cr "$perf" roce)
# 50 ms a connection: a few thousand are enough to see the cap
iwd=$("$perf" conn_rate --loopback --transport iwarp --conns 2000 --window "$win" --rts-delay --json 2>/dev/null | tail -1)
iws=$("$perf" conn_rate --loopback --transport iwarp --conns 100000 --window "$win" --tw-reuse-ms 5 \
	--json 2>/dev/null | tail -1)
k=$("$build/tests/bench/kernel_conn_rate" --conns "$n" --window "$win" | tail -1)
l1=$(load)
{
	printf '%-30s %10s %10s %8s %10s\n' "connections (window $win)" completed seconds "per s" \
		"per CPU s"
	rows=("rnic iWARP:$iw" "rnic RoCE:$ro")
	[ -n "$before" ] && rows+=("before: rnic iWARP:$biw" "before: rnic RoCE:$bro")
	rows+=("rnic iWARP, 50 ms pause:$iwd" "rnic iWARP, 100,000, reuse:$iws"
	       "kernel TCP, loopback:$k")
	for row in "${rows[@]}"; do
		name=${row%%:\{*}
		name=${name%:}
		j=${row#"$name":}
		c=$(num "$j" completed)
		printf '%-30s %10s %10s %8s %10s\n' "$name" "${c:-$(num "$j" conns)}" \
			"$(num "$j" seconds)" "$(num "$j" conns_per_s)" "$(num "$j" conns_per_cpu_s)"
	done
	echo "load average before: $l0, after: $l1"
} >&2
printf '{"bench": "conn_rate", "conns": %s, "window": %s, "load_before": [%s], "load_after": [%s], ' \
	"$n" "$win" "$l0" "$l1"
printf '"iwarp": %s, "roce": %s, "iwarp_rts_delay": %s, "iwarp_sustained": %s, "kernel": %s' \
	"${iw:-null}" "${ro:-null}" "${iwd:-null}" "${iws:-null}" "${k:-null}"
[ -n "$before" ] && printf ', "before_iwarp": %s, "before_roce": %s' "${biw:-null}" "${bro:-null}"
printf '}\n'
