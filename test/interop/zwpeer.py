#!/usr/bin/env python3
"""zwpeer.py -- zero-window attackers for test_tcp_tx_fairness.sh (python3,
stdlib only; run inside the test's namespace).

  zwpeer.py HOST SECS KIND...

Opens one connection per KIND to HOST: "chargen" (port 19: reads 2000
bytes, then never again) or "echo" (port 7: writes without ever reading
until the writes block). Every socket has the smallest receive buffer
Linux allows (SO_RCVBUF set before connect), so its window closes at once
and stays at zero: the node's service fills its send buffer with copies
it cannot send. Prints "READY n" once the connections are in place (a
second after the last write or read), then holds them SECS seconds (Linux
answers the node's zero-window probes all the while), prints
"HOLDING done" and exits; the kernel then resets the connections (unread
data). Every loop and socket operation is bounded.
"""
import socket
import sys
import time


def out(msg):
    print(msg, flush=True)


def main(argv):
    host, secs, kinds = argv[1], float(argv[2]), argv[3:]
    socks = []
    for k in kinds:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
        s.settimeout(10.0)
        s.connect((host, 19 if k == "chargen" else 7))
        if k == "chargen":
            got = 0
            while got < 2000:
                b = s.recv(2000 - got)
                if not b:
                    out("FAIL chargen closed after %d bytes" % got)
                    return 1
                got += len(b)
        else:
            s.setblocking(False)
            data = b"x" * 65536
            sent = 0
            deadline = time.monotonic() + 10.0
            while time.monotonic() < deadline:
                try:
                    sent += s.send(data)
                except BlockingIOError:
                    time.sleep(0.2)
                    try:
                        sent += s.send(data)
                    except BlockingIOError:
                        break
            out("echo attacker wrote %d bytes" % sent)
        socks.append(s)
        time.sleep(1.0)  # one after another
    out("READY %d" % len(socks))
    time.sleep(secs)
    out("HOLDING done")
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
