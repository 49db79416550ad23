"""RoCEv2 abuse (UDP 4791; target: rdma-gateway, whose target listens on
the RDMA IP CM service of port 4791).

0. A live RC QP, one per case, connected by the attacker through the CM
   (REQ, REP with the target's R_Key and address, RTU): a good Write is
   ACKed; a wrong R_Key and a Write past the target's end get NAK remote
   access error (AETH 0x62); a DMA length of 2^31+64 carrying 64 bytes a
   NAK; a PSN 1000 ahead NAK PSN sequence error (0x60), after which the
   expected PSN is ACKed; a duplicate Write is ACKed again.

1. BTH/RETH/AETH abuse: 3000 frames with a correct ICRC, random opcodes,
   destination QPs (0-64 and random), PSNs, RETH virtual addresses, R_Keys
   and DMA lengths up to 2^32-1, AETH syndromes; 300 with a wrong ICRC; 300
   cut inside the BTH or the RETH. Drop counters must rise.
2. QP1 MAD garbage: 500 UD Sends to QP1 (Q_Key 0x80010000) carrying
   random MADs of random lengths, wrong classes, versions and methods, and
   CM attributes rnic does not speak.
3. Spoofed IB CM floods: 3000 distinct REQs (each its own Local Comm ID,
   QPN and CMA source port, from the attacker's address) for the target's
   service, never followed by an RTU (6000 in all, below); 1000 REPs and 1000 DREQs with random
   Comm IDs. The REQs carry a valid rnic-gateway request, so each gets as
   far as a REP. They go in two halves of 3000 (6000 in all); right after
   each, before any timer ends the half-open connections, the heaps
   (rte_malloc + C) are read: the second half may add at most a quarter of
   what the first added (or 1 MiB): half-open state is bounded by a
   backlog, not by what the attacker sends; in all at most 16 MiB. The
   REPs and DREQs must change nothing (counted drops or REJs).
The driver then checks that rnic-cp over RoCE and iWARP is still served.

atk_roce.py v6 (hostile_roce_ipv6) runs every attack over IPv6: UDP 4791
to 2001:db8::10 from 2001:db8::66 (rnic's MAC found by neighbour
solicitation), the ICRC masked as annex A17.4 has it for IPv6 (traffic
class, flow label, hop limit), a real UDP checksum, the GIDs and the CMA
header's addresses the IPv6 ones (IP version 6); the driver's legitimate
client is then rnic-cp over RoCE to [2001:db8::10]."""
import os
import random
import socket
import struct
import sys
import time
import zlib

from hpeer import (ATK4, ATK6, ATKMAC, IP, RNIC4, RNIC6, UDP, Ether, IPv6, Link,
                   check, counters, done, heap_bytes, rose)

V6 = sys.argv[1:2] == ['v6']   # the address family of every attack
ATK, RNIC, L3 = (ATK6, RNIC6, IPv6) if V6 else (ATK4, RNIC4, IP)
HDRS = 14 + (40 if V6 else 20) + 8   # Ethernet, IP, UDP: where the BTH starts
print('RoCEv2 over %s: %s -> %s' % ('IPv6' if V6 else 'IPv4', ATK, RNIC))
link = Link()
rmac = link.resolve(v6=V6)
rnd = random.Random(27)
SERVICE = (0x0106 << 16) | 4791
ETH = bytes(Ether(src=ATKMAC, dst=rmac, type=0x86dd if V6 else 0x0800))


def icrc(frame):
    """The ICRC of frame (Ether/IP/UDP/BTH..., IPv4 or IPv6; IBTA A17.4.3)."""
    l3 = bytearray(frame[14:])
    if l3[0] >> 4 == 6:   # traffic class, flow label, hop limit
        l3[0] |= 0x0f
        l3[1:4] = b'\xff\xff\xff'
        l3[7] = 0xff
        ihl = 40
    else:                 # TOS, TTL, header checksum
        l3[1] = 0xff
        l3[8] = 0xff
        l3[10:12] = b'\xff\xff'
        ihl = (l3[0] & 15) * 4
    l3[ihl + 6:ihl + 8] = b'\xff\xff'
    l3[ihl + 8 + 4] = 0xff
    return struct.pack('<I', zlib.crc32(b'\xff' * 8 + bytes(l3)) & 0xffffffff)


