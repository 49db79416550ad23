# A TCP sink for the kernel-peer tests: listens on 0.0.0.0:PORT, creates
# the file READY once it listens (so the test starts rnic's side only
# then), takes one connection, and prints the SHA-256 and the byte count of
# everything received.  Usage: python3 sha_sink.py READY PORT
import hashlib
import socket
import sys

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
