"""IPv6 abuse (target: hostile_echo on 2001:db8::10).

1. Long extension-header chains: an ICMPv6 echo request and a TCP SYN to
   port 5001 behind a Hop-by-Hop header and two Destination Options headers
   of 256 bytes each (776 bytes of headers), behind 100 eight-byte
   Destination Options headers, and behind a header whose length runs past
   the packet. Each must be answered correctly or dropped and counted (a
   drop or nd/ip6 counter rises); rnic must stay up.
2. Neighbour solicitation flood: 5000 NS for rnic's address from distinct
   spoofed sources (2001:db8::1:N) with random source link-layer addresses,
   while the kernel pings rnic (at least half answered); then a fresh
   neighbour (the kernel from 2001:db8::2) must be resolved and served.
3. Spoofed NA for the legitimate peer 2001:db8::1 (fake MAC
   02:00:00:00:0b:ad): without the Override flag (RFC 4861 7.2.5: the
   cached address stays), with Override but hop limit 64 (7.1.2: invalid),
   and with Override inside an atomic fragment and inside two fragments
   (RFC 6980: ND in fragments is ignored; an NS for rnic's address in an
   atomic fragment must not be answered either). Afterwards, while the kernel
   pings rnic over IPv6, no frame for 2001:db8::1 may leave rnic towards
   the fake MAC, and the pings must be answered."""
import random
import subprocess

from hpeer import (ATK6, ATKMAC, KERN6, RNIC6, TCP, Ether, ICMPv6EchoReply,
                   ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,
                   ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, IPv6,
                   IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                   Link, PadN, Raw, check, counters, done, legit_tcp, rose,
                   flood_pinging, rand_mac)

FAKE = '02:00:00:00:0b:ad'
link = Link()
link.macs.add(bytes.fromhex(FAKE.replace(':', '')))
rmac = link.resolve()
eth = Ether(src=ATKMAC, dst=rmac)


def pad(n):
    return [PadN(optdata=b'\x00' * n)]


def answered_or_counted(name, pkt, pred):
    before = counters()
    m = link.mark()
    link.send(pkt)
    got = link.wait(pred, 1.5, m)
    after = counters()
    r = rose(before, after, 'drops.', 'ip6', 'bad', 'unknown', 'nd_')
    check(got is not None or r > 0,
          '%s: answered (%s) or dropped and counted (+%d)' % (name, got is not None, r))


# 1. extension-header chains
long_chain = (IPv6ExtHdrHopByHop(options=pad(250)) / IPv6ExtHdrDestOpt(options=pad(250)) /
              IPv6ExtHdrDestOpt(options=pad(250)))
short_chain = IPv6ExtHdrDestOpt(options=pad(4))
for _ in range(99):
    short_chain = short_chain / IPv6ExtHdrDestOpt(options=pad(4))
echo_reply = (lambda p: ICMPv6EchoReply in p and p[IPv6].src == RNIC6)
for name, chain in (('776-byte chain', long_chain), ('100 eight-byte headers', short_chain)):
    print('%s: %d bytes of headers' % (name, len(bytes(chain))))
    answered_or_counted('ICMPv6 echo behind a ' + name,
                        eth / IPv6(src=ATK6, dst=RNIC6) / chain / ICMPv6EchoRequest(id=7, seq=1),
                        echo_reply)
    sport = random.randrange(20000, 60000)
    answered_or_counted('TCP SYN behind a ' + name,
                        eth / IPv6(src=ATK6, dst=RNIC6) / chain /
                        TCP(sport=sport, dport=5001, flags='S', seq=1),
                        lambda p, s=sport: TCP in p and p[TCP].dport == s)
# a Destination Options header that claims 2 KiB in a 100-byte packet
bad = bytearray(bytes(eth / IPv6(src=ATK6, dst=RNIC6) / IPv6ExtHdrDestOpt(options=pad(4)) /
                      ICMPv6EchoRequest(id=7, seq=2, data=b'x' * 40)))
