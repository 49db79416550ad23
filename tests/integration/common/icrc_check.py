#!/usr/bin/env python3
"""Check the ICRC of every RoCEv2 frame (UDP 4791, IPv4 or IPv6) of a
classic pcap file (editcap -F pcap turns a pcapng into one), independently
of rnic's code: CRC-32 over 8 bytes of 1s (the missing LRH), the IP header
with its variant fields set to 1s (IPv4: TOS, TTL, header checksum; IPv6:
traffic class, flow label, hop limit: IBA annex A17.4.3), the UDP header
with the checksum set to 1s, the BTH with byte 4 (FECN, BECN, resv6) set to
1s, then the rest of the transport packet, ICRC excluded; the wire carries
the CRC least significant byte first. Wireshark 4.0 shows the ICRC but does
not check it.

Prints "icrc: N good, M bad, K IPv6" and exits 1 when any is bad or none
was found."""
import struct
import sys
import zlib


def frames(path):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + 'IIII', rec)
            yield f.read(incl)


def icrc_of(l3):
    """(computed, carried, is_ipv6) for the packet at l3, or None."""
    ver = l3[0] >> 4
    if ver == 4:
        ihl = (l3[0] & 0x0f) * 4
        if l3[9] != 17:
            return None
        total = struct.unpack('>H', l3[2:4])[0]
        buf = bytearray(l3[:total])
        buf[1] = 0xff
        buf[8] = 0xff
        buf[10:12] = b'\xff\xff'
        l4 = ihl
    elif ver == 6:
        if l3[6] != 17:
            return None
        total = 40 + struct.unpack('>H', l3[4:6])[0]
        buf = bytearray(l3[:total])
        buf[0] |= 0x0f
        buf[1:4] = b'\xff\xff\xff'
        buf[7] = 0xff
        l4 = 40
    else:
        return None
    if struct.unpack('>H', bytes(buf[l4 + 2:l4 + 4]))[0] != 4791:
        return None
    buf[l4 + 6:l4 + 8] = b'\xff\xff'
    buf[l4 + 8 + 4] = 0xff
    crc = zlib.crc32(b'\xff' * 8 + bytes(buf[:-4])) & 0xffffffff
    return crc, struct.unpack('<I', bytes(buf[-4:]))[0], ver == 6


def main():
    good = bad = v6 = 0
    for fr in frames(sys.argv[1]):
        if len(fr) < 14:
            continue
        et = struct.unpack('>H', fr[12:14])[0]
        if et not in (0x0800, 0x86dd):
            continue
        r = icrc_of(fr[14:])
        if r is None:
            continue
        if r[0] == r[1]:
            good += 1
        else:
            bad += 1
        v6 += r[2]
    print(f'icrc: {good} good, {bad} bad, {v6} IPv6')
    sys.exit(1 if bad or not good else 0)


if __name__ == '__main__':
    main()
