# The kernel's end of tests/integration/net/mq_flows.sh: many TCP
# connections at once, each with its own pseudo-random bytes.
#   python3 mq_kernel.py client ADDR PORT CONNS BYTES
#   python3 mq_kernel.py server READY PORT CONNS
# Prints a JSON list of [local port, remote port, bytes, SHA-256], one per
# connection (what mq_check.py compares with rnic's view).
import hashlib
import json
import random
import socket
import sys
import threading

out = []
lock = threading.Lock()


def send(s, n, seed):
    names = [s.getsockname()[1], s.getpeername()[1]]
    h = hashlib.sha256()
    rnd = random.Random(seed)
    left = n
    while left:
        b = rnd.randbytes(min(left, 1 << 16))
        h.update(b)
        s.sendall(b)
        left -= len(b)
    s.shutdown(socket.SHUT_WR)
    s.settimeout(60)
    while s.recv(1 << 16):   # until rnic closes too
        pass
    with lock:
        out.append(names + [n, h.hexdigest()])
    s.close()


def recv(c):
    names = [c.getsockname()[1], c.getpeername()[1]]
    h = hashlib.sha256()
    n = 0
    c.settimeout(120)
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
    with lock:
        out.append(names + [n, h.hexdigest()])
    c.close()


mode = sys.argv[1]
th = []
if mode == "client":
    addr, port, conns, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    socks = [socket.create_connection((addr, port), timeout=30) for _ in range(conns)]
    th = [threading.Thread(target=send, args=(s, n, i)) for i, s in enumerate(socks)]
else:
    ready, port, conns = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", port))
    lsock.listen(256)
    lsock.settimeout(120)
    open(ready, "w").close()
    for _ in range(conns):
        c, _ = lsock.accept()
        th.append(threading.Thread(target=recv, args=(c,)))
        th[-1].start()
for t in th:
    if not t.is_alive() and mode == "client":
        t.start()
for t in th:
    t.join()
print(json.dumps(out))
sys.exit(0 if len(out) == conns else 1)
