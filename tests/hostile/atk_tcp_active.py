"""TCP abuse toward rnic's active open (target: none; this script starts
`rnic-tcp source --connect 192.0.2.66:5002` once per case, each on its own
tap and EAL file prefix, and plays the server in scapy).

Cases, each answering rnic's SYN:
  MSS 0, MSS 1, MSS 65535   a SYN-ACK with that MSS
  wscale 15, wscale 255     a SYN-ACK with that window scale (RFC 7323: 14)
  simultaneous open         a SYN without ACK (RFC 793's crossing SYNs:
                            rnic must answer SYN-ACK, then ESTABLISHED)
  SYN-ACK/ACK flood         500 SYN-ACKs with wrong ACK numbers and 500
                            bare ACKs, then the right SYN-ACK
In every case data must arrive (20000 bytes in order within 8 s, ACKed as
it comes, every segment but the last of 48 to 1460 bytes), and the
program must exit within 2 s of SIGTERM."""
import os
import random
import shutil
import signal
import subprocess
import time

from hpeer import ATK4, IP, RNIC4, TCP, Conn, Link, check, done

build = os.environ['HOSTILE_BUILD']
exe = os.path.join(build, 'apps/rnic-tcp/rnic-tcp')
link = Link()
want = 20000


def start(n):
    tap = 'atap%d' % n
    log = open('/tmp/hostile-active-%d-%d.log' % (os.getpid(), n), 'w')
    p = subprocess.Popen([exe, 'source', '--connect', '%s:5002' % ATK4, '--bytes', '2000000',
                          '--vdev', 'net_tap0,iface=%s' % tap, '--ip', '192.0.2.10/24'],
                         stdout=log, stderr=subprocess.STDOUT)
    for _ in range(100):
        if subprocess.run(['ip', 'link', 'set', tap, 'master', 'br0', 'up'],
                          stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.05)
    return p, log.name


def rnic_syn(m):
    return link.wait(lambda p: TCP in p and IP in p and p[IP].src == RNIC4 and
                     p[TCP].dport == 5002 and p[TCP].flags == 'S', 5.0, m)


def run_case(n, name, answer):
    link.rnic_mac = None
    m = link.mark()
    p, logname = start(n)
    syn = rnic_syn(m)
    if not check(syn is not None, '%s: rnic sends its SYN' % name):
        p.kill()
        p.wait()
        print(open(logname).read())
        return
    link.rnic_mac = syn.src
    c = Conn(link, dport=syn[TCP].sport, sport=5002)
    c.rcv_nxt = (syn[TCP].seq + 1) & 0xffffffff
    c.since = link.mark()
    answer(c, syn)
    end = time.time() + 8
    while len(c.data) < want and time.time() < end:
        if c.pump(0.1):
            break
    check(len(c.data) >= want, '%s: data arrives (%d bytes)' % (name, len(c.data)))
    sizes = [len(bytes(q[TCP].payload)) for q in link.collect(c.mine, m) if len(bytes(q[TCP].payload))]
    if sizes:
        check(min(sizes[:-1] or [48]) >= 48 and max(sizes) <= 1460,
              '%s: segments of 48..1460 bytes (min %d, max %d)' % (name, min(sizes), max(sizes)))
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=2.0)
        check(True, '%s: exit %d within 2 s of SIGTERM (%.2f s)' % (name, p.returncode, time.time() - t0))
    except subprocess.TimeoutExpired:
        check(False, '%s: no exit within 2 s of SIGTERM' % name)
        p.kill()
        p.wait()
    c.close()
    os.unlink(logname)
    shutil.rmtree('/var/run/dpdk/rnic-%d' % p.pid, ignore_errors=True)   # its EAL runtime dir


def synack(opts):
    def answer(c, syn):
        c.l.send(c.seg('SA', seq=c.iss, ack=c.rcv_nxt, options=opts))
        c.snd_nxt = (c.iss + 1) & 0xffffffff
    return answer


def simultaneous(c, syn):
    c.l.send(c.seg('S', seq=c.iss, ack=0, options=[('MSS', 1460)]))
    c.snd_nxt = (c.iss + 1) & 0xffffffff
    sa = c.l.wait(lambda q: c.mine(q) and q[TCP].flags & 0x12 == 0x12, 3.0, c.since)
    check(sa is not None and sa[TCP].ack == c.snd_nxt,
          'simultaneous open: rnic answers the crossing SYN with a SYN-ACK')
    if sa is not None:
        c.l.send(c.seg('A'))


def flood(c, syn):
    rnd = random.Random(5)
    for i in range(500):
        c.l.send(c.seg('SA', seq=rnd.randrange(1 << 32), ack=rnd.randrange(1 << 32),
                       options=[('MSS', 1460)]))
        c.l.send(c.seg('A', seq=rnd.randrange(1 << 32), ack=rnd.randrange(1 << 32)))
    synack([('MSS', 1460)])(c, syn)


cases = [('MSS 0', synack([('MSS', 0)])), ('MSS 1', synack([('MSS', 1)])),
         ('MSS 65535', synack([('MSS', 65535)])),
         ('wscale 15', synack([('MSS', 1460), ('WScale', 15)])),
         ('wscale 255', synack([('MSS', 1460), ('WScale', 255)])),
         ('simultaneous open', simultaneous), ('SYN-ACK/ACK flood', flood)]
for n, (name, answer) in enumerate(cases):
    run_case(n, name, answer)
done()