bad[14 + 40 + 1] = 255
answered_or_counted('a header running past the packet', bytes(bad),
                    lambda p: ICMPv6EchoReply in p and p[ICMPv6EchoReply].seq == 2)
check(legit_tcp(RNIC6, n=8192), 'kernel TCP over IPv6 served after the header chains')

# 2. NS flood
before = counters()
rnd = random.Random(6)
frames = []
for i in range(5000):
    mac = rand_mac(rnd)
    src = '2001:db8::1:%x' % (i + 1)
    frames.append(bytes(Ether(src=mac, dst=rmac) / IPv6(src=src, dst=RNIC6, hlim=255) /
                        ICMPv6ND_NS(tgt=RNIC6) / ICMPv6NDOptSrcLLAddr(lladdr=mac)))
recv = flood_pinging(link, RNIC6, frames)
after = counters()
check(recv >= 10, 'kernel ping6 answered during the NS flood: %d of 20' % recv)
print('counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                   if after[k] != before.get(k, 0)})
subprocess.run(['ip', 'addr', 'add', '2001:db8::2/64', 'dev', 'br0', 'nodad'])
check(legit_tcp(RNIC6, n=8192, src='2001:db8::2'),
      'a new neighbour (2001:db8::2) resolved and served after the flood')

# 3. spoofed NA for the legitimate peer
check(legit_tcp(RNIC6, n=4096), 'the kernel (2001:db8::1) served before the spoofed NAs')
m = link.mark()
na = ICMPv6ND_NA(tgt=KERN6, R=0, S=0, O=1) / ICMPv6NDOptDstLLAddr(lladdr=FAKE)
na_no_o = ICMPv6ND_NA(tgt=KERN6, R=0, S=0, O=0) / ICMPv6NDOptDstLLAddr(lladdr=FAKE)
ip = IPv6(src=KERN6, dst=RNIC6, hlim=255)
link.send(Ether(src=FAKE, dst=rmac) / ip / na_no_o)
link.send(Ether(src=FAKE, dst=rmac) / IPv6(src=KERN6, dst=RNIC6, hlim=64) / na)
link.send(Ether(src=FAKE, dst=rmac) / ip / IPv6ExtHdrFragment(offset=0, m=0, id=99) / na)
whole = bytes(IPv6(src=KERN6, dst=RNIC6, hlim=255) / na)[40:]   # with its checksum
first = IPv6ExtHdrFragment(nh=58, offset=0, m=1, id=100) / Raw(whole[:16])
second = IPv6ExtHdrFragment(nh=58, offset=2, m=0, id=100) / Raw(whole[16:])
link.send(Ether(src=FAKE, dst=rmac) / ip / first)
link.send(Ether(src=FAKE, dst=rmac) / ip / second)
m2 = link.mark()
link.send(Ether(src=ATKMAC, dst=rmac) / IPv6(src=ATK6, dst=RNIC6, hlim=255) /
          IPv6ExtHdrFragment(offset=0, m=0, id=101) / ICMPv6ND_NS(tgt=RNIC6) /
          ICMPv6NDOptSrcLLAddr(lladdr=ATKMAC))
na_back = link.wait(lambda p: ICMPv6ND_NA in p and p[IPv6].dst == ATK6, 1.0, m2)
check(na_back is None, 'an NS in an atomic fragment is not answered (RFC 6980)')
ping = subprocess.run(['ping', '-q', '-c', '5', '-i', '0.2', '-W', '2', RNIC6],
                      stdout=subprocess.DEVNULL)
check(ping.returncode == 0, 'kernel ping6 answered after the spoofed NAs')
hijacked = link.collect(lambda p: p.dst == FAKE and IPv6 in p and p[IPv6].dst == KERN6, m)
check(not hijacked, 'no frame for %s sent to the spoofed MAC (%d were)' % (KERN6, len(hijacked)))
check(legit_tcp(RNIC6, n=8192), 'kernel TCP over IPv6 served after the spoofed NAs')
done()
