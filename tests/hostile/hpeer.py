"""The hostile peer's toolbox: raw Ethernet frames on the attacker's side of
the namespace's bridge (interface atk1, its own MAC and addresses, which it
answers ARP and neighbour solicitations for), TCP conversations written by
hand, rnic's telemetry, and the pass/fail bookkeeping of one attack script.

Addresses (tests/hostile/hostile.sh sets them up):
  rnic under attack   192.0.2.10, 2001:db8::10   (net_tap port on br0)
  the kernel          192.0.2.1,  2001:db8::1    (br0: the legitimate peer)
  the attacker        192.0.2.66, 2001:db8::66   (atk1, MAC 02:00:00:00:00:66)
Environment: HOSTILE_PREFIX (rnic's EAL file prefix, for telemetry),
HOSTILE_IFACE (default atk1)."""
import json
import os
import random
import socket
import sys
import threading
import time

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Ether, ICMPv6EchoReply,  # noqa: F401
                       ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                       ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrFragment,
                       IPv6ExtHdrHopByHop, PadN, Raw, conf)

conf.verb = 0
RNIC4, RNIC6 = '192.0.2.10', '2001:db8::10'
KERN4, KERN6 = '192.0.2.1', '2001:db8::1'
ATK4, ATK6 = '192.0.2.66', '2001:db8::66'
ATKMAC = '02:00:00:00:00:66'
ECHO_PORT = 5001

# --- pass/fail bookkeeping ----------------------------------------------------
passed = 0
failed = 0


def check(cond, what):
    """Count one assertion; print FAIL with @what when it does not hold."""
    global passed, failed
    if cond:
        passed += 1
        print('ok:', what, flush=True)
    else:
        failed += 1
        print('FAIL:', what, flush=True)
    return cond


def done():
    """End the script: exit 1 when any check failed."""
    print('%s: %d passed, %d failed' % (os.path.basename(sys.argv[0]), passed, failed))
    sys.exit(1 if failed else 0)


# --- telemetry ---------------------------------------------------------------
def tele(cmd, prefix=None):
    """One telemetry command of the rnic process (None when it cannot be read)."""
    prefix = prefix or os.environ['HOSTILE_PREFIX']
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    try:
        s.connect('/var/run/dpdk/%s/dpdk_telemetry.v2' % prefix)
        s.recv(1 << 16)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode()).get(cmd.split(',')[0])
    except (OSError, ValueError):
        return None
    finally:
        s.close()


def mbufs_in_use(prefix=None):
    """mbufs in use in the port pools (rnic_S_P) per /rnic/mem; on a tree
    without /rnic/mem, /rnic/stats' mbufs_in_use."""
    m = tele('/rnic/mem', prefix)
    if m and 'pools' in m:
        return sum(p['in_use'] for n, p in m['pools'].items() if n.startswith('rnic_'))
    st = tele('/rnic/stats', prefix) or {}
    return sum(v.get('mbufs_in_use', 0) for v in st.values())


def heap_bytes(prefix=None):
    """rte_malloc + C heap bytes in use (0 without /rnic/mem)."""
    m = tele('/rnic/mem', prefix) or {}
    return m.get('rte_heap_bytes', 0) + m.get('c_heap_bytes', 0)


