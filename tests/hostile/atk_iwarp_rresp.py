"""Spoofed RDMA Read Responses toward rnic's OUTSTANDING Read (target: none;
this script starts `rnic-cp get rdma://192.0.2.66/t OUT --length 2048`
over iWARP once per case, each on its own tap, and plays the rdma-gateway
in scapy: it accepts the TCP connection, answers the MPA request (rev 2,
CRC, IRD/ORD 16/0) with a reply whose private data is the gateway's
accept (apps/common/rnic_gw.h: STag, address, length of target t), takes
rnic-cp's RDMA Read Request (queue 1, MSN 1: sink STag and TO, 2048 bytes
of the advertised STag at the advertised address) and answers it with a
Read Response in two tagged segments of 1024 bytes, spoiled per case:

  (a) other STag    the first segment names the sink STag + 0x100
  (b) wrong TO      the first segment starts 512 bytes into the sink
  (c) short         a right first segment, then a last one (DDP L) of 512
                    bytes: the message ends at 1536 of 2048 bytes
  (d) long          a right first segment, then a last one of 1280 bytes:
                    it runs 256 bytes past the Read's 2048
  (e) right         both segments right: the control that this server
                    speaks iWARP well enough for rnic-cp to succeed

(a)-(d) must each: end rnic-cp within 5 s of the bad segment with a
non-zero exit and no success line; bring a Terminate from rnic (RDMAP
opcode 7, queue 2, CRC right) saying layer DDP, type tagged buffer, code
0x00 Invalid STag for (a) and 0x01 Base or Bounds for (b)-(d), whose
echoed DDP header is the bad segment's; and leave rnic-cp's output file
without any bytes of the bad response. (e) must exit 0 and write exactly
the 2048 bytes sent. Every FPDU rnic-cp sends is checked for a right CRC32c
(least significant byte first)."""
import os
import shutil
import struct
import subprocess
import time

from hpeer import ATK4, IP, TCP, Conn, Link, check, done
from iwarp_wire import crc32c, fpdu

PORT = 4791
RLEN = 2048
SEG = 1024
GW_STAG, GW_ADDR, GW_LEN = 0x00abcd42, 0x7f0000100000, 1 << 20
build = os.environ['HOSTILE_BUILD']
exe = os.path.join(build, 'apps/rnic-cp/rnic-cp')
if not check(os.access(exe, os.X_OK), 'rnic-cp is built (%s)' % exe):
    done()
link = Link()


def rresp(stag, to, last):
    """DDP tagged header (T, L when @last, DV 1) + RDMAP Read Response."""
    return struct.pack('>BBIQ', 0xc1 if last else 0x81, 0x42, stag, to)


def start(n, out):
    tap = 'clitap%d' % n
    log = '/tmp/hostile-rresp-%d-%d.log' % (os.getpid(), n)
    p = subprocess.Popen([exe, '--transport', 'iwarp', 'get', 'rdma://%s/t' % ATK4, out,
                          '--length', str(RLEN), '--vdev', 'net_tap0,iface=%s' % tap,
                          '--ip', '192.0.2.%d/24' % (20 + n)],
                         stdout=open(log, 'w'), stderr=subprocess.STDOUT)
    for _ in range(200):
        if subprocess.run(['ip', 'link', 'set', tap, 'master', 'br0', 'up'],
                          stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.05)
    return p, log


def fpdus(data):
    """Split rnic's FPDU stream: a list of (ulpdu, crc ok); stops at a
    partial FPDU."""
    out, pos = [], 0
    while pos + 2 <= len(data):
        n = struct.unpack('>H', data[pos:pos + 2])[0]
        body = 2 + n + (-(2 + n) % 4)
        if pos + body + 4 > len(data):
            break
        crc = struct.unpack('<I', data[pos + body:pos + body + 4])[0]
        out.append((data[pos + 2:pos + 2 + n], crc == crc32c(data[pos:pos + body])))
        pos += body + 4
    return out


