#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Generate RoCEv2 ICRC reference vectors for rnic's unit tests.

The vectors must not be computed by rnic itself, so this script uses two
references that share no code with rnic:

  1. scapy's contrib RoCE module (scapy.contrib.roce, Debian package
     python3-scapy), which builds the packet and fills the ICRC field;
  2. an independent computation in this file: the RoCEv2 pseudo packet is
     masked here (8 bytes of 0xff, IPv4 TOS/TTL/checksum, UDP checksum and
     the BTH byte holding FECN/BECN/resv6 set to all ones) and run through a
     bit-at-a-time reflected CRC-32 (polynomial 0xEDB88320), not zlib.

The script refuses to write anything unless both agree for every packet.
Output: tests/unit/roce/vectors/icrc_vectors.h, one byte array per packet
running from the first byte of the IPv4 header to the last ICRC byte.

RoCEv2 over IPv6 (annex A17.4: traffic class, flow label and hop limit
masked to ones): scapy builds the packets but its ICRC does not cover IPv6,
so the two references there are (1) the masking done on scapy's own IPv6,
UDP and BTH fields of a copy of the packet, run through zlib's CRC-32, and
(2) this file's byte-offset masking and bitwise CRC-32; both must agree.
Output: tests/unit/roce/vectors/icrc6_vectors.h, from the first byte of the
IPv6 header.

