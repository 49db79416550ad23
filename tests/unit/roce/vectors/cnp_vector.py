#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The CNP golden packet of test_roce_cnp.c, computed without rnic: IPv4
192.0.2.2 -> 192.0.2.1 (TOS 0xc0: DSCP 48, Not-ECT; DF; TTL 64), UDP
0xc123 -> 4791 without checksum, a CNP to QP 0xd2 (BTH 81 00 ff ff 40
00 00 d2 00 00 00 00, as in NVIDIA's "RoCEv2 CNP Packet Format Example"),
16 reserved zero bytes, and the ICRC: zlib's CRC-32 over 8 bytes of 0xff,
the IPv4 header with TOS, TTL and checksum all ones, the UDP header with
its checksum all ones, the BTH with byte 4 all ones and the rest, stored
least significant byte first (IBTA annex A17.3.3)."""
import struct
import zlib


def ipv4_checksum(h):
    s = sum(struct.unpack('!10H', h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


ip = bytearray(bytes.fromhex('45c0003c000040004011') + bytes(2) +
               bytes([192, 0, 2, 2, 192, 0, 2, 1]))
struct.pack_into('!H', ip, 10, ipv4_checksum(bytes(ip)))
udp = bytes.fromhex('c12312b700280000')
cnp = bytes.fromhex('8100ffff400000d200000000') + bytes(16)
masked = (b'\xff' * 8 + ip[:1] + b'\xff' + ip[2:8] + b'\xff' + ip[9:10] +
          b'\xff\xff' + ip[12:] + udp[:6] + b'\xff\xff' + cnp[:4] + b'\xff' +
          cnp[5:])
pkt = bytes(ip) + udp + cnp + struct.pack('<I', zlib.crc32(masked) & 0xffffffff)
for i in range(0, len(pkt), 12):
    print('\t' + ' '.join('0x%02x,' % b for b in pkt[i:i + 12]))
