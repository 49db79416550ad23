# A TCP sink for the kernel-peer tests: listens on PORT of every IPv4 and
# IPv6 address (a dual-stack socket; IPv4 alone where the kernel has no
# IPv6), creates
# the file READY once it listens (so the test starts rnic's side only
# then), takes one connection, and prints the SHA-256 and the byte count of
# everything received.  Usage: python3 sha_sink.py READY PORT
import hashlib
import socket
import sys

try:
    l = socket.socket(socket.AF_INET6)
    l.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("::", int(sys.argv[2])))
except OSError:
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("0.0.0.0", int(sys.argv[2])))
l.listen(1)
l.settimeout(120)
open(sys.argv[1], "w").close()
c, _ = l.accept()
h = hashlib.sha256()
n = 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    h.update(b)
    n += len(b)
c.close()
print(h.hexdigest(), n)
