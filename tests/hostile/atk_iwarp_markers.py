"""MPA markers (RFC 5044 s5, 7.1; target: rdma-gateway, iWARP on TCP 4791).

The M flag of an MPA request or reply says that its sender wants markers
in the stream it receives. rnic never asks for them (its reply has M = 0)
but grants them to a peer that does: its FPDUs toward that peer carry a
marker every 512 bytes of the stream, counted from the byte after the MPA
reply, and the CRC covers them.

1. An MPA request (rev 2, M and C set, IRD/ORD 1/1, an rnic-gateway
   request for t) is accepted: a reply without R, with C set and M clear.
2. On that stream, an RDMA Write of 64 bytes to t without markers (what
   rnic's M = 0 asks for), then an RDMA Read Request of 1500 bytes of t:
   the Read Responses come with a marker at stream positions 0, 512,
   1024...: reserved bits 0, FPDUPTR pointing back to the start of the
   marker's FPDU, each FPDU's CRC right over it with its markers, the
   FPDUs' tagged offsets contiguous, 1500 bytes in all, the first 64 the
   ones written.
3. A second stream negotiated the same way whose first FPDU carries a
   marker in front of it (markers rnic did not ask for): rnic must end
   the stream (a Terminate, FIN or RST) within 3 s and count it in
   /rnic/iwarp (a term_* counter rising); an idle stream negotiated with M
   must stay up meanwhile.
The driver (target gateway-iwarp) then checks rnic-cp over iWARP is still served."""
import struct

from hpeer import Conn, Link, check, counters, done, rose
from iwarp_wire import crc32c, fpdu, mpa_req, tagged, untagged

PORT = 4791
M, C, ENH, R = 0x80, 0x40, 0x10, 0x20
link = Link()
link.resolve()


def marked_conn(name):
    """A stream whose MPA request sets M and C; (conn, reply flags, the
    gateway's reply private data) or None."""
    c = Conn(link, dport=PORT)
    if not check(c.handshake([('MSS', 1460)]) is not None, '%s: TCP handshake' % name):
        return None
    c.send(mpa_req(flags=M | C | ENH))
    got = c.expect_echo(b'MPA ID Rep Frame', 3.0) and len(c.data) >= 20
    if not got:
        check(False, '%s: an MPA reply (%r, ended %s)' % (name, c.data[:40], c.fin))
        c.close()
        return None
    flags = c.data[16]
    pd_len = struct.unpack('>H', c.data[18:20])[0]
    c.expect_echo(b'RGW1', 1.0)
    c.rep = c.data[20:20 + pd_len]
    c.fpdu_start = 20 + pd_len   # rnic's FPDU stream starts here in c.data
    return c, flags


def demark(wire, want):
    """rnic's FPDUs in @wire (its stream from the first FPDU on), markers
    every 512 bytes from position 0: a list of (ulpdu, crc ok) and a list
    of problems with the markers. Stops at @want FPDUs or the end."""
    pos, out, bad = 0, [], []

    def marker(start):
        """Skip the marker due at pos, if any; FPDUPTR must point back to
        the FPDU's start (its ULPDU_Length, or the marker leading it)."""
        nonlocal pos
        if pos % 512:
            return
        mk = wire[pos:pos + 4]
        if len(mk) < 4:
            raise EOFError
        res, ptr = struct.unpack('>HH', mk)
        if res != 0 or pos - ptr not in start:
            bad.append('marker at %d: %s' % (pos, mk.hex()))
        pos += 4

    def take(n, start):
        nonlocal pos
        b = b''
        while len(b) < n:
            marker(start)
            if pos >= len(wire):
                raise EOFError
            b += wire[pos:pos + 1]
            pos += 1
        return b
    try:
        while len(out) < want and pos < len(wire):
            s0 = pos
            start = {s0, s0 + 4 if s0 % 512 == 0 else s0}
            n = struct.unpack('>H', take(2, start))[0]
            take(n + (-(n + 2) % 4), start)
            marker(start)   # one right before the CRC is covered by it too
            covered = wire[s0:pos]
            crc = struct.unpack('<I', take(4, start))[0]
            ulpdu = bytes(x for i, x in enumerate(covered) if (s0 + i) % 512 >= 4)[2:2 + n]
            out.append((ulpdu, crc32c(covered) == crc))
    except EOFError:
        pass
    return out, bad