def accept(name, c, syn):
    """TCP and MPA as the gateway; the Read Request's fields or None."""
    c.l.send(c.seg('SA', seq=c.iss, ack=c.rcv_nxt, options=[('MSS', 1460)]))
    c.snd_nxt = (c.iss + 1) & 0xffffffff
    end = time.time() + 5
    while time.time() < end and len(c.data) < 20:
        c.pump(0.05)
    if not check(c.data[:16] == b'MPA ID Req Frame', '%s: rnic-cp sends an MPA request (%r)' %
                 (name, c.data[:20])):
        return None
    pd_len = struct.unpack('>H', c.data[18:20])[0]
    while time.time() < end and len(c.data) < 20 + pd_len:
        c.pump(0.05)
    pd = c.data[20:20 + pd_len]
    enh = c.data[16] & 0x10
    req = pd[4:] if enh else pd
    check(c.data[16] & 0x40 and req[:4] == b'RGW1' and req[8:9] == b't',
          '%s: the request asks for CRC and names target t (flags 0x%02x)' % (name, c.data[16]))
    # reply: C and enhanced; IRD 16 (its Reads), ORD 0; the gateway's accept
    rep = b'RGW1' + struct.pack('>BBHIQQ', 1, 0, 0, GW_STAG, GW_ADDR, GW_LEN)
    v2 = struct.pack('>HH', 16, 0) if enh else b''
    c.send(b'MPA ID Rep Frame' + struct.pack('>BBH', 0x40 | (0x10 if enh else 0), 2,
                                              len(v2 + rep)) + v2 + rep)
    c.start = 20 + pd_len   # rnic-cp's FPDUs from here in c.data
    while time.time() < end:
        c.pump(0.05)
        f = fpdus(c.data[c.start:])
        if f:
            break
    if not check(f and f[0][1], '%s: an FPDU with a right CRC follows the reply (%d)' % (name, len(f))):
        return None
    u = f[0][0]
    if not check(len(u) == 18 + 28 and u[0] & 0x80 == 0 and u[1] & 0x0f == 1 and
                 struct.unpack('>II', u[6:14]) == (1, 1),
                 '%s: it is an RDMA Read Request, queue 1, MSN 1 (%s)' % (name, u[:18].hex())):
        return None
    sink_stag, sink_to, size, src_stag, src_to = struct.unpack('>IQIIQ', u[18:46])
    check((size, src_stag, src_to) == (RLEN, GW_STAG, GW_ADDR),
          '%s: it reads %d bytes of STag 0x%x at 0x%x (sink STag 0x%x TO 0x%x)' %
          (name, size, src_stag, src_to, sink_stag, sink_to))
    c.nfpdu = len(f)
    return sink_stag, sink_to


