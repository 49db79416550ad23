"""iWARP abuse: raw TCP from scapy carrying MPA, DDP and RDMAP (target:
rdma-gateway, whose target t listens on TCP 4791).

1. MPA request garbage, one connection each: a wrong key; a good key with
   revision 255; PD_Length 65535 (over RFC 5044's 512: refused at once,
   not after 64 KiB); revision 2 with PD_Length 3 (shorter than RFC 6581's
   IRD/ORD header); 3000 bytes of noise. rnic must end each connection
   (a reject reply, FIN or RST) within 3 s, and count them (/rnic/iwarp).
2. After a real MPA exchange (rev 2, CRC, IRD/ORD 1/1, an rnic-gateway
   request for t), one connection each:
   - a Terminate storm: 200 RDMAP Terminate FPDUs;
   - spoofed RDMA Read Responses while no Read is outstanding: a random
     STag, the target's STag at a wrong offset, short and long;
   - an FPDU whose ULPDU_Length (65535) is past the stream's MULPDU;
   - FPDUs with a wrong CRC: Sends, and a Write to t rnic would take but
     for its CRC (its Terminate must say MPA CRC error).
   Every FPDU's CRC is right (least significant byte first) unless the case
   says otherwise, and the Read Responses carry RDMAP opcode 2, so each
   case reaches the check it names. rnic must end each connection
   (Terminate, FIN or RST) within 3 s, and a counter of /rnic/iwarp must
   rise; a control connection that sends nothing after the exchange must
   stay up for 2 s.
3. Slowloris: 100 connections that send 10 bytes of an MPA request and
   stall, 50 that only finish the TCP handshake, left open: the heaps may
   grow at most 8 MiB for them, an rnic-cp get over iWARP must be served
   while they are held, and 10.5 s later (the MPA timeout is 10 s) rnic
   must have timed them out (mpa_timeouts_passive rises); the driver's
   legitimate client follows."""
import os
import shutil
import struct
import subprocess
import time

from hpeer import Conn, Link, check, counters, done, heap_bytes, rose
from iwarp_wire import fpdu, mpa_req, tagged, untagged

PORT = 4791
link = Link()
link.resolve()


def connect():
    c = Conn(link, dport=PORT)
    return c if c.handshake([('MSS', 1460)]) is not None else None


def send_stream(c, data):
    for off in range(0, len(data), 1400):
        c.send(data[off:off + 1400])


# 1. MPA request garbage
before = counters()
garbage = [('wrong key', mpa_req(key=b'MPA ID Bad Frame')),
           ('revision 255', mpa_req(rev=255)),
           ('PD_Length 65535', mpa_req(pd=b'x' * 64, pd_len=65535)),
           ('rev 2, PD_Length 3', mpa_req(pd=b'\x00\x01\x00', pd_len=3)),
           ('3000 bytes of noise', bytes((i * 37 + 11) & 0xff for i in range(3000)))]
for name, data in garbage:
    c = connect()
    if not check(c is not None, '%s: TCP handshake' % name):
        continue
    send_stream(c, data)
    ended = c.ended(3.0)
    rej = c.data[:16] == b'MPA ID Rep Frame' and len(c.data) > 16 and c.data[16] & 0x20
    check(ended or rej, '%s: rnic refuses (%s)' % (name, 'reject' if rej else 'closed' if ended else 'nothing'))
    c.close()