def roce(payload_after_bth, opcode, dqp, psn, good_icrc=True, cut=None):
    """One RoCEv2 frame: BTH + @payload_after_bth + ICRC (bad when asked)."""
    bth = struct.pack('>BBHBBHBBH', opcode, 0, 0xffff, 0, dqp >> 16 & 0xff, dqp & 0xffff,
                      0x80, psn >> 16 & 0xff, psn & 0xffff)
    body = bth + payload_after_bth
    n = len(body) + 4
    if V6:
        return roce6(body, n, good_icrc, cut)
    ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + 8 + n, 0, 0x4000, 64, 17, 0,
                               socket.inet_aton(ATK4), socket.inet_aton(RNIC4)))
    csum = sum(struct.unpack('>10H', bytes(ip)))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    ip[10:12] = struct.pack('>H', ~csum & 0xffff)
    # UDP checksum 0: RoCEv2 over IPv4 allows it
    f = ETH + bytes(ip) + struct.pack('>HHHH', rnd.randrange(49152, 65536), 4791, 8 + n, 0) + body
    f = bytes(f)
    tail = icrc(f)
    if not good_icrc:
        tail = bytes(b ^ 0x5a for b in tail)
    f += tail
    return f[:cut] if cut else f


def roce6(body, n, good_icrc, cut):
    """roce() over IPv6: BTH and the rest in @body, @n bytes with the ICRC."""
    src, dst = socket.inet_pton(socket.AF_INET6, ATK), socket.inet_pton(socket.AF_INET6, RNIC)
    ip = struct.pack('>IHBB', 6 << 28, 8 + n, 17, 64) + src + dst
    sport = rnd.randrange(49152, 65536)
    f = ETH + ip + struct.pack('>HHHH', sport, 4791, 8 + n, 0) + body
    tail = icrc(f)
    if not good_icrc:
        tail = bytes(b ^ 0x5a for b in tail)
    # the UDP checksum a legitimate IPv6 sender puts (RFC 8200 8.1), over
    # the pseudo-header and the datagram with its ICRC
    dgram = struct.pack('>HHHH', sport, 4791, 8 + n, 0) + body + tail
    data = src + dst + struct.pack('>II', 8 + n, 17) + dgram
    data += b'\x00' * (len(data) & 1)
    csum = sum(struct.unpack('>%dH' % (len(data) // 2), data))
    while csum >> 16:
        csum = (csum & 0xffff) + (csum >> 16)
    csum = ~csum & 0xffff or 0xffff
    f = ETH + ip + dgram[:6] + struct.pack('>H', csum) + dgram[8:]
    return f[:cut] if cut else f


def mad_frame(mad, psn):
    deth = struct.pack('>II', 0x80010000, 1)
    return roce(deth + mad, 0x64, 1, psn)


def cm_mad(attr, body, tid):
    hdr = struct.pack('>BBBBHHQHHI', 1, 0x07, 2, 0x03, 0, 0, tid, attr, 0, 0)
    return hdr + body.ljust(232, b'\x00')[:232]


def gid(ip):
    """The GID of address @ip: IPv4-mapped, or the IPv6 address itself."""
    if ':' in ip:
        return socket.inet_pton(socket.AF_INET6, ip)
    return b'\x00' * 10 + b'\xff\xff' + socket.inet_aton(ip)


def req_body(comm_id, qpn, sport, psn=None):
    psn = rnd.randrange(1 << 24) if psn is None else psn
    b = struct.pack('>IIQQII', comm_id, 0, SERVICE, 0x0200000000000066, 0, 0x1234)
    b += struct.pack('>IIII', qpn << 8 | 1, 1, 20 << 3 | 0 << 1, psn << 8 | 20 << 3 | 7)
    b += struct.pack('>HBB', 0xffff, 3 << 4 | 7, 15 << 4)
    path = struct.pack('>HH', 0xffff, 0xffff) + gid(ATK) + gid(RNIC) + \
        struct.pack('>IBBBB', 0, 0, 64, 0, 18 << 3)
    b += path + b'\x00' * 44
    # the CMA header (RDMA IP CM service): IP version, source port, the
    # addresses (IPv4 in the last 4 bytes of 16)
    cma = struct.pack('>BBH', 0, 0x60 if V6 else 0x40, sport) + \
        (gid(ATK) + gid(RNIC) if V6 else b'\x00' * 12 + socket.inet_aton(ATK) +
         b'\x00' * 12 + socket.inet_aton(RNIC))
    gw = b'RGW1' + bytes([1, 0, 0, 0]) + b't'.ljust(32, b'\x00')   # rnic_gw_req for target t
    return b + cma + gw


def sendall(frames):
    for f in frames:
        link.send(f)


# 0. a live RC QP reached through the CM (REQ, REP, RTU) with the target's
#    R_Key from the REP: Writes the responder must refuse (NAK), PSN games
def from_rnic(m, pred, timeout=2.0):
    return link.wait(lambda p: UDP in p and p[UDP].dport == 4791 and p[L3].src == RNIC and
                     pred(bytes(p[UDP].payload)), timeout, m)


def cm_connect(i):
    """REQ/REP/RTU as the active side; the connection's numbers or None."""
    comm, qpn, psn = 0x900000 + i, 0x800 + i, rnd.randrange(1 << 24)
    m = link.mark()
    link.send(mad_frame(cm_mad(0x0010, req_body(comm, qpn, 40000 + i, psn), (2 << 40) + i), i))
    p = from_rnic(m, lambda b: len(b) >= 20 + 256 and b[20 + 16:20 + 18] == b'\x00\x13' and
                  struct.unpack('>I', b[20 + 28:20 + 32])[0] == comm)
    if p is None:
        return None
    rep = bytes(p[UDP].payload)[20 + 24:20 + 256]
    c = {'comm': comm, 'qpn': qpn,
         'rcomm': struct.unpack('>I', rep[0:4])[0],
         'rqpn': struct.unpack('>I', rep[12:16])[0] >> 8,
         # the REP's Starting PSN is the one rnic expects to receive first
         'psn': struct.unpack('>I', rep[20:24])[0] >> 8}
    gw = rep[36:]
    if gw[:4] == b'RGW1':
        c['stag'], c['addr'], c['len'] = struct.unpack('>IQQ', gw[8:28])
    link.send(mad_frame(cm_mad(0x0014, struct.pack('>II', comm, c['rcomm']), (3 << 40) + i), i))
    return c


def write(c, psn, va, rkey, dmalen, payload=b'w' * 64):
    """An RDMA WRITE ONLY on @c; rnic's answer: the AETH syndrome or None."""
    m = link.mark()
    link.send(roce(struct.pack('>QII', va, rkey, dmalen) + payload, 0x0A, c['rqpn'], psn))
    p = from_rnic(m, lambda b: b[0] == 0x11 and
                  (b[5] << 16 | b[6] << 8 | b[7]) == c['qpn'], 1.5)
    if p is not None and os.environ.get('HOSTILE_DEBUG'):
        b = bytes(p[UDP].payload)
        print('  write psn %06x -> ack psn %06x syndrome %02x msn %d' % (
            psn, b[9] << 16 | b[10] << 8 | b[11], b[12], b[13] << 16 | b[14] << 8 | b[15]))
    return None if p is None else bytes(p[UDP].payload)[12]


def nak(s):
    return s is not None and s & 0xe0 == 0x60


live_cases = 0
for i, name in enumerate(['good Write', 'wrong R_Key', 'past the end', 'DMA length 2^31+64',
                          'PSN 1000 ahead', 'duplicate PSN']):
    c = cm_connect(i)
    if not check(c is not None and 'stag' in c, '%s: CM connects (REP with the target\'s R_Key)' % name):
        continue
    live_cases += 1
    a, k, n, p0 = c['addr'], c['stag'], c['len'], c['psn']
    if name == 'good Write':
        s = write(c, p0, a, k, 64)
        check(s is not None and s < 0x20, '%s: ACKed (syndrome %r)' % (name, s))
    elif name == 'wrong R_Key':
        s = write(c, p0, a, k ^ 0x5a5a00, 64)
        check(s == 0x62, '%s: NAK remote access error (syndrome %r)' % (name, s))
    elif name == 'past the end':
        s = write(c, p0, a + n - 16, k, 64)
        check(s == 0x62, '%s: NAK remote access error (syndrome %r)' % (name, s))
    elif name == 'DMA length 2^31+64':
        s = write(c, p0, a, k, (1 << 31) + 64)
        check(nak(s), '%s: NAK (syndrome %r)' % (name, s))
    elif name == 'PSN 1000 ahead':
        s = write(c, (p0 + 1000) & 0xffffff, a, k, 64)
        check(s == 0x60, '%s: NAK PSN sequence error (syndrome %r)' % (name, s))
        s = write(c, p0, a, k, 64)
        check(s is not None and s < 0x20, '%s: then the expected PSN is ACKed (syndrome %r)' % (name, s))
    else:
        write(c, p0, a, k, 64)
        s = write(c, p0, a, k, 64, b'd' * 64)
        check(s is not None and s < 0x20, '%s: a duplicate Write is ACKed again (syndrome %r)' % (name, s))


# 1. BTH / RETH / AETH abuse
before = counters()
frames = []
for i in range(3000):
    op = rnd.randrange(256)
    dqp = rnd.randrange(65) if i % 2 else rnd.randrange(1 << 24)
    reth = struct.pack('>QII', rnd.randrange(1 << 64), rnd.randrange(1 << 32),
                       rnd.choice([0, 1, 4096, 1 << 31, (1 << 32) - 1]))
    aeth = struct.pack('>I', rnd.randrange(1 << 32))
    extra = rnd.choice([b'', reth, aeth, reth + aeth, rnd.randbytes(rnd.randrange(0, 200))])
    frames.append(roce(extra, op, dqp, rnd.randrange(1 << 24)))
for i in range(300):
    frames.append(roce(rnd.randbytes(32), rnd.randrange(256), rnd.randrange(65),
                       rnd.randrange(1 << 24), good_icrc=False))
for i in range(300):
    frames.append(roce(rnd.randbytes(16), rnd.choice([0x06, 0x0a, 0x0c]), rnd.randrange(65),
                       0, cut=HDRS + rnd.randrange(0, 20)))
sendall(frames)
after = counters()
print('BTH abuse, counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                             if after[k] != before.get(k, 0)})
r = rose(before, after, 'drops.', 'roce.rx_bad', 'roce.rx_parse', 'roce.rx_unknown', 'roce.rx_drop')
check(r >= 300, 'drop counters rose (+%d)' % r)

# 2. QP1 MAD garbage
before = counters()
frames = []
for i in range(500):
    kind = i % 5
    if kind == 0:
        mad = rnd.randbytes(256)
    elif kind == 1:
        mad = rnd.randbytes(rnd.choice([0, 1, 23, 24, 100, 255, 257, 1000]))
    elif kind == 2:   # CM class, wrong version or method
        mad = cm_mad(0x0010, rnd.randbytes(232), i)
        mad = mad[:2] + bytes([rnd.choice([1, 3, 255])]) + bytes([rnd.randrange(256)]) + mad[4:]
    elif kind == 3:   # attributes rnic does not speak (LAP 0x19, SIDR 0x17/0x18, junk)
        mad = cm_mad(rnd.choice([0x0017, 0x0018, 0x0019, 0x001a, 0xffff]), rnd.randbytes(232), i)
    else:             # a REQ with garbage fields
        mad = cm_mad(0x0010, rnd.randbytes(232), i)
    frames.append(mad_frame(mad, i))
sendall(frames)
after = counters()
print('MAD garbage, counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                               if after[k] != before.get(k, 0)})

# 3. CM floods
heap0 = heap_bytes()
m = link.mark()
growth = []
for half in range(2):
    sendall([mad_frame(cm_mad(0x0010, req_body(0x10000 + i, 0x100 + i, 20000 + i),
                              (1 << 40) + i), i) for i in range(half * 3000, half * 3000 + 3000)])
    time.sleep(0.5)
    growth.append(heap_bytes() - heap0 - sum(growth))
answers = link.collect(lambda p: UDP in p and p[UDP].dport == 4791 and p[L3].src == RNIC, m)
print('REQ flood: %d frames back from rnic, heap %+d then %+d bytes; REP/REJ/MRA back: %s' % (
    len(answers), growth[0], growth[1],
    [sum(1 for p in answers if bytes(p[UDP].payload)[12 + 8 + 16:12 + 8 + 18] == a)
     for a in (b'\x00\x13', b'\x00\x12', b'\x00\x11')]))
check(growth[1] <= max(1 << 20, growth[0] // 4),
      'the second 3000 spoofed REQs add at most a quarter of the first 3000 (or 1 MiB): '
      '%+d after %+d bytes (half-open state bounded by a backlog)' % (growth[1], growth[0]))
check(sum(growth) <= 16 << 20, 'heap growth after 6000 spoofed REQs: %+d bytes (at most 16 MiB)' %
      sum(growth))
before = counters()
frames = []
for i in range(1000):
    frames.append(mad_frame(cm_mad(0x0013, struct.pack('>II', rnd.randrange(1 << 32),
                                                       rnd.randrange(1 << 32)) + rnd.randbytes(200), 9 << 40 | i), i))
    frames.append(mad_frame(cm_mad(0x0015, struct.pack('>III', rnd.randrange(1 << 32),
                                                        rnd.randrange(1 << 32), rnd.randrange(1 << 24) << 8), 10 << 40 | i), i))
sendall(frames)
time.sleep(0.5)
after = counters()
print('REP/DREQ flood, counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                                  if after[k] != before.get(k, 0)})
check(heap_bytes() - heap0 <= 16 << 20, 'heap bounded after the REP/DREQ flood')
done()
