#!/usr/bin/env python3
"""Linux-side checks of test_lwip_compat.sh (stdlib only, every wait bounded).

  tcp-echo HOST PORT BYTES SEED   send BYTES pseudo-random bytes (writes of
                                  1..4000 bytes), half-close, read the echo;
                                  the SHA-256 of both must match
  udp-echo HOST PORT COUNT        COUNT datagrams of 1..1472 bytes, each
                                  echoed unchanged (3 tries of 0.5 s each:
                                  60 s at most, within the script's 90 s)
  http-sha N                      SHA-256 of the body GET /data/N must have
  sink-reply PORT SECONDS         accept one connection on PORT, read to EOF,
                                  answer "sha256 <hex> <bytes>", close
Exit 0 = pass; prints one line of figures.
"""
import hashlib
import random
import socket
import sys
import threading
import time

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789\n"


def tcp_echo(host, port, nbytes, seed):
    rnd = random.Random(seed)
    data = bytes(rnd.getrandbits(8) for _ in range(nbytes))
    s = socket.create_connection((host, port), timeout=10)
    s.settimeout(20)
    got = bytearray()
    err = []

    def reader():
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got.extend(b)
        except OSError as e:  # noqa: PERF203
            err.append(e)

    t = threading.Thread(target=reader)
    t.start()
    t0 = time.monotonic()
    off = 0
    while off < nbytes:
        n = min(rnd.randint(1, 4000), nbytes - off)
        s.sendall(data[off:off + n])
        off += n
    s.shutdown(socket.SHUT_WR)
    t.join(60)
    dt = time.monotonic() - t0
    s.close()
    h1 = hashlib.sha256(data).hexdigest()
    h2 = hashlib.sha256(bytes(got)).hexdigest()
    print(f"tcp-echo {host}:{port}: sent {nbytes} received {len(got)} in {dt:.2f} s "
          f"sha256 {h1[:16]} / {h2[:16]}{' error ' + str(err[0]) if err else ''}")
    return 0 if (h1 == h2 and not err and not t.is_alive()) else 1


def udp_echo(host, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    rnd = random.Random(7)
    ok = 0
    for i in range(count):
        size = 1 if i == 0 else (1472 if i == 1 else rnd.randint(1, 1472))
        d = bytes(rnd.getrandbits(8) for _ in range(size))
        for _ in range(3):
            s.sendto(d, (host, port))
            try:
                while True:
                    r, a = s.recvfrom(4096)
                    if r == d:
                        ok += 1
                        break
            except socket.timeout:
                continue
            break
    print(f"udp-echo {host}:{port}: {ok}/{count} datagrams echoed unchanged")
    return 0 if ok == count else 1


def http_sha(n):
    h = hashlib.sha256()
    h.update(bytes(ALPHABET[i % len(ALPHABET)] for i in range(n)))
    print(h.hexdigest())
    return 0


def sink_reply(port, seconds):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(seconds)
    print("listening", flush=True)
    c, a = ls.accept()
    c.settimeout(20)
    h = hashlib.sha256()
    n = 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.sendall(f"sha256 {h.hexdigest()} {n}\n".encode())
    c.close()
    ls.close()
    print(f"sink-reply: {n} bytes from {a[0]}:{a[1]}", flush=True)
    return 0


def main():
    m = sys.argv[1]
    if m == "tcp-echo":
        return tcp_echo(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    if m == "udp-echo":
        return udp_echo(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    if m == "sink-reply":
        return sink_reply(int(sys.argv[2]), float(sys.argv[3]))
    if m == "http-sha":
        return http_sha(int(sys.argv[2]))
    print("unknown mode", m)
    return 2


if __name__ == "__main__":
    sys.exit(main())
