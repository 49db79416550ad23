#!/usr/bin/env bash
# net_tap integration: the Linux kernel, in a network namespace, pings an
# rdma-gateway over a DPDK net_tap port; then a storm of random frames hits
# the gateway, which must stay up, count drops, leak no mbuf, and still
# answer pings; then SIGTERM must stop it cleanly (exit 0).
# Exit 77 (meson: skipped) with a reason when root or /dev/net/tun is missing.
set -u
. "$(dirname "$0")/tap_gw.sh" t
start_tap_gw --ip 192.0.2.10/24
ip -n "$ns" addr add 192.0.2.1/24 dev "$tap"
ip -n "$ns" link set "$tap" up
ip -n "$ns" link set lo up

ip netns exec "$ns" ping -c 5 -i 0.2 -W 2 192.0.2.10 || fail "kernel ping got no reply"

prefix=$(sed -n 's/.*file-prefix \(rnic-[0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$prefix" ] || fail "gateway did not print its EAL file-prefix"
tele() { echo "$1" | timeout 10 dpdk-telemetry.py -f "$prefix" 2>/dev/null; }

# storm: 100000 random and mutated frames from the kernel side of the tap
ip netns exec "$ns" python3 - "$tap" <<'PY' || fail "storm sender failed"
import os, random, socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
mac = open(f"/sys/class/net/{sys.argv[1]}/address").read().strip()
src = bytes.fromhex(mac.replace(":", ""))
rnd = random.Random(int(os.environ.get("RNIC_SEED", "7")))
good_ip = bytes.fromhex("4500001c0001000040010000c0000201c000020a")
for i in range(100000):
    kind = rnd.randrange(4)
    if kind == 0:      # pure noise
        f = rnd.randbytes(rnd.randrange(0, 1514))
    elif kind == 1:    # broadcast, random ethertype ARP/IPv4 with noise
        f = b"\xff" * 6 + src + rnd.choice([b"\x08\x06", b"\x08\x00"]) + rnd.randbytes(rnd.randrange(0, 100))
    else:              # a valid-looking IPv4/ICMP header with random bit flips
        h = bytearray(good_ip + rnd.randbytes(rnd.randrange(0, 64)))
        for _ in range(rnd.randrange(1, 4)):
            b = rnd.randrange(len(h)); h[b] ^= 1 << rnd.randrange(8)
        f = b"\xff" * 6 + src + b"\x08\x00" + bytes(h)
    if len(f) < 14:
        f = f + bytes(14 - len(f))
    try:
        s.send(f)
    except OSError:
        pass
PY
sleep 1
kill -0 "$gwpid" 2>/dev/null || fail "gateway died under the storm"
ip netns exec "$ns" ping -c 3 -i 0.2 -W 2 192.0.2.10 || fail "no ping reply after the storm"

drops=$(tele /rnic/drops)
echo "telemetry /rnic/drops: $drops"
total=$(python3 -c 'import json,sys
d=json.loads(sys.argv[1])["/rnic/drops"]
def walk(x):
    if isinstance(x,dict): return sum(walk(v) for v in x.values())
    if isinstance(x,(int,float)): return x
    return 0
print(int(walk(d)))' "$drops" 2>/dev/null)
[ -n "$total" ] && [ "$total" -gt 1000 ] || fail "drop counters did not rise (got '$total')"
stats=$(tele /rnic/stats)
echo "telemetry /rnic/stats: $stats"
inuse=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["/rnic/stats"]["stack0"]["mbufs_in_use"])' "$stats")
# the RX ring keeps its 1024 descriptors filled; anything far beyond is a leak
[ "$inuse" -le 1100 ] || fail "$inuse mbufs in use after the storm"

kill -TERM "$gwpid"
wait "$gwpid"; rc=$?
gwpid=
[ "$rc" = 0 ] || fail "gateway exit status $rc after SIGTERM"
grep -q "still in use at close" "$log" && fail "mbufs leaked: $(grep 'still in use' "$log")"
echo "--- gateway log (tail)"; tail -3 "$log"
cleanup
echo "1 passed, 0 failed"
