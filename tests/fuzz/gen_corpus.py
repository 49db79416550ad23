#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpora of the fuzz harnesses into corpus/<harness>/.

Each seed starts with the harness's own prefix (mode/option bytes, split
seed, ...; see the comment at the top of each fuzz_<name>.c) followed by
valid protocol bytes or a deliberate edge case. Deterministic: running it
again rewrites the same files. Usage: gen_corpus.py [OUTDIR]
"""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), 'corpus')


def crc32c(data, crc=0):
    """CRC32c (Castagnoli), reflected, init and final xor all ones."""
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def write(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(bytes(data))


# ------------------------------------------------------------------ iWARP

def ddp_tagged(op, last=True, stag=0x1234, to=0x1000):
    return bytes([0x80 | (0x40 if last else 0) | 1, 0x40 | op]) + \
        struct.pack('>IQ', stag, to)


def ddp_untagged(op, qn=0, msn=1, mo=0, inv=0, last=True):
    return bytes([(0x40 if last else 0) | 1, 0x40 | op]) + \
        struct.pack('>IIII', inv, qn, msn, mo)


def ulpdus():
    """One valid ULPDU per RDMAP opcode (header + a little payload)."""
    return {
        'write': ddp_tagged(0x0) + b'hello tagged',
        'read_req': ddp_untagged(0x1, qn=1) +
        struct.pack('>IQIIQ', 0x55, 0x2000, 4096, 0x66, 0x3000),
        'read_resp': ddp_tagged(0x2, stag=0x55, to=0x2000) + bytes(range(40)),
        'send': ddp_untagged(0x3) + b'a send message',
        'send_inv': ddp_untagged(0x4, inv=0x77) + b'x',
        'send_se': ddp_untagged(0x5, last=False) + bytes(7),
        'send_se_inv': ddp_untagged(0x6, inv=0x78),
        'terminate': ddp_untagged(0x7, qn=2) +
        struct.pack('>I', 0x12020000 | 0xc000) + struct.pack('>H', 30) +
        ddp_untagged(0x3),
        'atomic_req': ddp_untagged(0xa, qn=3) +
        struct.pack('>IIIQQQQQ', 2, 9, 0x99, 0x4000, 5, ~0 & (2**64 - 1),
                    7, ~0 & (2**64 - 1)),
        'atomic_resp': ddp_untagged(0xb, qn=1) + struct.pack('>IQ', 9, 42),
        'imm': ddp_untagged(0xc) + bytes([1, 2, 3, 4, 0, 0, 0, 0]),
        'imm_se': ddp_untagged(0xd) + bytes(8),
    }


def fpdu(ulpdu, pos, base, crc=True, markers=False):
    """Frame one ULPDU at stream position pos; return (bytes, next pos)."""
    logical = struct.pack('>H', len(ulpdu)) + ulpdu + \
        bytes((4 - (len(ulpdu) + 2) % 4) % 4)
    out = bytearray()
    # FPDUPTR counts from the ULPDU_Length field (RFC 5044 s5); a marker
    # due where the FPDU starts precedes that field and carries 0
    len_pos = pos

    def marker():
        nonlocal pos
        if markers and (pos - base) % 512 == 0:
            out.extend(struct.pack('>HH', 0, (pos - len_pos) & 0xffff))
            pos += 4

    def put(bs):
        nonlocal pos
        for b in bs:
            marker()
            out.append(b)
            pos += 1

    marker()
    len_pos = pos
    put(logical)
    marker()
    c = crc32c(out) if crc else 0
    put(struct.pack('<I', c))
    return bytes(out), pos


def stream(ulps, start, crc=True, markers=False):
    out, pos = b'', start
    for u in ulps:
        f, pos = fpdu(u, pos, start, crc, markers)
        out += f
    return out


def mpa_frame(key, flags, rev, pdata=b'', v2=None):
    pd = (v2 or b'') + pdata
    return key + bytes([flags, rev]) + struct.pack('>H', len(pd)) + pd


def v2hdr(ird, ord_, p2p=False, send=False, write=False, read=False):
    i = ird | (0x8000 if p2p else 0) | (0x4000 if send else 0)
    o = ord_ | (0x8000 if write else 0) | (0x4000 if read else 0)
    return struct.pack('>HH', i, o)


def gen_iwarp():
    u = ulpdus()
    allu = list(u.values())
    # fuzz_fpdu: mode, start(4), seed(4), body
    for name, (crc, mk, start) in {
            'crc': (1, 0, 0), 'nocrc': (0, 0, 0),
            'markers': (1, 2, 0x1000), 'markers_wrap': (1, 2, 0xfffffe00),
            'markers_nocrc': (0, 2, 7)}.items():
        mode = crc | mk
        body = stream(allu, start, crc == 1, mk != 0)
        write('fpdu', 'stream_' + name,
              bytes([mode]) + struct.pack('>II', start, 0x1234567) + body)
    # one FPDU that crosses several marker intervals
    big = ddp_untagged(0x3) + bytes(i & 0xff for i in range(1500))
    write('fpdu', 'stream_markers_long',
          bytes([3]) + struct.pack('>II', 100, 99) +
          stream([big, u['write']], 100, True, True))
    # bad CRC, short ULPDU, bad versions, unknown opcode
    good = stream([u['send']], 0)
    bad = bytearray(good)
    bad[-1] ^= 1
    write('fpdu', 'bad_crc', bytes([1]) + struct.pack('>II', 0, 5) + bad)
    write('fpdu', 'ulpdu_len_1', bytes([1]) + struct.pack('>II', 0, 5) +
          stream([b'\x41'], 0))
    write('fpdu', 'bad_opcode', bytes([1]) + struct.pack('>II', 0, 5) +
          stream([bytes([0x41, 0x48]) + bytes(20)], 0))
    write('fpdu', 'skip_payloads', bytes([9]) + struct.pack('>II', 0, 3) +
          stream([ddp_untagged(0x3, inv=0x01000000) + b'zz'] * 3, 0))
    # round-trip mode: (sel, plen16, header bytes, payload) records
    rt = b''
    for k in range(12):
        rt += bytes([k | (0x80 if k % 2 else 0)]) + struct.pack('>H', 3 * k) \
            + bytes(range(k, k + 70))
    for mode in (4, 5, 6, 7, 15):
        write('fpdu', 'roundtrip_%d' % mode,
              bytes([mode]) + struct.pack('>II', 0x1fe, 0xabcdef) + rt)
    write('fpdu', 'roundtrip_big', bytes([7]) + struct.pack('>II', 3, 1) +
          bytes([0x43]) + struct.pack('>H', 0xfff0) + bytes(20))

    # fuzz_mpa: flags, rtr, ird(2), ord(2), seed(4), start(4), stream
    def mpa(name, flags, frame, tail=b'', start=0):
        write('mpa', name, bytes([flags, 7]) + struct.pack('>HH', 16, 16) +
              struct.pack('>II', 0x2468ace, start) + frame + tail)
    req = b'MPA ID Req Frame'
    rep = b'MPA ID Rep Frame'
    fp = stream([u['send'], u['write']], 0)
    mpa('req_rev1', 0x04 | 0x10, mpa_frame(req, 0x40, 1, b'pd'), fp)
    mpa('req_rev2_p2p', 0x02 | 0x04 | 0x10 | 0x20,
        mpa_frame(req, 0x50, 2, b'ulp data', v2hdr(8, 4, True, True, True,
                                                   True)), fp)
    mpa('req_rev2_markers', 0x02 | 0x04 | 0x08 | 0x10,
        mpa_frame(req, 0xd0, 2, b'', v2hdr(1, 1)),
        stream([u['send']], 0, True, True))
    mpa('req_rev2_short_v2', 0x02, mpa_frame(req, 0x50, 2, b'', None))
    mpa('req_pd_max', 0x02 | 0x04, mpa_frame(req, 0x40, 1, bytes(512)), fp)
    mpa('req_pd_too_long', 0x02, req + bytes([0x40, 1]) +
        struct.pack('>H', 513))
    mpa('req_bad_rev', 0x02, req + bytes([0x40, 3, 0, 0]))
    mpa('req_bad_key', 0x02, b'MPA ID Req Frane' + bytes(4))
    mpa('req_truncated', 0x02, mpa_frame(req, 0x40, 2, b'abc',
                                         v2hdr(1, 1))[:22])
    mpa('rep_rev2', 0x01 | 0x02 | 0x04 | 0x10,
        mpa_frame(rep, 0x50, 2, b'ok', v2hdr(4, 4)), fp)
    mpa('rep_rev2_p2p_write', 0x01 | 0x02 | 0x04 | 0x10 | 0x20,
        mpa_frame(rep, 0x50, 2, b'', v2hdr(4, 4, True, write=True)), fp)
    mpa('rep_reject', 0x01 | 0x02, mpa_frame(rep, 0x70, 2, b'no',
                                             v2hdr(0, 0)))
    mpa('rep_ird_too_big', 0x01 | 0x02 | 0x04,
        mpa_frame(rep, 0x50, 2, b'', v2hdr(4, 0x3fff)))
    mpa('rep_rev1', 0x01 | 0x04, mpa_frame(rep, 0x40, 1, b''), fp)

    # fuzz_ddp: cause, msn(4), opt, seg_len(2), cap, ddp hdr(18), rr(28),
    # then one ULPDU
    rr = struct.pack('>IQIIQ', 1, 2, 3, 4, 5)
    for i, (name, ul) in enumerate(u.items()):
        write('ddp', 'ulpdu_' + name,
              bytes([i * 3]) + struct.pack('>I', i) + bytes([3 | (8 * (i & 1))]) +
              struct.pack('>H', len(ul)) + bytes([90]) +
              ddp_untagged(0x1)[:18] + rr + ul)
    for name, ul in {'bad_dv': bytes([0x42, 0x43]) + bytes(16),
                     'bad_rv': bytes([0x41, 0x83]) + bytes(16),
                     'tagged_send': bytes([0xc1, 0x43]) + bytes(16),
                     'short_read_req': ddp_untagged(0x1) + bytes(5),
                     'one_byte': b'\x41', 'empty': b''}.items():
        write('ddp', 'ulpdu_' + name,
              bytes([31]) + struct.pack('>I', 77) + bytes([1]) +
              struct.pack('>H', 20) + bytes([40]) +
              ddp_tagged(0x0) + bytes(4) + rr + ul)



# ------------------------------------------------------------------- RoCE

def ipv4(payload_len, proto=17, tos=0, ttl=64, ihl=5):
    opts = bytes(4 * (ihl - 5))
    h = bytearray(struct.pack('>BBHHHBBH4s4s', 0x40 | ihl, tos,
                              20 + len(opts) + payload_len, 0x1234, 0x4000,
                              ttl, proto, 0, bytes([192, 0, 2, 1]),
                              bytes([192, 0, 2, 2]))) + opts
    s = sum(struct.unpack('>%dH' % (len(h) // 2), h))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    h[10:12] = struct.pack('>H', ~s & 0xffff)
    return bytes(h)


def roce_packet(opcode, ext, payload, pad=None, psn=5, dqpn=0x11,
                tver=0, ihl=5):
    """IPv4 + UDP(4791) + BTH + ext + payload + pad + ICRC (IBTA A17.3.3:
    CRC-32 over 8 x 0xff, masked IPv4/UDP/BTH fields, the rest)."""
    import zlib
    if pad is None:
        pad = (4 - len(payload) % 4) % 4
    bth = struct.pack('>BBHI', opcode, (pad << 4) | tver, 0xffff,
                      dqpn & 0xffffff) + struct.pack('>I', psn & 0xffffff)
    body = bth + ext + payload + bytes(pad)
    udp = struct.pack('>HHHH', 0xc000, 4791, 8 + len(body) + 4, 0)
    ip = ipv4(len(udp) + len(body) + 4, ihl=ihl)
    m_ip = bytearray(ip)
    m_ip[1] = 0xff
    m_ip[8] = 0xff
    m_ip[10:12] = b'\xff\xff'
    m_udp = bytearray(udp)
    m_udp[6:8] = b'\xff\xff'
    m_bth = bytearray(body)
    m_bth[4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_bth))
    return ip + udp + body + struct.pack('<I', crc)


def gen_roce():
    reth = struct.pack('>QII', 0x10000, 0x77, 64)
    aeth = struct.pack('>I', 0x1f000003)
    atm = struct.pack('>QIQQ', 0x20000, 0x78, 5, 6)
    imm = struct.pack('>I', 0xdeadbeef)
    deth = struct.pack('>II', 0x11111111, 1)
    pkts = {
        'rc_send_only': (0x04, b'', b'hello'),
        'rc_send_only_empty': (0x04, b'', b''),
        'rc_send_first': (0x00, b'', bytes(256)),
        'rc_send_last_imm': (0x03, imm, b'abc'),
        'rc_send_only_inv': (0x17, struct.pack('>I', 0x99), b'x' * 9),
        'rc_write_first': (0x06, reth, bytes(range(64))),
        'rc_write_only_imm': (0x0b, reth + imm, b'w'),
        'rc_read_request': (0x0c, reth, b''),
        'rc_read_resp_only': (0x10, aeth, b'data'),
        'rc_read_resp_middle': (0x0e, b'', bytes(32)),
        'rc_ack': (0x11, aeth, b''),
        'rc_atomic_ack': (0x12, aeth + struct.pack('>Q', 42), b''),
        'rc_cmp_swap': (0x13, atm, b''),
        'rc_fetch_add': (0x14, atm, b''),
        'ud_send_only': (0x64, deth, b'datagram'),
        'ud_send_only_imm': (0x65, deth + imm, b''),
        'cnp': (0x81, bytes(16), b''),
    }
    for name, (op, ext, pl) in pkts.items():
        for opt in (0, 3):
            write('roce', '%s_%d' % (name, opt),
                  bytes([opt | 0x00]) + struct.pack('>I', 0x5eed + op) +
                  roce_packet(op, ext, pl))
    # edge cases, checked with the ICRC skipped
    write('roce', 'bad_tver', b'\x01' + struct.pack('>I', 1) +
          roce_packet(0x04, b'', b'', tver=1))
    write('roce', 'bad_pad', b'\x01' + struct.pack('>I', 2) +
          roce_packet(0x04, b'', b'abcd', pad=3))
    write('roce', 'unknown_opcode', b'\x01' + struct.pack('>I', 3) +
          roce_packet(0x1f, b'', b''))
    write('roce', 'ack_with_payload', b'\x01' + struct.pack('>I', 4) +
          roce_packet(0x11, aeth, b'abcd'))
    write('roce', 'ip_options', b'\x52' + struct.pack('>I', 5) +
          roce_packet(0x0a, reth, b'opt', ihl=7))
    write('roce', 'truncated', b'\x01' + struct.pack('>I', 6) +
          roce_packet(0x06, reth, b'')[:40])


# ----------------------------------------------------------------- config

def gen_config():
    inis = {
        'gateway': """[eal]
