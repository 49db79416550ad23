"""ARP spoofing and floods against rnic (target: hostile_echo).

1. Spoofing: once rnic has a resolved entry for its legitimate peer (the
   kernel, 192.0.2.1: the driver's warm-up talked to it), the attacker sends
   gratuitous ARP for 192.0.2.1 (a request and a reply, sender = target =
   192.0.2.1) and an unsolicited reply to rnic, all claiming MAC
   02:00:00:00:0b:ad. As Linux with arp_accept=0 keeps an established
   entry, rnic must go on sending to the kernel's real MAC: while the
   kernel pings rnic and then runs a TCP echo, no IPv4 frame for 192.0.2.1
   may leave rnic towards the fake MAC, and both must be served.
2. Flood: 6000 ARP requests for rnic's address from spoofed senders (3000
   from off-subnet addresses, 3000 from 192.0.2.100-249 with random MACs)
   while the kernel pings rnic: at least half the pings answered; then a
   fresh neighbour (the kernel from a new address, 192.0.2.2) must be
   resolved and served (a full neighbour table may not refuse it)."""
import random
import subprocess

from hpeer import (ARP, IP, KERN4, RNIC4, Ether, Link, check, counters,  # noqa: F401
                   done, flood_pinging, legit_tcp, rand_mac)

FAKE = '02:00:00:00:0b:ad'
link = Link()
link.macs.add(bytes.fromhex(FAKE.replace(':', '')))
rmac = link.resolve()

# 1. spoofing the established peer
m = link.mark()
for _ in range(3):
    link.send(Ether(src=FAKE, dst='ff:ff:ff:ff:ff:ff') /
              ARP(op=1, hwsrc=FAKE, psrc=KERN4, hwdst='00:00:00:00:00:00', pdst=KERN4))
    link.send(Ether(src=FAKE, dst='ff:ff:ff:ff:ff:ff') /
              ARP(op=2, hwsrc=FAKE, psrc=KERN4, hwdst='ff:ff:ff:ff:ff:ff', pdst=KERN4))
    link.send(Ether(src=FAKE, dst=rmac) /
              ARP(op=2, hwsrc=FAKE, psrc=KERN4, hwdst=rmac, pdst=RNIC4))
ping = subprocess.run(['ping', '-q', '-c', '5', '-i', '0.2', '-W', '2', RNIC4],
                      stdout=subprocess.DEVNULL)
check(ping.returncode == 0, 'kernel ping answered after gratuitous ARP for its address')
check(legit_tcp(RNIC4, n=8192, timeout=5), 'kernel TCP client served after the spoofing')
hijacked = link.collect(lambda p: p.dst == FAKE and IP in p and p[IP].dst == KERN4, m)
check(not hijacked, 'no frame for %s (ping replies, TCP) sent to the spoofed MAC (%d were: %s)' %
      (KERN4, len(hijacked), sorted(set(p[IP].sprintf('%IP.proto%') for p in hijacked))))

# 2. flood from many spoofed sources while the kernel pings
before = counters()
rnd = random.Random(27)
frames = []
for i in range(6000):
    mac = rand_mac(rnd)
    src = ('10.%d.%d.%d' % (i >> 16 & 255, i >> 8 & 255, i & 255) if i % 2 else
           '192.0.2.%d' % (100 + i % 150))
    frames.append(bytes(Ether(src=mac, dst='ff:ff:ff:ff:ff:ff') /
                        ARP(op=1, hwsrc=mac, psrc=src, pdst=RNIC4)))
recv = flood_pinging(link, RNIC4, frames)
after = counters()
check(recv >= 10, 'kernel pings answered during the ARP flood: %d of 20' % recv)
print('counters that rose: %s' % {k: after[k] - before.get(k, 0) for k in after
                                   if after[k] != before.get(k, 0)})
subprocess.run(['ip', 'addr', 'add', '192.0.2.2/24', 'dev', 'br0'])
check(legit_tcp(RNIC4, n=8192, src='192.0.2.2'),
      'a new neighbour (192.0.2.2) resolved and served after the flood')
done()
