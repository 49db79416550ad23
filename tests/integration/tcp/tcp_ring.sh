#!/usr/bin/env bash
# rnic <-> rnic over net_ring: 256 MiB with matching SHA-256, clean or with
# the fault injector at 2% drop, 1% dup, 2% reorder on both ends; over IPv4,
# or with "ipv6" as the second argument over IPv6 only (the stacks have no
# IPv4 address: neighbour discovery, the IPv6 checksum and MSS, the SYN
# stage keyed on the IPv6 four-tuple).
# RNIC_SEED picks the injector seed (1 when unset, so CI is repeatable; printed).
set -u
bin=${RNIC_BUILD_DIR:?}/apps/rnic-tcp/rnic-tcp
bytes=${RNIC_TCP_BYTES:-256M}
seed=${RNIC_SEED:-1}   # RNIC_SEED=$RANDOM for a fresh one
case "${1:-clean}" in
clean)  args=() ;;
faults) args=(--drop 2 --dup 1 --reorder 2 --seed "$seed"); echo "seed $seed" ;;
*) echo "usage: $0 clean|faults [ipv4|ipv6]"; exit 2 ;;
esac
case "${2:-ipv4}" in
ipv4) ;;
ipv6) args+=(--ipv6) ;;
*) echo "usage: $0 clean|faults [ipv4|ipv6]"; exit 2 ;;
esac
out=$("$bin" source --loopback --bytes "$bytes" --json "${args[@]}" 2>&1)
rc=$?
echo "$out" | tail -3
[ $rc = 0 ] || { echo "FAIL: rnic-tcp exit $rc"; exit 1; }
echo "$out" | tail -1 | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["ok"] and r["sha256"] == r["sha256_sent"] and len(r["sha256"]) == 64, r
print("1 passed, 0 failed")'
