"""TCP option abuse toward rnic's passive open (target: hostile_echo, 5001).

1. SYNs with MSS 0, MSS 1, MSS 65535, window scale 15 and 255: each
   handshake must complete with a sane SYN-ACK (its own MSS at most 1460,
   window scale at most 14), and 3000 bytes sent must come back whole in
   segments of 48 to 1460 bytes (an MSS of 0 or 1 is clamped, not obeyed:
   one-byte segments are an amplification, as Linux's tcp_min_snd_mss).
2. SACK blocks outside the window: on a SACK + timestamps connection
   whose 4000 echoed bytes are not yet ACKed, 40 duplicate ACKs carrying
   blocks below SND.UNA, far above SND.NXT, reversed (left > right) and
   2^31 away; then plain ACKs: every byte must still come back in order.
3. Timestamps: a data segment whose TSval is older than the last one
   (PAWS, RFC 7323 5.3) must be dropped: "AAAA" with an old TSval, then
   "BBBB" at the same sequence number with a fresh one: the echo is BBBB.
   A segment without TSopt on a timestamp connection is dropped too (RFC
   7323 3.2's SHOULD, as rnic chose): "CCCC" without it, then "DDDD" with
   it at the same sequence number: the echo is DDDD.
Counters: /rnic/tcp mss_clamped (MSS 0, 1), wscale_clamped (15, 255) and
sack_bogus must rise."""
import time

from hpeer import TCP, Conn, Link, check, counters, done, rose, ts_of

link = Link()
link.resolve()


def syn_ack_sane(t, what):
    opts = dict((o[0], o[1]) for o in t.options if isinstance(o, tuple))
    check(opts.get('MSS', 536) <= 1460, '%s: SYN-ACK MSS %s <= 1460' % (what, opts.get('MSS')))
    check(opts.get('WScale', 0) <= 14, '%s: SYN-ACK window scale %s <= 14' % (what, opts.get('WScale')))


# 1. MSS and window-scale abuse
for name, opts in (('MSS 0', [('MSS', 0)]), ('MSS 1', [('MSS', 1)]),
                   ('MSS 65535', [('MSS', 65535)]),
                   ('wscale 15', [('MSS', 1460), ('WScale', 15)]),
                   ('wscale 255', [('MSS', 1460), ('WScale', 255)])):
    c = Conn(link)
    before = counters()
    t = c.handshake(opts, window=2048 if 'wscale' in name else 65535)
    if not check(t is not None, '%s: handshake completes' % name):
        continue
    ctr = {'MSS 0': 'mss_clamped', 'MSS 1': 'mss_clamped', 'wscale 15': 'wscale_clamped',
           'wscale 255': 'wscale_clamped'}.get(name)
    if ctr:
        check(rose(before, counters(), 'tcp.' + ctr) > 0, '%s: /rnic/tcp %s rose' % (name, ctr))
    syn_ack_sane(t, name)
    data = bytes((i * 7) & 0xff for i in range(3000))
    for off in range(0, 3000, 1000):
        c.send(data[off:off + 1000])
    m0 = c.since
    got = c.expect_echo(data, 4.0)
    check(got, '%s: 3000 bytes echoed whole (%d came)' % (name, len(c.data)))
    sizes = [len(bytes(p[TCP].payload)) for p in link.collect(c.mine, m0)
             if len(bytes(p[TCP].payload))]
    if sizes:
        small = [s for s in sizes[:-1] if s < 48]
        check(not small and max(sizes) <= 1460,
              '%s: segments of 48..1460 bytes (%d segments, min %d, max %d)' %
              (name, len(sizes), min(sizes), max(sizes)))
    c.close()

# 2. SACK blocks outside the window
c = Conn(link)
t = c.handshake([('MSS', 1460), ('SAckOK', b''), ('Timestamp', (1000, 0)), ('WScale', 7)])
if check(t is not None, 'SACK connection: handshake completes'):
    data = bytes((i * 13) & 0xff for i in range(4000))
    for off in range(0, 4000, 1000):
        c.send(data[off:off + 1000])
    c.pump(0.5, ack=False)       # take the echo, ACK nothing yet
    una = (c.rcv_nxt - len(c.data)) & 0xffffffff
    nxt = (c.rcv_nxt + sum(len(v) for v in c.got.values())) & 0xffffffff
    c.data, c.got, c.rcv_nxt = b'', {}, una
    bad_blocks = [(una - 100000, una - 90000), (nxt + 10 ** 6, nxt + 2 * 10 ** 6),
                  (nxt, una), (una + (1 << 31), una + (1 << 31) + 1000),
                  (una + 10, una + 5)]
    before = counters()
    for i in range(40):
        l, r = bad_blocks[i % len(bad_blocks)]
        link.send(c.seg('A', ack=una, options=[('SAck', (l & 0xffffffff, r & 0xffffffff))]))
    time.sleep(0.2)
    check(rose(before, counters(), 'tcp.sack_bogus') > 0, 'bogus SACK blocks counted (/rnic/tcp sack_bogus)')
    check(c.expect_echo(data, 5.0),
          'echo whole after 40 ACKs with SACK blocks outside the window (%d of 4000)' % len(c.data))
    check(c.data[:4000] == data, 'echoed bytes in order')
    c.close()

# 3. timestamp games
c = Conn(link)
t = c.handshake([('MSS', 1460), ('Timestamp', (5000, 0))])
if check(t is not None and c.ts_recent is not None, 'timestamp connection: handshake completes'):
    c.tsval = 5000
    c.send(b'0123')
    check(c.expect_echo(b'0123', 2.0), 'first data echoed')
    seq = c.snd_nxt
    c.send(b'AAAA', seq=seq, options=[('Timestamp', (4000, c.ts_recent))])   # older: PAWS
    c.send(b'BBBB', seq=seq)
    c.snd_nxt = (seq + 4) & 0xffffffff
    c.expect_echo(b'0123BBBB', 2.0)
    check(c.data[:8] == b'0123BBBB', 'PAWS: the old-TSval segment dropped, echo %r' % c.data[:8])
    seq = c.snd_nxt
    c.send(b'CCCC', seq=seq, ts=False)
    c.send(b'DDDD', seq=seq)
    c.snd_nxt = (seq + 4) & 0xffffffff
    c.send(b'EEEE')
    c.expect_echo(b'EEEE', 2.0)
    tail = c.data[8:16]
    check(tail == b'DDDDEEEE', 'a segment without TSopt on a timestamp connection dropped '
          '(RFC 7323 3.2), its timestamped twin taken: echo %r' % tail)
    ts = ts_of(t)
    check(ts is not None, 'rnic echoes timestamps in its SYN-ACK')
    c.close()
done()