def run_case(n, name, make, want, bad_seg):
    """@make(sink_stag, sink_to) -> the segments [(stag, to, last, payload)];
    @want: None (success expected) or the Terminate's DDP tagged code, for
    segment @bad_seg (its header echoed in the Terminate)."""
    out = '/tmp/hostile-rresp-%d-%d.out' % (os.getpid(), n)
    link.rnic_mac = None
    m = link.mark()
    p, log = start(n, out)
    syn = link.wait(lambda q: TCP in q and IP in q and q[IP].dst == ATK4 and q[TCP].dport == PORT and
                    q[TCP].flags == 'S',
                    8.0, m)
    try:
        if not check(syn is not None, '%s: rnic-cp sends its SYN' % name):
            return
        link.rnic_mac = syn.src
        c = Conn(link, dport=syn[TCP].sport, sport=PORT, dst=syn[IP].src)
        c.rcv_nxt = (syn[TCP].seq + 1) & 0xffffffff
        c.since = link.mark()
        r = accept(name, c, syn)
        if r is None:
            return
        segs = make(*r)
        sent = b''
        for stag, to, last, pl in segs:
            c.send(fpdu(rresp(stag, to, last), pl))
            sent += pl
        t0 = time.time()
        try:
            p.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass
        dt = time.time() - t0
        c.pump(0.3)
        text = open(log).read().strip()
        got = open(out, 'rb').read() if os.path.exists(out) else b''
        f = fpdus(c.data[c.start:])[c.nfpdu:]
        terms = [(u, ok) for u, ok in f if len(u) >= 22 and u[1] & 0x0f == 7]
        last = text.splitlines()[-1:] if text else []
        if want is None:
            check(p.returncode == 0 and got == sent,
                  '%s: rnic-cp get succeeds with the exact %d bytes (exit %s, %d bytes, %s)' %
                  (name, len(sent), p.returncode, len(got), last))
            check(not terms, '%s: no Terminate' % name)
            if c.fin:   # its disconnect: answer the FIN
                c.l.send(c.seg('FA', ack=(c.rcv_nxt + 1) & 0xffffffff))
            return
        check(p.returncode is not None and dt <= 5.0,
              '%s: rnic-cp exits within 5 s of the bad response (%.2f s)' % (name, dt))
        check(p.returncode not in (None, 0) and not any(ln.startswith('got ') for ln in text.splitlines()),
              '%s: rnic-cp reports failure (exit %s, %s)' % (name, p.returncode, last))
        if check(len(terms) >= 1, '%s: rnic sends a Terminate (%d FPDUs after the Read Request)' %
                 (name, len(f))):
            u, ok = terms[0]
            layer, etype, code = u[18] >> 4, u[18] & 0x0f, u[19]
            check(ok and struct.unpack('>I', u[6:10])[0] == 2,
                  '%s: the Terminate is on queue 2 with a right CRC' % name)
            check((layer, etype, code) == (1, 1, want),
                  '%s: Terminate layer/type/code %d/%d/0x%02x (want DDP 1/tagged 1/0x%02x)' %
                  (name, layer, etype, code, want))
            b = segs[bad_seg]
            echo = u[24:38] if u[20] & 0x40 and len(u) >= 38 else b''
            check(echo == rresp(b[0], b[1], b[2]),
                  '%s: it echoes the DDP header of bad segment %d (%s)' % (name, bad_seg + 1, echo.hex()))
        leak = [i for i in range(0, len(sent) - 15, 16) if sent[i:i + 16] in got]
        check(not leak, '%s: the output file holds no byte of the bad response (%d bytes, %d '
              'of its 16-byte runs)' % (name, len(got), len(leak)))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
            text = open(log).read()
            print('rnic-cp (killed):', text[-400:])
        try:
            c.close()
        except NameError:
            pass
        for f in (out, log):
            if os.path.exists(f):
                os.unlink(f)
        shutil.rmtree('/var/run/dpdk/rnic-%d' % p.pid, ignore_errors=True)


def data(k):
    return os.urandom(k)


cases = [
    ('(a) other STag', lambda s, t: [((s + 0x100) & 0xffffffff, t, False, data(SEG)),
                                     (s, t + SEG, True, data(SEG))], 0x00, 0),
    ('(b) wrong TO', lambda s, t: [(s, t + 512, False, data(SEG)),
                                   (s, t + 512 + SEG, True, data(SEG))], 0x01, 0),
    ('(c) short', lambda s, t: [(s, t, False, data(SEG)), (s, t + SEG, True, data(512))], 0x01, 1),
    ('(d) long', lambda s, t: [(s, t, False, data(SEG)), (s, t + SEG, True, data(SEG + 256))], 0x01, 1),
    ('(e) right', lambda s, t: [(s, t, False, data(SEG)), (s, t + SEG, True, data(SEG))], None, None),
]
for n, (name, make, want, bad_seg) in enumerate(cases):
    run_case(n + 1, name, make, want, bad_seg)
done()
