# A TCP source for the kernel-peer tests: connects to HOST PORT (IPv4 or
# IPv6), sends BYTES pseudo-random bytes (a fixed seed; BYTES may end in
# K, M or G), half-closes, waits for the peer to close, and prints the
# SHA-256 of what it sent and the byte count.
# Usage: python3 sha_source.py HOST PORT BYTES
import hashlib
import random
import socket
import sys

host, port, a = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = int(a[:-1]) << {"K": 10, "M": 20, "G": 30}[a[-1]] if a[-1] in "KMG" else int(a)
h = hashlib.sha256()
rnd = random.Random(11)
s = socket.create_connection((host, port), timeout=30)
left = n
while left:
    b = rnd.randbytes(min(left, 1 << 20))
    h.update(b)
    s.sendall(b)
    left -= len(b)
s.shutdown(socket.SHUT_WR)
s.settimeout(30)
s.recv(1)
s.close()
print(h.hexdigest(), n)