def counters(prefix=None):
    """Every integer counter of /rnic/drops, /rnic/stats, /rnic/tcp,
    /rnic/roce and /rnic/iwarp, summed over stacks (and anything nested), as
    {name: value}, each name prefixed with its command ('drops.', ...)."""
    out = {}

    def walk(tag, d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(tag, v)
            elif isinstance(v, int):
                out[tag + k] = out.get(tag + k, 0) + v
    for cmd in ('/rnic/drops', '/rnic/stats', '/rnic/tcp', '/rnic/roce', '/rnic/iwarp'):
        walk(cmd.split('/')[-1] + '.', tele(cmd, prefix) or {})
    return out


def rose(before, after, *names):
    """Sum of the rises of the counters whose name contains any of @names."""
    return sum(after.get(k, 0) - before.get(k, 0)
               for k in after if any(n in k for n in names))


# --- the link ----------------------------------------------------------------
class Link:
    """A raw socket on the attacker's interface: frames we send, frames that
    come to our MACs (or broadcast/multicast), ARP and NS for our addresses
    answered in the background."""

    def __init__(self, iface=None):
        self.iface = iface or os.environ.get('HOSTILE_IFACE', 'atk1')
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        self.s.bind((self.iface, 0))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.macs = {bytes.fromhex(ATKMAC.replace(':', ''))}
        self.ip4 = {ATK4: ATKMAC}
        self.ip6 = {ATK6: ATKMAC}
        self.frames = []
        self.cv = threading.Condition()
        self.rnic_mac = None
        threading.Thread(target=self._rx, daemon=True).start()

    def _rx(self):
        while True:
            data, addr = self.s.recvfrom(65536)
            if addr[2] == socket.PACKET_OUTGOING or len(data) < 14:
                continue
            dst = data[:6]
            if dst not in self.macs and not dst[0] & 1:
                continue
            et = data[12:14]
            if et == b'\x08\x06' and len(data) >= 42 and data[20:22] == b'\x00\x01':
                tip = socket.inet_ntoa(data[38:42])
                if tip in self.ip4:
                    self.send(Ether(src=self.ip4[tip], dst=data[6:12]) /
                              ARP(op=2, hwsrc=self.ip4[tip], psrc=tip,
                                  hwdst=data[22:28], pdst=socket.inet_ntoa(data[28:32])))
                continue
            if et == b'\x86\xdd' and len(data) >= 78 and data[20] == 58 and data[54] == 135:
                tgt = socket.inet_ntop(socket.AF_INET6, data[62:78])
                if tgt in self.ip6:
                    p = Ether(data)
                    mac = self.ip6[tgt]
                    self.send(Ether(src=mac, dst=p.src) /
                              IPv6(src=tgt, dst=p[IPv6].src, hlim=255) /
                              ICMPv6ND_NA(tgt=tgt, R=0, S=1, O=1) /
                              ICMPv6NDOptDstLLAddr(lladdr=mac))
                    continue
            with self.cv:
                self.frames.append(data)
                self.cv.notify_all()

    def send(self, pkt):
        """Send one frame (scapy packet or bytes); wait out a full queue."""
        raw = bytes(pkt)
        for _ in range(1000):
            try:
                self.s.send(raw)
                return
            except BlockingIOError:
                time.sleep(0.001)
            except OSError as e:
                if e.errno not in (105, 11):   # ENOBUFS, EAGAIN
                    raise
                time.sleep(0.001)

    def mark(self):
        with self.cv:
            return len(self.frames)

    def wait(self, pred, timeout=2.0, since=0):
        """The first frame from index @since on (parsed) for which @pred
        holds, waiting up to @timeout s; None if none came."""
        end = time.time() + timeout
        i = since
        with self.cv:
            while True:
                while i < len(self.frames):
                    p = Ether(self.frames[i])
                    i += 1
                    try:
                        if pred(p):
                            return p
                    except (IndexError, AttributeError):
                        pass
                left = end - time.time()
                if left <= 0:
                    return None
                self.cv.wait(left)

    def collect(self, pred, since=0, end=None):
        """Every frame received from index @since to @end (default: so far)
        that @pred accepts."""
        with self.cv:
            raw = self.frames[since:end]
        out = []
        for r in raw:
            p = Ether(r)
            try:
                if pred(p):
                    out.append(p)
            except (IndexError, AttributeError):
                pass
        return out

    def resolve(self, v6=False):
        """rnic's MAC, by ARP from the attacker's address (@v6: by a
        neighbour solicitation for 2001:db8::10 from 2001:db8::66)."""
        if self.rnic_mac:
            return self.rnic_mac
        if v6:
            return self._resolve6()
        for _ in range(5):
            m = self.mark()
            self.send(Ether(src=ATKMAC, dst='ff:ff:ff:ff:ff:ff') /
                      ARP(op=1, hwsrc=ATKMAC, psrc=ATK4, pdst=RNIC4))
            p = self.wait(lambda p: ARP in p and p[ARP].op == 2 and p[ARP].psrc == RNIC4,
                          1.0, m)
            if p:
                self.rnic_mac = p[ARP].hwsrc
                return self.rnic_mac
        raise SystemExit('FAIL: rnic does not answer ARP from the attacker')

    def _resolve6(self):
        tgt = socket.inet_pton(socket.AF_INET6, RNIC6)
        snm = 'ff02::1:ff' + tgt[13:14].hex() + ':' + tgt[14:16].hex()
        for _ in range(5):
            m = self.mark()
            self.send(Ether(src=ATKMAC, dst='33:33:ff:' + ':'.join('%02x' % b for b in tgt[13:])) /
                      IPv6(src=ATK6, dst=snm, hlim=255) / ICMPv6ND_NS(tgt=RNIC6) /
                      ICMPv6NDOptSrcLLAddr(lladdr=ATKMAC))
            p = self.wait(lambda p: ICMPv6ND_NA in p and p[ICMPv6ND_NA].tgt == RNIC6 and
                          ICMPv6NDOptDstLLAddr in p, 1.0, m)
            if p:
                self.rnic_mac = p[ICMPv6NDOptDstLLAddr].lladdr
                return self.rnic_mac
        raise SystemExit('FAIL: rnic does not answer neighbour solicitations from the attacker')

    def eth(self, src=ATKMAC):
        return Ether(src=src, dst=self.resolve())


# --- hand-written TCP --------------------------------------------------------
def ts_of(tcp):
    for o in tcp.options:
        if o[0] == 'Timestamp':
            return o[1]
    return None


class Conn:
    """One TCP conversation from the attacker (sequence numbers kept by hand)."""

    def __init__(self, link, dport=ECHO_PORT, sport=None, v6=False, dst=None, src=None):
        self.l = link
        self.v6 = v6
        self.dst = dst or (RNIC6 if v6 else RNIC4)
        self.src = src or (ATK6 if v6 else ATK4)
        self.dport = dport
        self.sport = sport or random.randrange(20000, 60000)
        self.iss = random.randrange(1 << 32)
        self.snd_nxt = self.iss
        self.rcv_nxt = None
        self.tsval = 1000
        self.ts_recent = None
        self.got = {}
        self.data = b''
        self.fin = False
        self.since = link.mark()

    def ip(self):
        return IPv6(src=self.src, dst=self.dst) if self.v6 else IP(src=self.src, dst=self.dst)

    def seg(self, flags, seq=None, ack=None, payload=b'', options=None, window=65535, ts=True):
        """A frame of this connection; timestamps added when negotiated."""
        opts = list(options or [])
        if ts and self.ts_recent is not None and not any(o[0] == 'Timestamp' for o in opts):
            self.tsval += 1
            opts.append(('Timestamp', (self.tsval, self.ts_recent)))
        t = TCP(sport=self.sport, dport=self.dport, flags=flags,
                seq=self.snd_nxt if seq is None else seq,
                ack=(self.rcv_nxt or 0) if ack is None else ack,
                window=window, options=opts)
        return self.l.eth() / self.ip() / t / (Raw(payload) if payload else b'')

    def mine(self, p):
        return (TCP in p and p[TCP].sport == self.dport and p[TCP].dport == self.sport and
                (IPv6 if self.v6 else IP) in p)

    def syn(self, options=(('MSS', 1460),), timeout=2.0):
        """Send a SYN; the SYN-ACK's TCP layer (state kept) or None."""
        m = self.l.mark()
        self.l.send(self.seg('S', seq=self.iss, ack=0, options=list(options)))
        p = self.l.wait(lambda p: self.mine(p) and p[TCP].flags & 0x12 == 0x12, timeout, m)
        if p is None:
            return None
        t = p[TCP]
        self.snd_nxt = self.iss + 1
        self.rcv_nxt = (t.seq + 1) & 0xffffffff
        ts = ts_of(t)
        if ts and any(o[0] == 'Timestamp' for o in options):
            self.ts_recent = ts[0]
        return t

    def handshake(self, options=(('MSS', 1460),), window=65535):
        t = self.syn(options)
        if t is not None:
            self.l.send(self.seg('A', window=window))
            self.since = self.l.mark()
        return t

    def send(self, data, seq=None, flags='PA', **kw):
        self.l.send(self.seg(flags, seq=seq, payload=data, **kw))
        if seq is None:
            self.snd_nxt = (self.snd_nxt + len(data)) & 0xffffffff

    def pump(self, timeout=0.5, ack=True):
        """Take rnic's segments that came: in-order payload appended to
        self.data (ACKed when @ack). Returns True when a RST came."""
        end = time.time() + timeout
        rst = False
        while True:
            m = self.l.mark()
            segs = self.l.collect(self.mine, self.since, m)
            self.since = m
            for p in segs:
                t = p[TCP]
                if t.flags & 0x04 and t.seq == self.rcv_nxt:
                    rst = True   # not the RSTs that answer our bogus segments
                if t.flags & 0x01:
                    self.fin = True
                pl = bytes(t.payload)
                if pl:
                    self.got[t.seq] = pl
                ts = ts_of(t)
                if ts and self.ts_recent is not None:
                    self.ts_recent = ts[0]
            moved = False
            while self.rcv_nxt in self.got:
                pl = self.got.pop(self.rcv_nxt)
                self.data += pl
                self.rcv_nxt = (self.rcv_nxt + len(pl)) & 0xffffffff
                moved = True
            if moved and ack:
                self.l.send(self.seg('A'))
            if rst or time.time() >= end:
                return rst
            time.sleep(0.02)

    def expect_echo(self, want, timeout=3.0):
        """Pump until @want has come back (True) or @timeout passed."""
        end = time.time() + timeout
        while time.time() < end:
            if self.pump(0.05):
                break
            if want in self.data:
                return True
        return want in self.data

    def ended(self, timeout=3.0):
        """Pump until rnic ends the connection (RST or FIN): True if it did."""
        end = time.time() + timeout
        while time.time() < end:
            if self.pump(0.05) or self.fin:
                return True
        return False

    def close(self):
        """RST: attack connections leave no state for a FIN exchange."""
        self.l.send(self.seg('R', ack=0, ts=False))


# --- the legitimate peer: the kernel ------------------------------------------
def legit_tcp(addr=RNIC4, port=ECHO_PORT, n=65536, timeout=10, src=None):
    """The kernel's TCP in the namespace: @n random bytes to rnic's echo and
    the same bytes back (from address @src when given). True when they came
    back whole."""
    fam = socket.AF_INET6 if ':' in addr else socket.AF_INET
    data = os.urandom(n)
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(timeout)
        if src:
            s.bind((src, 0))
        s.connect((addr, port))
        got = b''
        s.sendall(data[:n // 2])
        while len(got) < n // 2:
            b = s.recv(65536)
            if not b:
                break
            got += b
        s.sendall(data[n // 2:])
        s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        s.close()
        return got == data
    except OSError as e:
        print('legit client (%s): %s' % (addr, e))
        return False


def rand_mac(rnd):
    """A random locally administered unicast MAC from @rnd (random.Random)."""
    return '02:%02x:%02x:%02x:%02x:%02x' % tuple(rnd.randrange(256) for _ in range(5))


def flood_pinging(link, addr, frames, count=20):
    """Send @frames on @link while the kernel pings @addr @count times, 0.1 s
    apart. @return how many of the pings were answered."""
    import subprocess
    res = {}

    def pinger():
        r = subprocess.run(['ping', '-c', str(count), '-i', '0.1', '-W', '1', addr],
                           capture_output=True, text=True)
        res['out'] = r.stdout
    th = threading.Thread(target=pinger)
    th.start()
    for f in frames:
        link.send(f)
    th.join()
    for line in res.get('out', '').splitlines():
        if 'received' in line:
            return int(line.split(',')[1].split()[0])
    return 0


def legit_ping(addr, count=2):
    """The kernel's ping of @addr (ping6 for an IPv6 address)."""
    return os.system('ping -q -c %d -i 0.2 -W 2 %s >/dev/null 2>&1' % (count, addr)) == 0


if __name__ == '__main__':
    # hpeer.py legit [v4|v6|both]: the driver's legitimate client
    which = sys.argv[2] if len(sys.argv) > 2 else 'both'
    ok = True
    for a in ([RNIC4] if which == 'v4' else [RNIC6] if which == 'v6' else [RNIC4, RNIC6]):
        ok = check(legit_tcp(a), 'kernel TCP client served by rnic at %s' % a) and ok
        ok = check(legit_ping(a), 'kernel ping of %s answered' % a) and ok
    sys.exit(0 if ok else 1)