# 1. the request with M is accepted; rnic does not want markers itself
r = marked_conn('markers asked')
if r is not None:
    c, flags = r
    check(not flags & R, 'an MPA request with M and C set is accepted (reply flags 0x%02x)' % flags)
    check(flags & C and not flags & M,
          'the reply sets C and not M: rnic wants no markers in what it receives (0x%02x)' % flags)
    stag = addr = None
    if check(len(c.rep) >= 32 and c.rep[4:8] == b'RGW1', 'the gateway\'s reply names t'):
        stag, addr = struct.unpack('>IQ', c.rep[12:24])
    # 2. a Write and a Read Request without markers (rnic said M = 0)
    if stag is not None:
        c.send(fpdu(tagged(0x0, stag, addr), b'M' * 64))
        c.send(fpdu(untagged(0x1, 1, 1),
                    struct.pack('>IQIIQ', 0x5eed, 0, 1500, stag, addr)))
        c.pump(1.5)
        wire = c.data[c.fpdu_start:]
        fp, bad = demark(wire, 8)
        print('Read Response: %d stream bytes, FPDUs %s, first bytes %s' % (
            len(wire), [(len(u), ok) for u, ok in fp], wire[:64].hex()))
        resp = [u for u, ok in fp if len(u) >= 14 and u[1] & 0x0f == 0x2]   # Read Response
        check(len(fp) > 0 and all(ok for _, ok in fp),
              'the Read Response FPDUs\' CRCs cover their markers (%d FPDUs)' % len(fp))
        check(len(wire) >= 512 + 4 and not bad,
              'a marker every 512 bytes from the first FPDU on, FPDUPTR to its FPDU (%s)' % bad[:3])
        data, nxt, contiguous = b'', 0, True   # at our Data Sink STag 0x5eed, TO 0 on
        for u in resp:
            s, to = struct.unpack('>IQ', u[2:14])
            contiguous &= s == 0x5eed and to == nxt
            data += u[14:]
            nxt = to + len(u) - 14
        check(contiguous and len(data) == 1500 and data[:64] == b'M' * 64,
              'the Read Responses carry the 1500 bytes, contiguous, the 64 written first '
              '(%d bytes, contiguous %s)' % (len(data), contiguous))
    check(not c.ended(0.2), 'the stream with markers toward the attacker stays up')
    c.close()

# 3. markers rnic did not ask for: the stream is Terminated and counted
idle = marked_conn('idle')
before = counters()
r = marked_conn('unasked markers')
if r is not None:
    c, flags = r
    mark = len(c.data)
    # a marker at position 0 (FPDUPTR 0) in front of a Send, as if rnic had said M
    f = fpdu(untagged(0x3, 0, 1), b's' * 64)
    body = b'\x00\x00\x00\x00' + f[:-4]
    body += struct.pack('<I', crc32c(body))
    c.send(body)
    ended = c.ended(3.0)
    term = len(c.data) > mark
    after = counters()
    terms = {k: after[k] - before.get(k, 0) for k in after
             if k.startswith('iwarp.term_') and after[k] != before.get(k, 0)}
    check(ended or term, 'unasked markers: rnic ends the stream (%s)' % (
        'Terminate' if term else 'closed' if ended else 'nothing'))
    check(rose(before, after, 'iwarp.term_') > 0,
          'unasked markers: a Terminate counted in /rnic/iwarp (%s; iwarp counters that rose: %s)' % (
              terms, {k: after[k] - before.get(k, 0) for k in after
                      if k.startswith('iwarp.') and after[k] != before.get(k, 0)}))
    c.close()
if idle is not None:
    check(not idle[0].ended(0.5), 'idle: an idle stream negotiated with M stays up')
    idle[0].close()
done()
