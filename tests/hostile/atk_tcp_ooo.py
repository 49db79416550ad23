"""Out-of-order flood on an established connection (target: hostile_echo).

The attacker opens a connection, leaves a one-byte hole at the start of
its stream and sends 6000 one-byte segments above it: 4000 adjacent ones
(a chain that could grow one mbuf per byte) and 2000 with a byte of gap
between each (one out-of-order entry per segment). Meanwhile the kernel
pings rnic and runs a TCP echo of its own, which must both be served. The
port pools' mbufs in use, sampled through /rnic/mem during the flood, may
not rise more than 1024 above the baseline (6000 one-byte mbufs otherwise).
Then the hole is filled and the whole stream sent again in order: the echo
must be exactly the stream (whatever was dropped is taken from the resend,
nothing corrupted)."""
import subprocess
import threading
import time

from hpeer import RNIC4, Conn, Link, check, done, legit_tcp, mbufs_in_use

MARGIN = 1024
link = Link()
link.resolve()
c = Conn(link)
t = c.handshake([('MSS', 1460), ('SAckOK', b''), ('WScale', 7)])
if not check(t is not None, 'handshake completes'):
    done()
base_mb = mbufs_in_use()
stream = bytes((i * 31 + 7) & 0xff for i in range(9000))
seq0 = c.snd_nxt
frames = [bytes(c.seg('A', seq=(seq0 + 1 + i) & 0xffffffff, payload=stream[1 + i:2 + i]))
          for i in range(4000)]
frames += [bytes(c.seg('A', seq=(seq0 + 5000 + 2 * i) & 0xffffffff,
                       payload=stream[5000 + 2 * i:5001 + 2 * i])) for i in range(2000)]

peak = [base_mb]
res = {}
stop = threading.Event()


def sampler():
    while not stop.is_set():
        n = mbufs_in_use()
        if n:
            peak[0] = max(peak[0], n)
        time.sleep(0.1)


def legit():
    r = subprocess.run(['ping', '-c', '10', '-i', '0.1', '-W', '1', RNIC4],
                       capture_output=True, text=True)
    res['ping'] = r.returncode == 0 and ' 0% packet loss' in r.stdout or \
        ('received' in r.stdout and int(r.stdout.split(' received')[0].split()[-1]) >= 5)
    res['tcp'] = legit_tcp(RNIC4, n=16384)


ths = [threading.Thread(target=sampler), threading.Thread(target=legit)]
for th in ths:
    th.start()
t0 = time.time()
for f in frames:
    link.send(f)
print('flood: %d one-byte segments in %.1f s' % (len(frames), time.time() - t0))
ths[1].join()
time.sleep(0.5)
stop.set()
ths[0].join()
check(res.get('ping'), 'kernel pings answered during the flood')
check(res.get('tcp'), 'kernel TCP echo served during the flood')
check(peak[0] - base_mb <= MARGIN,
      'mbufs in use during the flood: peak %d, baseline %d (at most +%d)' % (peak[0], base_mb, MARGIN))

# fill the hole, then send the whole stream again in order
c.send(stream[:1], seq=seq0)
for off in range(0, len(stream), 1000):
    c.send(stream[off:off + 1000], seq=(seq0 + off) & 0xffffffff)
c.snd_nxt = (seq0 + len(stream)) & 0xffffffff
ok = c.expect_echo(stream, 8.0)
check(ok and c.data[:len(stream)] == stream,
      'the stream echoed exactly after the hole is filled (%d of %d bytes)' % (len(c.data), len(stream)))
c.close()
done()
