"""MPA, DDP and RDMAP frames written by hand for the iWARP attackers
(atk_iwarp.py, atk_iwarp_markers.py): CRC32c, MPA requests, FPDUs, DDP
headers (RFC 5044, 5041, 5040, 6581)."""
import struct

_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xffffffff
    for x in b:
        c = _T[(c ^ x) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


def mpa_req(rev=2, flags=0x50, pd=None, pd_len=None, key=b'MPA ID Req Frame'):
    if pd is None:
        pd = (struct.pack('>HH', 1, 1) if rev == 2 else b'') + \
            b'RGW1' + bytes([1, 1, 0, 0]) + b't'.ljust(32, b'\x00')
    n = len(pd) if pd_len is None else pd_len
    return key + struct.pack('>BBH', flags, rev, n) + pd


def fpdu(ddp_rdmap, payload=b'', good_crc=True, ulpdu_len=None):
    """One FPDU: MPA length, DDP/RDMAP header and payload, pad, CRC32c
    (least significant byte first, as rnic, siw and iSCSI put it)."""
    ulpdu = ddp_rdmap + payload
    n = len(ulpdu) if ulpdu_len is None else ulpdu_len
    body = struct.pack('>H', n) + ulpdu
    body += b'\x00' * (-len(body) % 4)
    crc = crc32c(body)
    return body + struct.pack('<I', crc if good_crc else crc ^ 0xdeadbeef)


def untagged(opcode, qn, msn, mo=0):
    return struct.pack('>BBIIII', 0x41, 0x40 | opcode, 0, qn, msn, mo)


def tagged(opcode, stag, to):
    return struct.pack('>BBIQ', 0xc1, 0x40 | opcode, stag, to)