after = counters()
print('MPA garbage, counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                               if after[k] != before.get(k, 0)})
check(rose(before, after, 'iwarp.') > 0, 'the refused MPA requests are counted in /rnic/iwarp')


# 2. after a real MPA exchange
def rdma_conn(name):
    c = connect()
    if c is None:
        check(False, '%s: TCP handshake' % name)
        return None
    c.send(mpa_req())
    end_ok = c.expect_echo(b'MPA ID Rep Frame', 3.0) and len(c.data) >= 20
    if not check(end_ok and not c.data[16] & 0x20, '%s: MPA reply accepts (%r)' % (name, c.data[:120])):
        c.close()
        return None
    pd_len = struct.unpack('>H', c.data[18:20])[0]
    c.expect_echo(b'RGW1', 1.0)
    c.rep = c.data[20:20 + pd_len]
    return c


# control: a real connection that sends nothing stays up, so the closes
# below are rnic's answers to the attacks
c = rdma_conn('control')
if c is not None:
    check(not c.ended(2.0), 'control: an idle RDMA stream stays up for 2 s')
    c.close()
stag = addr = None
cases = [('Terminate storm', lambda c: [fpdu(untagged(0x7, 2, 1 + i), bytes([0x01, 0x00, 0, 0]))
                                        for i in range(200)]),
         ('Read Response, random STag', lambda c: [fpdu(tagged(0x2, 0x12345678, 0), b'r' * 100)]),
         ('Read Response, wrong offset', lambda c: [fpdu(tagged(0x2, stag or 1, 1 << 40), b'r' * 100)]),
         ('Read Response, short', lambda c: [fpdu(tagged(0x2, stag or 1, 0))[:8]]
          + [fpdu(untagged(0x0, 0, 1), b'')]),
         ('Read Response, long', lambda c: [fpdu(tagged(0x2, stag or 1, 0), b'L' * 4000)]),
         ('ULPDU_Length 65535', lambda c: [fpdu(untagged(0x3, 0, 1), b's' * 64, ulpdu_len=65535)]),
         ('bad CRC', lambda c: [fpdu(untagged(0x3, 0, 1), b's' * 64, good_crc=False)] * 5),
         # a Write rnic would take but for its CRC: the CRC error is the cause
         ('bad CRC on a good Write', lambda c: [fpdu(tagged(0x0, stag or 1, addr or 0), b'w' * 64,
                                                     good_crc=False)])]
for name, make in cases:
    before = counters()
    c = rdma_conn(name)
    if c is None:
        continue
    if stag is None and len(c.rep) >= 16 and c.rep[4:8] == b'RGW1':
        # behind IRD/ORD, magic..status
        stag, addr = struct.unpack('>IQ', c.rep[12:24])
    mark = len(c.data)
    send_stream(c, b''.join(make(c)))
    ended = c.ended(3.0)
    term = len(c.data) > mark   # an FPDU back: a Terminate
    after = counters()
    r = rose(before, after, 'iwarp.', 'drops.', 'tcp.')
    check(ended or term, '%s: rnic ends the stream (%s)' % (name, 'closed' if ended else 'Terminate' if term else 'nothing'))
    check(rose(before, after, 'iwarp.') > 0, '%s: an iwarp counter rose (%s)' % (name, {
        k: after[k] - before.get(k, 0) for k in after if k.startswith('iwarp.') and after[k] != before.get(k, 0)}))
    if name == 'bad CRC on a good Write':
        check(rose(before, after, 'iwarp.term_mpa_crc_error') == 1,
              '%s: the Terminate says MPA CRC error (term_mpa_crc_error)' % name)
    del r
    c.close()

# 3. slowloris: left open for the driver's legitimate client
heap0 = heap_bytes()
held = 0
for i in range(150):
    c = connect()
    if c is None:
        continue
    held += 1
    if i < 100:
        c.send(mpa_req()[:10])
heap1 = heap_bytes()
print('slowloris: %d connections held, heap %+d bytes' % (held, heap1 - heap0))
check(heap1 - heap0 <= 8 << 20, 'heap growth for %d stalled MPA handshakes: %+d bytes (at most 8 MiB)' %
      (held, heap1 - heap0))


def rnic_cp_get(n):
    """rnic-cp (its own process and tap clitap<n>) gets 4 KiB of t over iWARP."""
    exe = os.path.join(os.environ['HOSTILE_BUILD'], 'apps/rnic-cp/rnic-cp')
    tap = 'clitap%d' % n
    out = '/tmp/hostile-cp-%d-%d' % (os.getpid(), n)
    p = subprocess.Popen([exe, '--transport', 'iwarp', 'get', 'rdma://192.0.2.10/t', out,
                          '--length', '4096', '--vdev', 'net_tap0,iface=%s' % tap,
                          '--ip', '192.0.2.%d/24' % (20 + n)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(200):
        if subprocess.run(['ip', 'link', 'set', tap, 'master', 'br0', 'up'],
                          stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.05)
    try:
        text, _ = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        text, _ = p.communicate()
    if os.path.exists(out):
        os.unlink(out)
    shutil.rmtree('/var/run/dpdk/rnic-%d' % p.pid, ignore_errors=True)
    return p.returncode == 0, text.strip().splitlines()[-1:] if text else []


before = counters()
ok, last = rnic_cp_get(7)
check(ok, 'rnic-cp over iWARP served while the stalled handshakes are held (%s)' % last)
time.sleep(10.5)   # RNIC_IW_MPA_TIMEOUT_MS is 10 s
after = counters()
check(rose(before, after, 'iwarp.mpa_timeouts_passive') > 0,
      'the stalled handshakes time out (mpa_timeouts_passive %+d, mpa_backlog_full %+d)' %
      (rose(before, after, 'iwarp.mpa_timeouts_passive'), rose(before, after, 'iwarp.mpa_backlog_full')))
done()