Usage (from the repository root; Debian's scapy lives in the system python):
    /usr/bin/python3 scripts/gen_icrc_vectors.py
"""

import os
import random
import struct
import sys

import zlib

from scapy.compat import raw
from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Raw

ROCE_PORT = 4791
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "tests", "unit", "roce", "vectors", "icrc_vectors.h")
OUT6 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "tests", "unit", "roce", "vectors", "icrc6_vectors.h")


def bitwise_crc32(data):
    """Reflected CRC-32 (Ethernet), one bit at a time, init and xorout ~0."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def own_icrc(ip_bytes):
    """ICRC of an IPv4 RoCEv2 packet (ICRC bytes excluded), own masking."""
    buf = bytearray(ip_bytes)
    ihl = (buf[0] & 0x0F) * 4
    buf[1] = 0xFF                  # TOS: DSCP and ECN
    buf[8] = 0xFF                  # TTL
    buf[10:12] = b"\xff\xff"       # IPv4 header checksum
    buf[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    buf[ihl + 8 + 4] = 0xFF        # BTH: FECN, BECN, resv6
    crc = bitwise_crc32(b"\xff" * 8 + bytes(buf))
    return struct.pack("<I", crc)  # the wire carries it least significant first


def reth(va, rkey, dlen):
    return struct.pack("!QII", va, rkey, dlen)


def atmeth(va, rkey, swap_add, compare):
    return struct.pack("!QIQQ", va, rkey, swap_add, compare)


def immdt(imm):
    return struct.pack("!I", imm)


def ieth(rkey):
    return struct.pack("!I", rkey)


def deth(qkey, src_qp):
    return struct.pack("!II", qkey, src_qp & 0xFFFFFF)


def atmack(orig):
    return struct.pack("!Q", orig)


def payload(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def padded(data):
    """Payload plus the zero pad that rounds it to 4 bytes, and the count."""
    pad = (-len(data)) % 4
    return data + b"\x00" * pad, pad


def build(case, rng):
    """Build one packet from a case description; return its IPv4 bytes."""
    body, pad = padded(case.get("payload", b""))
    ip = IP(src=case.get("src", "192.0.2.10"), dst=case.get("dst", "192.0.2.2"),
            tos=case.get("tos", 0), ttl=case.get("ttl", 64),
            id=case.get("ip_id", 0), flags=case.get("ip_flags", "DF"))
    udp = UDP(sport=case.get("sport", 49152), dport=ROCE_PORT)
    if not case.get("udp_csum", False):
        udp.chksum = 0             # RoCEv2 senders normally leave it zero
    bth = BTH(opcode=case["opcode"], solicited=case.get("se", 0),
              migreq=case.get("mig", 0), padcount=pad,
              pkey=case.get("pkey", 0xFFFF), fecn=case.get("fecn", 0),
              becn=case.get("becn", 0), dqpn=case["dqpn"],
              ackreq=case.get("ackreq", 0), psn=case["psn"])
    if "aeth" in case:
        syn, msn = case["aeth"]
        pkt = ip / udp / bth / AETH(syndrome=syn, msn=msn) / \
            Raw(case.get("ext", b"") + body)
    else:
        pkt = ip / udp / bth / Raw(case.get("ext", b"") + body)
    return raw(pkt)


def cases(rng):
    """The packets: varied opcodes, lengths, pads, TOS, TTL and checksums."""
    return [
        dict(name="rc_send_only_empty", opcode=0x04, dqpn=0x000011, psn=0),
        dict(name="rc_send_only_pad3", opcode=0x04, dqpn=0x123456,
             psn=0x000100, tos=0x02, payload=payload(rng, 13), se=1),
        dict(name="rc_send_first_pmtu1024", opcode=0x00, dqpn=0xABCDEF,
             psn=0x7FFFFF, payload=payload(rng, 1024), sport=0xC0DE),
        dict(name="rc_send_middle_pmtu4096_ttl255", opcode=0x01,
             dqpn=0x000002, psn=0xFFFFFF, ttl=255, ip_id=0xBEEF,
             payload=payload(rng, 4096)),
        dict(name="rc_send_last_imm_pad1", opcode=0x03, dqpn=0x00FF00,
             psn=0x000001, ext=immdt(0xDEADBEEF), payload=payload(rng, 7),
             ackreq=1),
        dict(name="rc_write_first_dscp46_udpcsum", opcode=0x06,
             dqpn=0x654321, psn=0x00ABCD, tos=0xB8, ttl=1, udp_csum=True,
             ext=reth(0x00007F0012345678, 0x11223344, 8192),
             payload=payload(rng, 256)),
        dict(name="rc_write_only_imm_ce_fecn_becn", opcode=0x0B,
             dqpn=0x000ACE, psn=0x800000, tos=0x03, fecn=1, becn=1,
             ext=reth(0xFFFFFFFFFFFFF000, 0xCAFEF00D, 1) +
             immdt(0x01020304), payload=payload(rng, 1), ackreq=1),
        dict(name="rc_read_request", opcode=0x0C, dqpn=0x000100,
             psn=0x00FFFE, ackreq=1, pkey=0x8001,
             ext=reth(0x1000, 0x0000ABCD, 65536)),
        dict(name="rc_read_response_middle", opcode=0x0E, dqpn=0x000200,
             psn=0x00FFFF, payload=payload(rng, 256), ttl=2),
        dict(name="rc_read_response_last_pad2", opcode=0x0F, dqpn=0x000200,
             psn=0x010000, aeth=(0x1F, 0x000042), payload=payload(rng, 30)),
        dict(name="rc_ack_credits", opcode=0x11, dqpn=0x000300,
             psn=0x000010, aeth=(0x0A, 0x123456), tos=0x01),
        dict(name="rc_nak_psn_seq_err", opcode=0x11, dqpn=0x000300,
             psn=0x000011, aeth=(0x60, 0x000007), udp_csum=True),
        dict(name="rc_atomic_ack", opcode=0x12, dqpn=0x000400,
             psn=0x000020, aeth=(0x1F, 0x000003),
             ext=atmack(0x0123456789ABCDEF)),
        dict(name="rc_cmp_swap", opcode=0x13, dqpn=0x000400, psn=0x000021,
             ackreq=1, ext=atmeth(0x0000000000002008, 0x55AA55AA,
                                  0x1111111111111111, 0x2222222222222222)),
        dict(name="rc_fetch_add", opcode=0x14, dqpn=0x000400, psn=0x000022,
             ackreq=1, ext=atmeth(0x0000000000003000, 0x00000102,
                                  0x0000000000000001, 0)),
        dict(name="rc_send_only_inv_pad3", opcode=0x17, dqpn=0x000500,
             psn=0x000030, ext=ieth(0x00ABCD01), payload=payload(rng, 5),
             se=1, tos=0x60),
        dict(name="ud_send_only", opcode=0x64, dqpn=0x000001, psn=0x000040,
             ext=deth(0x80010000, 0x000001), payload=payload(rng, 256)),
        dict(name="ud_send_only_imm_pad2", opcode=0x65, dqpn=0x0000AB,
             psn=0x000041, ext=deth(0x11111111, 0x0000CD) + immdt(7),
             payload=payload(rng, 30), src="10.0.0.1", dst="10.0.0.2"),
    ]


def own_icrc6(ip_bytes):
    """ICRC of an IPv6 RoCEv2 packet (ICRC bytes excluded), own masking."""
    buf = bytearray(ip_bytes)
    buf[0] |= 0x0F                 # traffic class, high nibble
    buf[1:4] = b"\xff\xff\xff"     # traffic class low nibble, flow label
    buf[7] = 0xFF                  # hop limit
    buf[40 + 6:40 + 8] = b"\xff\xff"  # UDP checksum
    buf[40 + 8 + 4] = 0xFF         # BTH: FECN, BECN, resv6
    crc = bitwise_crc32(b"\xff" * 8 + bytes(buf))
    return struct.pack("<I", crc)


def scapy_icrc6(pkt):
    """The same masking done on scapy's fields, CRC by zlib."""
    ps = pkt.copy()
    ps[IPv6].tc = 0xFF
    ps[IPv6].fl = 0xFFFFF
    ps[IPv6].hlim = 0xFF
    ps[UDP].chksum = 0xFFFF
    ps[BTH].fecn = 1
    ps[BTH].becn = 1
    ps[BTH].resv6 = 0xFF
    ps[BTH].icrc = 0
    crc = zlib.crc32(b"\xff" * 8 + raw(ps)[:-4]) & 0xFFFFFFFF
    return struct.pack("<I", crc)


def build6(case):
    """One IPv6 RoCEv2 packet (ICRC left 0 for the caller); scapy object."""
    body, pad = padded(case.get("payload", b""))
    ip = IPv6(src=case.get("src", "2001:db8::10"), dst=case.get("dst", "2001:db8::2"),
              tc=case.get("tc", 0), fl=case.get("fl", 0), hlim=case.get("hlim", 64))
    udp = UDP(sport=case.get("sport", 49152), dport=ROCE_PORT)
    if not case.get("udp_csum", False):
        udp.chksum = 0
    bth = BTH(opcode=case["opcode"], solicited=case.get("se", 0), padcount=pad,
              pkey=case.get("pkey", 0xFFFF), fecn=case.get("fecn", 0),
              becn=case.get("becn", 0), dqpn=case["dqpn"],
              ackreq=case.get("ackreq", 0), psn=case["psn"], icrc=0)
    if "aeth" in case:
        syn, msn = case["aeth"]
        return ip / udp / bth / AETH(syndrome=syn, msn=msn) / \
            Raw(case.get("ext", b"") + body)
    return ip / udp / bth / Raw(case.get("ext", b"") + body)


def cases6(rng):
    """IPv6 packets: traffic class, flow label and hop limit varied."""
    return [
        dict(name="v6_rc_send_only_empty", opcode=0x04, dqpn=0x000011, psn=0),
        dict(name="v6_rc_send_only_tc_fl_pad3", opcode=0x04, dqpn=0x123456,
             psn=0x000100, tc=0xB9, fl=0xABCDE, payload=payload(rng, 13), se=1),
        dict(name="v6_rc_write_first_hlim1_udpcsum", opcode=0x06, dqpn=0x654321,
             psn=0x00ABCD, hlim=1, udp_csum=True,
             ext=reth(0x00007F0012345678, 0x11223344, 8192), payload=payload(rng, 256)),
        dict(name="v6_rc_send_middle_1024_fecn", opcode=0x01, dqpn=0x000002,
             psn=0xFFFFFF, fecn=1, becn=1, tc=0x03, fl=0xFFFFF, hlim=255,
             payload=payload(rng, 1024), src="fe80::5054:ff:fe12:3456",
             dst="fe80::ff:fe00:1"),
        dict(name="v6_rc_read_response_last_pad2", opcode=0x0F, dqpn=0x000200,
             psn=0x010000, aeth=(0x1F, 0x000042), payload=payload(rng, 30), fl=1),
        dict(name="v6_ud_send_only_imm", opcode=0x65, dqpn=0x0000AB, psn=0x000041,
             ext=deth(0x11111111, 0x0000CD) + immdt(7), payload=payload(rng, 30)),
    ]


def write6():
    rng = random.Random(4792)
    out = ["/* SPDX-License-Identifier: BSD-3-Clause */", "/*",
           " * RoCEv2 over IPv6 ICRC reference vectors. GENERATED by",
           " * scripts/gen_icrc_vectors.py: packets built by scapy, the ICRC by",
           " * two references that agree (scapy-field masking with zlib's CRC-32,",
           " * the script's own byte masking with a bitwise CRC-32); do not edit.",
           " * Each packet runs from the IPv6 header to the last ICRC byte.", " */",
           "#ifndef RNIC_TEST_ROCE_ICRC6_VECTORS_H", "#define RNIC_TEST_ROCE_ICRC6_VECTORS_H",
           "", "#include <stdint.h>", "",
           "struct icrc6_vector {", "\tconst char *name;", "\tuint8_t opcode;",
           "\tuint16_t len;         /* 40 + IPv6 payload length, ICRC included */",
           "\tconst uint8_t *pkt;",
           "\tuint8_t icrc[4];      /* the last 4 bytes of pkt, wire order */", "};", ""]
    table = []
    for i, case in enumerate(cases6(rng)):
        pkt = build6(case)
        a = scapy_icrc6(pkt)
        data = raw(pkt)
        b = own_icrc6(data[:-4])
        if a != b:
            sys.exit("%s: scapy-field ICRC %s != own ICRC %s" % (case["name"], a.hex(), b.hex()))
        data = data[:-4] + a
        plen = struct.unpack("!H", data[4:6])[0]
        if plen + 40 != len(data):
            sys.exit("%s: IPv6 payload length %d + 40 != %d" % (case["name"], plen, len(data)))
        out.append("/* %s: opcode 0x%02x, %d bytes */" % (case["name"], case["opcode"], len(data)))
        out.append("static const uint8_t icrc6_vec_%d[] = {" % i)
        out.append(c_bytes(data))
        out.append("};")
        out.append("")
        table.append("\t{ \"%s\", 0x%02x, %d, icrc6_vec_%d, { %s } }," %
                     (case["name"], case["opcode"], len(data), i,
                      ", ".join("0x%02x" % x for x in a)))
    out.append("static const struct icrc6_vector icrc6_vectors[] = {")
    out.extend(table)
    out += ["};", "", "#endif"]
    with open(OUT6, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %d vectors to %s" % (len(table), os.path.normpath(OUT6)))


def c_bytes(data, indent="\t"):
    lines = []
    for i in range(0, len(data), 12):
        chunk = ", ".join("0x%02x" % b for b in data[i:i + 12])
        lines.append(indent + chunk + ",")
    return "\n".join(lines)


def main():
    rng = random.Random(4791)
    out = []
    out.append("/* SPDX-License-Identifier: BSD-3-Clause */")
    out.append("/*")
    out.append(" * RoCEv2 ICRC reference vectors. GENERATED by")
    out.append(" * scripts/gen_icrc_vectors.py with scapy.contrib.roce and")
    out.append(" * cross-checked by the script's own bitwise CRC-32; do not edit.")
    out.append(" * Each packet runs from the IPv4 header to the last ICRC byte.")
    out.append(" */")
    out.append("#ifndef RNIC_TEST_ROCE_ICRC_VECTORS_H")
    out.append("#define RNIC_TEST_ROCE_ICRC_VECTORS_H")
    out.append("")
    out.append("#include <stdint.h>")
    out.append("")
    out.append("struct icrc_vector {")
    out.append("\tconst char *name;")
    out.append("\tuint8_t opcode;")
    out.append("\tuint8_t pad;          /* BTH pad count */")
    out.append("\tuint16_t len;         /* IPv4 total length, ICRC included */")
    out.append("\tconst uint8_t *pkt;")
    out.append("\tuint8_t icrc[4];      /* the last 4 bytes of pkt, wire order */")
    out.append("};")
    out.append("")
    table = []
    for i, case in enumerate(cases(rng)):
        pkt = build(case, rng)
        scapy_icrc = pkt[-4:]
        mine = own_icrc(pkt[:-4])
        if scapy_icrc != mine:
            sys.exit("%s: scapy ICRC %s != own ICRC %s" %
                     (case["name"], scapy_icrc.hex(), mine.hex()))
        total = struct.unpack("!H", pkt[2:4])[0]
        if total != len(pkt):
            sys.exit("%s: IPv4 total length %d != %d" %
                     (case["name"], total, len(pkt)))
        pad = (pkt[20 + 8 + 1] >> 4) & 3
        out.append("/* %s: opcode 0x%02x, %d bytes */" %
                   (case["name"], case["opcode"], len(pkt)))
        out.append("static const uint8_t icrc_vec_%d[] = {" % i)
        out.append(c_bytes(pkt))
        out.append("};")
        out.append("")
        table.append("\t{ \"%s\", 0x%02x, %d, %d, icrc_vec_%d, { %s } }," %
                     (case["name"], case["opcode"], pad, len(pkt), i,
                      ", ".join("0x%02x" % b for b in scapy_icrc)))
    out.append("static const struct icrc_vector icrc_vectors[] = {")
    out.extend(table)
    out.append("};")
    out.append("")
    out.append("#endif")
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %d vectors to %s" % (len(table), os.path.normpath(OUT)))
    write6()


if __name__ == "__main__":
    main()
