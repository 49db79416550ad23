#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reference IB CM MADs for tests/unit/roce/test_roce_ibcm.c.

Each of the seven CM messages rnic speaks (REQ, MRA, REJ, REP, RTU, DREQ,
DREP) is packed here byte by byte from the IBTA vol. 1 chapter 12 tables
(offsets counted from the start of the 256-byte MAD; the message starts at
24), with distinctive values in every field, independently of rnic's C
structs. Then each is wrapped in a RoCEv2 UD packet to QP1 and decoded with
Wireshark's InfiniBand dissector (tshark): every field tshark names must
read back as packed, and nothing may be malformed. Only when both agree is
tests/unit/roce/vectors/ibcm_vectors.h written: the MAD bytes and the field
values as a struct rnic_ibcm_msg initializer.

Usage: scripts/gen_ibcm_vectors.py [OUT.h]   (needs tshark)
"""
import os
import struct
import subprocess
import sys
import tempfile

TID = 0x0102030405060708
A_ID, B_ID = 0x11223344, 0x55667788
GUID_A, GUID_B = 0x0a0b0c0d0e0f1011, 0x2122232425262728
IP_A, IP_B = bytes([192, 0, 2, 10]), bytes([192, 0, 2, 2])


def gid4(ip):
    return bytes(10) + b"\xff\xff" + ip


def mad(attr, body):
    """Common MAD header (IBTA 13.4.2): base 1, class CM 7, version 2, Send."""
    assert len(body) == 232, len(body)
    hdr = struct.pack(">BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0, TID, attr, 0, 0)
    return hdr + body


def put(buf, off, data):
    buf[off - 24:off - 24 + len(data)] = data


def cma_hdr():
    # librdmacm struct cma_hdr: version 0, IP version 4 in the high nibble,
    # source port, source and destination addresses (IPv4 in the last 4)
    return struct.pack(">BBH", 0, 0x40, 0xc123) + bytes(12) + IP_A + bytes(12) + IP_B


def req():
    f = dict(local_id=A_ID, service_id=0x0000000001060000 | 7190, ca_guid=GUID_A,
             qkey=0x01234567, qpn=0x123456, rres=5, idepth=6, remote_cm_timeout=20,
             ts_type=0, e2e_flow=1, psn=0xabcdef, local_cm_timeout=19, retry_cnt=7,
             pkey=0xffff, path_mtu=3, rnr_retry=6, max_cm_retries=15, srq=1,
             local_lid=0xffff, remote_lid=0xfffe, flow_label=0x12345, rate=3,
             tclass=0x20, hop_limit=64, sl=5, subnet_local=1, ack_timeout=18)
    b = bytearray(232)
    put(b, 24, struct.pack(">I", f["local_id"]))
    put(b, 32, struct.pack(">Q", f["service_id"]))
    put(b, 40, struct.pack(">Q", f["ca_guid"]))
    put(b, 52, struct.pack(">I", f["qkey"]))
    put(b, 56, struct.pack(">I", f["qpn"] << 8 | f["rres"]))
    put(b, 60, struct.pack(">I", 0 << 8 | f["idepth"]))
    put(b, 64, struct.pack(">I", f["remote_cm_timeout"] << 3 | f["ts_type"] << 1 | f["e2e_flow"]))
    put(b, 68, struct.pack(">I", f["psn"] << 8 | f["local_cm_timeout"] << 3 | f["retry_cnt"]))
    put(b, 72, struct.pack(">H", f["pkey"]))
    put(b, 74, bytes([f["path_mtu"] << 4 | f["rnr_retry"], f["max_cm_retries"] << 4 | f["srq"] << 3]))
    put(b, 76, struct.pack(">HH", f["local_lid"], f["remote_lid"]))
    put(b, 80, gid4(IP_A) + gid4(IP_B))
    put(b, 112, struct.pack(">I", f["flow_label"] << 12 | f["rate"]))
    put(b, 116, bytes([f["tclass"], f["hop_limit"], f["sl"] << 4 | f["subnet_local"] << 3,
                       f["ack_timeout"] << 3]))
    pd = cma_hdr() + b"hello from A"
    put(b, 164, pd)
    f["local_gid"], f["remote_gid"] = gid4(IP_A), gid4(IP_B)
    f["pdata"] = pd
    checks = {
        "infiniband.cm.req.serviceid": "0x0000000001061c16",
        "infiniband.cm.req.localcaguid": "0x0a0b0c0d0e0f1011",
        "infiniband.cm.req.localqkey": "0x01234567",
        "infiniband.cm.req.localqpn": "0x00123456",
        "infiniband.cm.req.responderres": "0x05",
        "infiniband.cm.req.initdepth": "0x06",
        "infiniband.cm.req.remoteresptout": "0x14",
        "infiniband.cm.req.startpsn": "0x00abcdef",
        "infiniband.cm.req.localresptout": "0x13",
        "infiniband.cm.req.retrcount": "0x07",
        "infiniband.cm.req.pkey": "0xffff",
        "infiniband.cm.req.pppmtu": "0x03",
        "infiniband.cm.req.rnrretrcount": "0x06",
        "infiniband.cm.req.maxcmretr": "0x0f",
        "infiniband.cm.req.srq": "0x01",
        "infiniband.cm.req.prim_locallid": "65535",
        "infiniband.cm.req.prim_remotelid": "65534",
        "infiniband.cm.req.prim_localgid_ipv4": "192.0.2.10",
        "infiniband.cm.req.prim_remotegid_ipv4": "192.0.2.2",
        # not checked: Wireshark 4.0 decodes the word at 88 (Flow Label 31:12,
        # Packet Rate 5:0) as 16-bit fields at the wrong bits (it shows the
        # flow label 0x12345 as 0x123 and the rate 3 as 0x12); Linux's
        # ibta_vol1_c12.h (CM_REQ_PRIMARY_FLOW_LABEL, _PACKET_RATE) is the
        # reference for those two
        "infiniband.cm.req.prim_tfcclass": "0x20",
        "infiniband.cm.req.prim_hoplim": "0x40",
        "infiniband.cm.req.prim_sl": "0x05",
        "infiniband.cm.req.prim_subnetlocal": "0x01",
        "infiniband.cm.req.prim_localacktout": "0x12",
        "infiniband.cm.req.ip_cm.ipv": "0x04",
        "infiniband.cm.req.ip_cm.sport": "49443",
        "infiniband.cm.req.ip_cm.sip4": "192.0.2.10",
        "infiniband.cm.req.ip_cm.dip4": "192.0.2.2",
    }
    return "REQ", 0x0010, bytes(b), f, checks


def mra():
    f = dict(local_id=B_ID, remote_id=A_ID, msg=1, service_timeout=21)
    b = bytearray(232)
    put(b, 24, struct.pack(">II", f["local_id"], f["remote_id"]))
    put(b, 32, bytes([f["msg"] << 6, f["service_timeout"] << 3]))
    pd = b"patience"
    put(b, 34, pd)
    f["pdata"] = pd
    return "MRA", 0x0011, bytes(b), f, {}


def rej():
    f = dict(local_id=B_ID, remote_id=A_ID, msg=0, ari_len=3, reason=28)
    b = bytearray(232)
    put(b, 24, struct.pack(">II", f["local_id"], f["remote_id"]))
    put(b, 32, bytes([f["msg"] << 6, f["ari_len"] << 1]) + struct.pack(">H", f["reason"]))
    put(b, 36, b"\x01\x02\x03")
    pd = b"rejected: no room"
    put(b, 108, pd)
    f["ari"] = b"\x01\x02\x03"
    f["pdata"] = pd
    checks = {
        "infiniband.cm.rej.localcommid": "0x55667788",
        "infiniband.cm.rej.remotecommid": "0x11223344",
        "infiniband.cm.rej.msgrej": "0x00",
        "infiniband.cm.rej.rejinfolen": "0x03",
        "infiniband.cm.rej.reason": "28",
    }
    return "REJ", 0x0012, bytes(b), f, checks


def rep():
    f = dict(local_id=B_ID, remote_id=A_ID, qkey=0x7654321, qpn=0x654321, psn=0x0fedcb,
             rres=1, idepth=2, target_ack_delay=15, failover=1, e2e_flow=1, rnr_retry=7,
             srq=1, ca_guid=GUID_B)
    b = bytearray(232)
    put(b, 24, struct.pack(">III", f["local_id"], f["remote_id"], f["qkey"]))
    put(b, 36, struct.pack(">III", f["qpn"] << 8, 0, f["psn"] << 8))
    put(b, 48, bytes([f["rres"], f["idepth"],
                      f["target_ack_delay"] << 3 | f["failover"] << 1 | f["e2e_flow"],
                      f["rnr_retry"] << 5 | f["srq"] << 4]))
    put(b, 52, struct.pack(">Q", f["ca_guid"]))
    pd = b"accept private data from B"
    put(b, 60, pd)
    f["pdata"] = pd
    checks = {
        "infiniband.cm.rep.remotecommid": "0x11223344",
        "infiniband.cm.rep.localqkey": "0x07654321",
        "infiniband.cm.rep.localqpn": "0x00654321",
        "infiniband.cm.rep.startpsn": "0x000fedcb",
        "infiniband.cm.rep.respres": "0x01",
        "infiniband.cm.rep.initdepth": "0x02",
        "infiniband.cm.rep.tgtackdelay": "0x0f",
        "infiniband.cm.rep.failoveracc": "0x01",
        "infiniband.cm.rep.e2eflowctrl": "0x01",
        "infiniband.cm.rep.rnrretrcount": "0x07",
        "infiniband.cm.rep.srq": "0x01",
        "infiniband.cm.rep.localcaguid": "0x2122232425262728",
    }
    return "REP", 0x0013, bytes(b), f, checks


def rtu():
    f = dict(local_id=A_ID, remote_id=B_ID)
    b = bytearray(232)
    put(b, 24, struct.pack(">II", f["local_id"], f["remote_id"]))
    pd = b"ready"
    put(b, 32, pd)
    f["pdata"] = pd
    checks = {"infiniband.cm.rtu.localcommid": "0x11223344",
              "infiniband.cm.rtu.remotecommid": "0x55667788"}
    return "RTU", 0x0014, bytes(b), f, checks


def dreq():
    f = dict(local_id=A_ID, remote_id=B_ID, qpn=0x654321)
    b = bytearray(232)
    put(b, 24, struct.pack(">III", f["local_id"], f["remote_id"], f["qpn"] << 8))
    pd = b"bye"
    put(b, 36, pd)
    f["pdata"] = pd
    checks = {"infiniband.cm.dreq.localcommid": "0x11223344",
              "infiniband.cm.dreq.remotecommid": "0x55667788"}
    return "DREQ", 0x0015, bytes(b), f, checks


def drep():
    f = dict(local_id=B_ID, remote_id=A_ID)
    b = bytearray(232)
    put(b, 24, struct.pack(">II", f["local_id"], f["remote_id"]))
    pd = b"done"
    put(b, 32, pd)
    f["pdata"] = pd
    checks = {"infiniband.cm.drsp.localcommid": "0x55667788",
              "infiniband.cm.drsp.remotecommid": "0x11223344"}
    return "DREP", 0x0016, bytes(b), f, checks


def ipv4_csum(h):
    s = sum(struct.unpack(">10H", h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(m):
    """Ethernet/IPv4/UDP 4791/BTH (UD SEND ONLY to QP1)/DETH/MAD/ICRC (0)."""
    bth = struct.pack(">BBHII", 0x64, 0, 0xffff, 1, 7)
    deth = struct.pack(">II", 0x80010000, 1)
    pay = bth + deth + m + bytes(4)
    udp = struct.pack(">HHHH", 0xc001, 4791, 8 + len(pay), 0) + pay
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17,
                               0, IP_A, IP_B))
    ip[10:12] = struct.pack(">H", ipv4_csum(bytes(ip)))
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + bytes(ip) + udp


def tshark_fields(path, fields):
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return out.rstrip("\n").split("|")


def norm(v):
    """A number however tshark prints it (hex or decimal), else the text."""
    try:
        return int(v, 0)
    except ValueError:
        return v.lower()


def check(name, m, checks):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.pcap")
        fr = frame(m)
        with open(path, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)
        v = subprocess.run(["tshark", "-r", path, "-V"], capture_output=True, text=True).stdout
        if "Malformed" in v or "InfiniBand" not in v:
            sys.exit(f"{name}: tshark does not decode it cleanly:\n{v}")
        fields = ["infiniband.mad.mgmtclass", "infiniband.mad.classversion",
                  "infiniband.mad.method", "infiniband.mad.attributeid",
                  "infiniband.mad.transactionid"] + list(checks)
        got = tshark_fields(path, fields)
        want = ["0x07", "0x02", "0x03", None, "0x0102030405060708"] + list(checks.values())
        for f, g, w in zip(fields, got, want):
            if w is not None and norm(g) != norm(w):
                sys.exit(f"{name}: tshark reads {f} = {g!r}, packed {w!r}")
        return len(checks) + 4


def c_bytes(b):
    lines = []
    for i in range(0, len(b), 12):
        lines.append("\t\t" + " ".join(f"0x{x:02x}," for x in b[i:i + 12]))
    return "\n".join(lines)


def c_init(attr, f):
    out = [f".attr = 0x{attr:04x}", f".tid = 0x{TID:016x}ull"]
    for k, v in f.items():
        if k in ("pdata", "local_gid", "remote_gid", "ari"):
            continue
        out.append(f".{k} = 0x{v:x}" + ("ull" if v > 0xffffffff else ""))
    for k in ("local_gid", "remote_gid", "ari"):
        if k in f:
            out.append(f".{k} = {{ " + ", ".join(f"0x{x:02x}" for x in f[k]) + " }")
    if k == "ari":
        pass
    pd = f["pdata"]
    out.append(f".pdata_len = {len(pd)}")
    out.append(".pdata = { " + ", ".join(f"0x{x:02x}" for x in pd) + " }")
    return ",\n\t\t  ".join(out)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "unit", "roce", "vectors", "ibcm_vectors.h")
    vecs = [g() for g in (req, mra, rej, rep, rtu, dreq, drep)]
    n = 0
    for name, attr, body, f, checks in vecs:
        n += check(name, mad(attr, body), checks)
    with open(out, "w") as o:
        o.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        o.write("/* Generated by scripts/gen_ibcm_vectors.py: IB CM MADs packed from the IBTA\n"
                f" * tables and read back by tshark ({n} fields checked). Do not edit. */\n")
        o.write("struct ibcm_vector {\n\tconst char *name;\n\tuint8_t mad[256];\n"
                "\tstruct rnic_ibcm_msg msg;   /* what the MAD says (pdata: the bytes sent) */\n};\n\n")
        o.write("static const struct ibcm_vector ibcm_vectors[] = {\n")
        for name, attr, body, f, checks in vecs:
            o.write(f"\t{{ \"{name}\",\n\t  {{\n{c_bytes(mad(attr, body))}\n\t  }},\n")
            o.write(f"\t  {{ {c_init(attr, f)} }} }},\n")
        o.write("};\n")
    print(f"{len(vecs)} messages, {n} fields agree with tshark; wrote {out}")


if __name__ == "__main__":
    main()
