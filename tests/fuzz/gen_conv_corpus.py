#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpora of the conversation harnesses: corpus/conv_roce/ and
corpus/conv_iwarp/ (run from anywhere; rewrites both directories).

Each seed is a clean conversation in the harness's input layout (see the
header comments of fuzz_conv_roce.c and fuzz_conv_iwarp.c): the set-up
fields, then actions, each a kind byte and its fields in the order the
harness reads them. With every "mutate" field 0 a seed is what a correct
peer sends: the Read completes with the peer's bytes, Writes and Sends land
in the granted regions. Keep in step with the harnesses' readers.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u16(v):
    return struct.pack(">H", v & 0xffff)


def u32(v):
    return struct.pack(">I", v & 0xffffffff)


def write(name, seeds):
    d = os.path.join(HERE, "corpus", name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    for sname, data in seeds.items():
        with open(os.path.join(d, sname), "wb") as f:
            f.write(data)


# --- RoCE: flags, rq_psn, sq_psn, Read length - 1 (mod 4096), Read offset
def roce_head(flags=0, rq=0x10, sq=0x20, rd=2048, off=0):
    return bytes([flags]) + u32(rq) + u32(sq) + u16(rd) + bytes([off])


def r_read_resp(k, sub=0):
    return bytes([4, sub, 0, 0, k])


def r_write(va_off, plen, rsel=0, sub=0, dma_len=None):
    """dma_len: the RETH length when it is not plen (sub bit 6)"""
    if dma_len is not None:
        return bytes([0, sub | 0x40, 0, 0, rsel]) + u16(va_off) + u16(plen) + u32(dma_len)
    return bytes([0, sub, 0, 0, rsel]) + u16(va_off) + u16(plen)


def r_send(plen, sub=0):
    return bytes([1, sub, 0, 0]) + u16(plen)


def r_read_req(va_off, ln, rsel=0):
    return bytes([2, 0, 0, 0, rsel]) + u16(va_off) + u16(ln)


def r_atomic(va_off, a, b, fetch_add=False):
    return bytes([3, 1 if fetch_add else 0, 0, 0, 0]) + u16(va_off) + u32(a) + u32(b)


def r_ack(sub=0):
    return bytes([5, sub, 0, 0])


def r_run(n):
    return bytes([7, n])


roce = {
    "clean_read": roce_head() + r_read_resp(0) + r_read_resp(1) + r_read_resp(2) + r_run(8),
    "write_send_read": roce_head() + r_write(0x10, 64) + r_send(100) +
    r_read_req(0, 2000) + r_atomic(0x08, 0, 5) + r_atomic(0x10, 7, 0, True) +
    r_read_resp(0) + r_read_resp(1) + r_read_resp(2) + r_run(8),
    "psn_wrap": roce_head(rq=0xfffffe, sq=0xffffff, rd=99) + r_write(0, 1024) +
    r_write(0x400, 1024) + r_write(0x800, 1024) + r_read_resp(0) + r_run(8),
    "app_write_acked": roce_head(flags=1, rd=4095) + r_run(4) + r_ack() +
    r_read_resp(0) + r_read_resp(1) + r_read_resp(2) + r_read_resp(3) + r_run(8),
    # a Read Response LAST where a MIDDLE belongs: BAD_RESP_ERR since 294d3dd
    # (on the old code the Read waited for the rest, its bytes right)
    "read_response_last_early": roce_head() + r_read_resp(0) +
    bytes([4, 0x48, 0, 0, 1, 0x1f]) + r_run(8),
    # flags bit 1: 1 ms local ACK timeout; 2 ms of real time before the
    # ACK and the Read's responses: the Write and the Read Request go again
    "ack_timeout_retransmit": roce_head(flags=3, rd=1000) + bytes([7, 0x80 | 40]) +
    r_ack() + r_read_resp(0) + r_run(8),
    "multi_packet_write": roce_head(rd=0) + r_write(0, 1024, sub=1, dma_len=2148) +
    r_write(0, 1024, sub=2) + r_write(0, 100, sub=3) + r_send(1024, sub=1) +
    r_send(10, sub=3) + r_read_resp(0) + r_run(8),
}


# --- iWARP: flags, ISN, Read length - 1 (mod 4096), Read offset; then MSS
# (flags 0x10) and window scale (flags 0x02) for the SYN
def iw_head(flags=0, isn=1000, rd=2048, off=0, mss=None, ws=None):
    b = bytes([flags]) + u32(isn) + u16(rd) + bytes([off])
    if flags & 0x10:
        b += u16(mss)
    if flags & 0x02:
        b += bytes([ws])
    return b


def i_read_resp(k, mode=0, cut=None):
    b = bytes([2, 0, mode, 0, 0, k])
    return b + (bytes([cut]) if cut is not None else b"")


def i_write(to_off, plen, ssel=0, sub=0, mode=0):
    return bytes([0, sub, mode, 0, 0, ssel]) + u16(to_off) + u16(plen)


def i_send(plen, sub=0):
    return bytes([3, sub, 0, 0, 0]) + u16(plen)


def i_read_req(to_off, size, ssel=0):
    return bytes([1, 0, 0, 0, 0, ssel]) + u16(to_off) + u16(size)


def i_sack(left, ln):
    return bytes([6, 0x04]) + u16(left) + u16(ln)


def i_run(n):
    return bytes([8, n])


iwarp = {
    "clean_read": iw_head() + i_read_resp(0) + i_read_resp(1) + i_read_resp(2) + i_run(8),
    "write_send_read": iw_head() + i_write(0x10, 64) + i_send(100) +
    i_read_req(0, 2000) + i_read_resp(0) + i_read_resp(1) + i_read_resp(2) + i_run(8),
    "syn_options": iw_head(flags=0x1e, mss=1200, ws=7) + i_read_resp(0) +
    i_read_resp(1) + i_read_resp(2) + i_sack(0, 10) + i_run(8),
    "split_reorder_dup": iw_head() + i_read_resp(0, mode=1, cut=7) +
    i_read_resp(1, mode=2, cut=100) + i_read_resp(2, mode=3) + i_run(8),
    # 6.35 ms of real time before the peer acknowledges: TCP's RTO (5 ms
    # minimum) sends the Read Request and the Write again
    "rto_wait": iw_head(flags=1, rd=500) + bytes([8, 0xff]) + i_read_resp(0) + i_run(8),
    "app_write_fin": iw_head(flags=1, rd=100) + i_run(4) + i_read_resp(0) +
    i_write(0, 1000, mode=1) + bytes([7, 0]) + i_run(8),
}

write("conv_roce", roce)
write("conv_iwarp", iwarp)
