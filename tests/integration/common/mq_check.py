# Check a multi-queue run of rnic-tcp (tests/integration/net/mq_flows.sh).
#   python3 mq_check.py RNIC_JSON LOCAL_IP REMOTE_IP PEER_FLOWS_JSON SELF_REDIRECTS
# RNIC_JSON: rnic-tcp's --json line (--conns N: "flows" lists, per
# connection, [worker, local port, remote port, bytes, SHA-256]).
# PEER_FLOWS_JSON: the other end's view, a JSON list of [local port,
# remote port, bytes, SHA-256] (the peer's local port is rnic's remote
# one). Checks that every connection lives on the worker the Toeplitz hash
# with rnic's symmetric key names for its replies (lib/engine/steer.c,
# computed here independently), that both workers own some, that each
# connection's bytes and SHA-256 equal the peer's, and with SELF_REDIRECTS
# "zero" that no frame was redirected after the first connection was up
# ("count": that redirects were counted).
# Prints one line; exit 1 on any mismatch.
import ipaddress
import json
import sys

KEY = bytes([0x6d, 0x5a] * 20)


def toeplitz(key, data):
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (kbits - 32 - i)) & 0xFFFFFFFF
    return h


# the implementation first: the Microsoft verification vector
MS = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
assert toeplitz(MS, bytes([66, 9, 149, 187, 161, 142, 100, 80]) +
                (2794).to_bytes(2, "big") + (1766).to_bytes(2, "big")) == 0x51CCC178


def owner(src, dst, sport, dport, n):
    d = (ipaddress.IPv4Address(src).packed + ipaddress.IPv4Address(dst).packed +
         sport.to_bytes(2, "big") + dport.to_bytes(2, "big"))
    return (toeplitz(KEY, d) & 127) % n


r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
lip, rip = sys.argv[2], sys.argv[3]
peer = json.load(open(sys.argv[4]))
zero = sys.argv[5] == "zero"
n = r["workers"]
bad = []
per = [0] * n
if not r["ok"]:
    bad.append("rnic-tcp reported ok false")
peer_by = {(p[0], p[1]): p for p in peer}
for w, lport, rport, nbytes, sha in r["flows"]:
    # rnic receives this flow's frames with src = the peer, dst = us
    want = owner(rip, lip, rport, lport, n)
    if w != want:
        bad.append(f"flow {lport}<-{rport} on worker {w}, its hash names {want}")
    else:
        per[w] += 1
    p = peer_by.get((rport, lport))
    if p is None:
        bad.append(f"flow {lport}<-{rport}: the peer does not know it")
    elif p[2] != nbytes or p[3] != sha:
        bad.append(f"flow {lport}<-{rport}: {nbytes} bytes {sha[:12]} here, "
                   f"{p[2]} bytes {p[3][:12]} at the peer")
if len(r["flows"]) != len(peer):
    bad.append(f"{len(r['flows'])} connections here, {len(peer)} at the peer")
if n > 1 and min(per) == 0:
    bad.append(f"connections per worker {per}: one worker owns none")
if zero and r["redirected_since_first"] != 0:
    bad.append(f"{r['redirected_since_first']} frames redirected after the first connection")
# "count": the link spreads by a hash rnic does not know (af_packet's
# fanout) or not at all (one af_xdp queue for two workers): frames of
# some of the 64 connections arrive at the other worker, and the counter
# must show them
if not zero and r["redirected"] == 0:
    bad.append("no frame redirected: the counter missed them, or one worker got everything")
print(f"{len(r['flows'])} connections, per worker {per}, each on the worker its hash "
      f"names; redirected {r['redirected']} ({r['redirected_since_first']} after the first "
      f"connection); bytes and SHA-256 equal the peer's" if not bad else "; ".join(bad[:5]))
sys.exit(1 if bad else 0)
