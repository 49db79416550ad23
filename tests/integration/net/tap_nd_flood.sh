#!/usr/bin/env bash
# Issue 27 against a running stack: an rdma-gateway on a DPDK net_tap port
# (IPv4 and IPv6), and from the kernel side of the tap, in a namespace, a
# flood of neighbour solicitations and ARP requests for the gateway's
# addresses from thousands of spoofed senders. The gateway must answer
# within its budget (the rest counted as nd_rate_limited/arp_rate_limited),
# refuse nothing it needs, keep answering the kernel's pings over both
# families, hold no mbufs, and stop cleanly on SIGTERM.
# Exit 77 (meson: skipped) with a reason when root or /dev/net/tun is missing.
set -u
. "$(dirname "$0")/tap_gw.sh" n
start_tap_gw --ip 192.0.2.10/24 --ip 2001:db8::10/64
ip -n "$ns" addr add 192.0.2.1/24 dev "$tap"
ip -n "$ns" -6 addr add 2001:db8::1/64 dev "$tap" nodad
ip -n "$ns" link set "$tap" up
ip -n "$ns" link set lo up

ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 192.0.2.10 >/dev/null || fail "no IPv4 ping reply"
for _ in $(seq 20); do   # the gateway's DAD and the kernel's first NS
	ip netns exec "$ns" ping -6 -c 1 -W 1 2001:db8::10 >/dev/null 2>&1 && break
done
ip netns exec "$ns" ping -6 -c 3 -i 0.2 -W 2 2001:db8::10 >/dev/null || fail "no IPv6 ping reply"

prefix=$(sed -n 's/.*file-prefix \(rnic-[0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$prefix" ] || fail "gateway did not print its EAL file-prefix"
tele() { echo "$1" | timeout 10 dpdk-telemetry.py -f "$prefix" 2>/dev/null; }
# the value of key $2 anywhere in telemetry answer $1 (summed), or "missing"
key() {
	python3 -c 'import json,sys
def walk(x, k):
    if isinstance(x, dict):
        return sum((v if n == k and isinstance(v, int) else walk(v, k)) for n, v in x.items())
    return 0
def has(x, k):
    return isinstance(x, dict) and (k in x or any(has(v, k) for v in x.values()))
d = json.loads(sys.argv[1])
print(walk(d, sys.argv[2]) if has(d, sys.argv[2]) else "missing")' "$1" "$2" 2>/dev/null
}

# 5000 solicitations and 5000 ARP requests, each from another spoofed
# sender with its own MAC, built byte by byte (RFC 4861 4.3, RFC 826)
ip netns exec "$ns" python3 - "$tap" <<'PY' || fail "flood sender failed"
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
def csum(b):
    if len(b) % 2:
        b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16:
        t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff
target = bytes.fromhex("20010db8000000000000000000000010")
sn = bytes.fromhex("ff0200000000000000000001ff000010")
for i in range(5000):
    mac = bytes([0x02, 0x5a, 0, (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff])
    src = bytes.fromhex("20010db800000000000000005a00") + struct.pack("!H", i)
    ns = bytearray(struct.pack("!BBHI", 135, 0, 0, 0) + target + bytes([1, 1]) + mac)
    ph = src + sn + struct.pack("!I", len(ns)) + b"\0\0\0\x3a"
    struct.pack_into("!H", ns, 2, csum(ph + bytes(ns)))
    ip6 = struct.pack("!IHBB", 6 << 28, len(ns), 58, 255) + src + sn
    s.send(bytes.fromhex("3333ff000010") + mac + b"\x86\xdd" + ip6 + bytes(ns))
    sip = bytes([192, 0, 2, 20 + i % 200])
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + mac + sip + bytes(6) + bytes([192, 0, 2, 10])
    s.send(b"\xff" * 6 + mac + b"\x08\x06" + arp)
PY
sleep 1
kill -0 "$gwpid" 2>/dev/null || fail "gateway died under the flood"
ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 192.0.2.10 >/dev/null || fail "no IPv4 ping reply after the flood"
ip netns exec "$ns" ping -6 -c 3 -i 0.2 -W 2 2001:db8::10 >/dev/null || fail "no IPv6 ping reply after the flood"

drops=$(tele /rnic/drops)
stats=$(tele /rnic/stats)
echo "telemetry /rnic/drops: $drops"
echo "telemetry /rnic/stats: $stats"
ns_in=$(key "$stats" nd_ns_in)
na_out=$(key "$stats" nd_na_out)
nd_lim=$(key "$drops" nd_rate_limited)
arp_lim=$(key "$drops" arp_rate_limited)
echo "nd_ns_in $ns_in nd_na_out $na_out nd_rate_limited $nd_lim arp_rate_limited $arp_lim"
[ "$nd_lim" != missing ] && [ "$arp_lim" != missing ] || fail "no rate-limit drop counters"
# what reached the gateway was either answered or counted as limited
[ "$ns_in" -ge 1000 ] || fail "only $ns_in solicitations arrived"
[ "$nd_lim" -gt 0 ] && [ "$arp_lim" -gt 0 ] || fail "the flood was answered in full"
[ $((na_out + nd_lim)) -ge "$ns_in" ] || fail "solicitations neither answered nor counted"
inuse=$(key "$stats" mbufs_in_use)
# the RX ring keeps its 1024 descriptors filled; anything far beyond is held
[ "$inuse" -le 1100 ] || fail "$inuse mbufs in use after the flood"

kill -TERM "$gwpid"
wait "$gwpid"; rc=$?
gwpid=
[ "$rc" = 0 ] || fail "gateway exit status $rc after SIGTERM"
grep -q "still in use at close" "$log" && fail "mbufs leaked: $(grep 'still in use' "$log")"
cleanup
echo "1 passed, 0 failed"