args = --log-level=*:error -m 256
[port.0]
vdev = net_tap0,iface=rnictap0
ip = 192.0.2.10/24
gateway = 192.0.2.1
mtu = 9000
mbufs = 8191
rx_desc = 1024
tx_desc = 1024
[workers]
count = 2
poll = busy
[gateway]
status_ms = 1000
""",
        'faults': """[port.1]
ring = fz.a
ip = 10.0.0.1/8
fault_seed = 42
rx_drop = 2.5
tx_dup = 1
rx_reorder = 2
tx_corrupt = 0.5
rx_delay = 10
rx_delay_us = 100
pcap = /tmp/x.pcapng
[port.2]
pci = 0000:01:00.0
ip = 10.1.0.1
""",
        'target': "[target.a]\nhost = 192.0.2.3\n[port.0]\nring = t.b\nip = 1.2.3.4/32\n",
        'bad_line': "[port.0]\nring = a.a\nthis is not ini\n",
        'bad_port_num': "[port.99]\nring = a.a\nip = 1.1.1.1\n",
        'twice': "[port.0]\nring = a.a\nip = 1.1.1.1\n[port.0]\nring = a.b\n",
        'unknown_key': "[workers]\ncount = 1\nspeed = 9\n",
        'comments': "; c\n# c\n[gateway]\nstatus_ms=0\n",
        'empty': "",
    }
    for name, text in inis.items():
        write('config', 'ini_' + name, bytes([2, 255]) + text.encode())
    write('config', 'ini_tiny_errbuf', bytes([0, 3]) + inis['bad_line'].encode())
    argvs = {
        'ring': ['--ring', 'r.a', '--ip', '192.0.2.1/24', '--mtu', '1500',
                 'rest', '--workers=2'],
        'vdev_faults': ['--vdev', 'net_null0', '--ip=10.0.0.2',
                        '--fault-drop', '1', '--pcap', 'x.pcapng',
                        '--busy-poll', '--unknown', 'left'],
        'no_port': ['--ip', '1.2.3.4'],
        'bad_ip': ['--ring', 'a.a', '--ip', '300.1.1.1/40'],
        'pci': ['--pci', '0000:00:01.0', '--ip', '10.0.0.1/16', '--'],
    }
    for name, args in argvs.items():
        write('config', 'args_' + name,
              bytes([1, 200]) + b'\0'.join(a.encode() for a in args))


# -------------------------------------------------------------------- TCP

def gen_tcp():
    ts = bytes([1, 1, 8, 10]) + struct.pack('>II', 0x01020304, 0x0a0b0c0d)
    seeds = {
        'syn_linux': (1, bytes([2, 4, 0x05, 0xb4, 4, 2]) + ts[2:] +
                      bytes([1, 3, 3, 7])),
        'syn_mss_only': (1, bytes([2, 4, 0x23, 0x28])),
        'ack_ts': (0, ts),
        'ack_sack3': (0, ts + bytes([1, 1, 5, 26]) +
                      struct.pack('>6I', 1, 2, 3, 4, 5, 6)),
        'ack_sack4': (0, bytes([1, 1, 5, 34]) +
                      struct.pack('>8I', *range(8))),
        'ws_too_big': (1, bytes([3, 3, 20, 0])),
        'eol_then_junk': (1, bytes([0, 99, 99])),
        'unknown_kind': (0, bytes([30, 6, 1, 2, 3, 4])),
        'len_past_end': (0, bytes([8, 12, 0, 0])),
        'len_one': (0, bytes([2, 1])),
        'sack_bad_len': (0, bytes([5, 11]) + bytes(9)),
        'mss_on_ack': (0, bytes([2, 4, 1, 0])),
        'long_list': (1, bytes([1]) * 60 + bytes([2, 4, 1, 0])),
        'build_all': (0xff, bytes(0) + struct.pack('>HBII', 1460, 7, 1, 2)),
    }
    for name, (flags, opts) in seeds.items():
        write('tcp', name, bytes([flags]) + opts)


# -------------------------------------------------------------------- net

def gen_net():
    us = bytes([192, 0, 2, 1])
    peer = bytes([192, 0, 2, 2])
    pmac = bytes([2, 0, 0, 0, 0, 0x22])
    bcast = b'\xff' * 6

    def eth(dst, typ, body):
        return dst + pmac + struct.pack('>H', typ) + body

    def frames(*fs):
        return b''.join(struct.pack('>H', len(f)) + f for f in fs)

    def ip(proto, l4):
        h = bytearray(ipv4(len(l4), proto=proto))
        h[12:16] = peer
        h[16:20] = us
        h[10:12] = b'\0\0'
        s = sum(struct.unpack('>10H', h))
        while s > 0xffff:
            s = (s & 0xffff) + (s >> 16)
        h[10:12] = struct.pack('>H', ~s & 0xffff)
        return bytes(h) + l4

    arp_req = eth(bcast, 0x0806, struct.pack('>HHBBH', 1, 0x0800, 6, 4, 1) +
                  pmac + peer + bytes(6) + us)
    arp_rep = eth(bcast, 0x0806, struct.pack('>HHBBH', 1, 0x0800, 6, 4, 2) +
                  pmac + peer + bytes(6) + us)
    ucast = bytes(6)  # fixed up with flag bit 1
    echo = eth(ucast, 0x0800, ip(1, struct.pack('>BBHHH', 8, 0, 0, 1, 1) +
                                 b'ping'))
    udp = eth(ucast, 0x0800, ip(17, struct.pack('>HHHH', 1234, 9999, 12, 0) +
                                b'data'))
    roce = eth(ucast, 0x0800, ip(17, struct.pack('>HHHH', 1234, 4791, 20, 0)
                                 + bytes([4, 0, 0xff, 0xff, 0, 0, 0, 1,
                                          0, 0, 0, 1])))
    syn_opts = bytes([2, 4, 5, 0xb4, 4, 2, 8, 10]) + bytes(8) + \
        bytes([1, 3, 3, 7])
    syn = eth(ucast, 0x0800, ip(6, struct.pack('>HHIIBBHHH', 40000, 80, 1000,
                                               0, (5 + 5) << 4, 0x02, 65535,
                                               0, 0) + syn_opts))
    ack = eth(ucast, 0x0800, ip(6, struct.pack('>HHIIBBHHH', 40000, 80, 1001,
                                               1, 5 << 4, 0x10, 65535, 0, 0)))
    rst = eth(ucast, 0x0800, ip(6, struct.pack('>HHIIBBHHH', 40000, 80, 1001,
                                               1, 5 << 4, 0x04, 0, 0, 0)))
    frag = bytearray(udp)
    frag[14 + 6] = 0x20
    seeds = {
        'arp': frames(arp_req, arp_rep),
        'icmp_echo': frames(arp_rep, echo),
        'udp': frames(arp_rep, udp, roce),
        'tcp_syn_ack_data': frames(arp_rep, syn, ack, rst),
        'fragment': frames(bytes(frag)),
        'runt': frames(b'\x01\x02', bytes(14)),
    }
    # IPv6 (flag bit 0 fixes the checksums, bit 1 aims the destination)
    peer6 = bytes([0x20, 1, 0x0d, 0xb8] + [0] * 11 + [2])
    us6 = bytes([0x20, 1, 0x0d, 0xb8] + [0] * 11 + [1])

    def ip6(nh, body, hops=64, ext=b''):
        return struct.pack('>IHBB', 6 << 28, len(ext) + len(body),
                           nh, hops) + peer6 + us6 + ext + body

    ns = eth(ucast, 0x86dd, ip6(58, struct.pack('>BBHI', 135, 0, 0, 0) + us6 +
                                bytes([1, 1]) + pmac, hops=255))
    na = eth(ucast, 0x86dd, ip6(58, struct.pack('>BBHI', 136, 0, 0, 0x60 << 24) +
                                peer6 + bytes([2, 1]) + pmac, hops=255))
    echo6 = eth(ucast, 0x86dd, ip6(58, struct.pack('>BBHHH', 128, 0, 0, 1, 1) +
                                   b'ping'))
    syn6 = eth(ucast, 0x86dd, ip6(6, struct.pack('>HHIIBBHHH', 40000, 80, 1000,
                                                 0, (5 + 5) << 4, 0x02, 65535,
                                                 0, 0) + syn_opts))
    ack6 = eth(ucast, 0x86dd, ip6(6, struct.pack('>HHIIBBHHH', 40000, 80, 1001,
                                                 1, 5 << 4, 0x10, 65535, 0, 0)))
    ext6 = eth(ucast, 0x86dd, ip6(0, struct.pack('>BBHHH', 128, 0, 0, 1, 1),
                                  ext=bytes([60, 0, 1, 4, 0, 0, 0, 0,
                                             44, 0, 0x1e, 4, 0, 0, 0, 0,
                                             58, 0, 0, 0, 0, 0, 0, 1])))
    seeds.update({
        'ipv6_nd_echo': frames(ns, na, echo6),
        'ipv6_tcp_syn_ack': frames(na, syn6, ack6),
        'ipv6_ext_headers': frames(ext6),
    })
    for name, body in seeds.items():
        write('net', name, bytes([3]) + body)


# ------------------------------------------------------------------ IB CM

def gen_ibcm():
    """The seven CM messages of scripts/gen_ibcm_vectors.py (packed from
    the IBTA tables there), then one of each refusal."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    '..', '..', 'scripts'))
    import gen_ibcm_vectors as v
    mads = {}
    for g in (v.req, v.mra, v.rej, v.rep, v.rtu, v.dreq, v.drep):
        name, attr, body, _, _ = g()
        mads[name] = v.mad(attr, body)
        write('ibcm', name.lower(), mads[name])
    rtu = mads['RTU']
    for name, off, val in (('base_version', 0, 2), ('class', 1, 4), ('class_version', 2, 1),
                           ('method_resp', 3, 0x83), ('attr_lap', 17, 0x19),
                           ('attr_sidr', 17, 0x17)):
        b = bytearray(rtu)
        b[off] = val
        write('ibcm', 'bad_' + name, b)
    rej = bytearray(mads['REJ'])
    rej[24 + 8] |= 0xc0
    write('ibcm', 'bad_rej_msg', rej)
    # the REQ with an IPv6 CMA header (IP version 6, [2001:db8::10] ->
    # [2001:db8::2]): the header sits at the start of the private data
    req6 = bytearray(mads['REQ'])
    cma = bytes(req6).find(bytes([0, 0x40]), 24)
    req6[cma + 1] = 0x60
    req6[cma + 4:cma + 20] = bytes.fromhex('20010db8' + '0' * 22 + '10')
    req6[cma + 20:cma + 36] = bytes.fromhex('20010db8' + '0' * 22 + '02')
    write('ibcm', 'req_ipv6', req6)
    write('ibcm', 'short', rtu[:255])
    write('ibcm', 'long', rtu + b'\0')
    write('ibcm', 'empty', b'')


if __name__ == '__main__':
    gen_iwarp()
    gen_roce()
    gen_ibcm()
    gen_config()
    gen_tcp()
    gen_net()
