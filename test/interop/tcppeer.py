#!/usr/bin/env python3
"""tcppeer.py -- the Linux side of wisp's TCP interop tests (python3, stdlib
only). Runs inside the test's network namespace; every socket has a timeout
and every loop is bounded by the amount of data or a deadline.

Each mode prints progress lines and, last, one "RESULT ok ..." or
"RESULT fail ..." line; the exit status is 0 only on success.

Modes (HOST is wisp-node's address, or for the servers the local address):
  discard HOST PORT BYTES WSIZE     send BYTES in writes of WSIZE bytes
                                    (WSIZE "random": uniform 1..1460), then
                                    shut down the write side and wait for
                                    the peer's close; goodput = BYTES over
                                    connect..EOF (MB = 10^6 bytes)
  echo HOST PORT BYTES              send BYTES of random data and read the
                                    echo concurrently (two threads); SHA-256
                                    of both must match
  echo-stall HOST PORT BYTES SECS   like echo, the reader starts SECS late
  echo-parallel HOST PORT N BYTES   N echo transfers of BYTES at once
  echo-reset HOST PORT BYTES        send up to BYTES without reading, then
                                    reset the connection (SO_LINGER 0)
  hold HOST PORT N SECS             open N connections, keep them idle
  echo-small HOST PORT              small exchanges on fresh connections and
                                    a ping-pong on one connection
  chargen HOST PORT BYTES           read at least BYTES from chargen, verify
                                    every byte against the RFC 864 pattern,
                                    then shut down and drain (still checked)
                                    until the peer closes
  chargen-abort HOST PORT BYTES     read BYTES from chargen, then close with
                                    unread data (Linux sends RST)
  conns HOST PORT COUNT             COUNT echo connections in sequence, each
                                    exchanging a few bytes, then closed
  server-recv HOST PORT             accept one connection, read until EOF,
                                    print the byte count and SHA-256, close
  server-send HOST PORT BYTES       accept one connection, send BYTES of
                                    random data, print the SHA-256, close
  small HOST PORT BYTES WMAX STALL  TCP_NODELAY, BYTES in writes of random
                                    size 1..WMAX (one segment each while the
                                    window is open); a reader thread reads
                                    what comes back (echo) from STALL s on,
                                    or none when STALL < 0 (discard: wait
                                    for the peer's close); prints this
                                    namespace's Tcp RetransSegs and TcpExt
                                    TCPDSACKRecv deltas (retrans=, dsack=)
  dsack HOST PORT IFACE             send 100 bytes, capture that segment on
                                    IFACE (AF_PACKET) and, once the peer
                                    acknowledged it, send the captured frame
                                    again (a duplicate); the peer's D-SACK
                                    (RFC 2883) must raise the kernel's
                                    TcpExt TCPDSACKRecv counter
"""
import hashlib
import os
import random
import socket
import struct
import sys
import threading
import time

TIMEOUT = 30.0          # per blocking socket operation
fails = []


def out(msg):
    print(msg, flush=True)


def finish(extra=""):
    for f in fails[:30]:
        out("FAIL " + f)
    if fails:
        out("RESULT fail (%d problems)%s" % (len(fails), extra))
        sys.exit(1)
    out("RESULT ok" + extra)
    sys.exit(0)


def connect(host, port, nodelay=False):
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if nodelay else 0)
    s.settimeout(TIMEOUT)
    return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            raise EOFError("peer closed after %d of %d bytes" % (len(buf), n))
        buf += b
    return bytes(buf)


def drain_to_eof(s, limit):
    """Read until EOF; returns the bytes read (at most limit, else fails)."""
    got = 0
    while True:
        b = s.recv(65536)
        if not b:
            return got
        got += len(b)
        if got > limit:
            raise RuntimeError("more than %d unexpected bytes before EOF" % limit)


# ------------------------------------------------------------- discard
def mode_discard(host, port, nbytes, wsize):
    rnd = random.Random(12345)
    block = os.urandom(1 << 20)
    mv = memoryview(block)
    t0 = time.monotonic()
    s = connect(host, port)
    sent = 0
    writes = 0
    fixed = None if wsize == "random" else min(int(wsize), 1 << 19)
    span = len(block) - (fixed or 1460)
    while sent < nbytes:
        n = fixed if fixed is not None else rnd.randint(1, 1460)
        n = min(n, nbytes - sent)
        off = sent % span
        s.sendall(mv[off:off + n])
        sent += n
        writes += 1
    t_sent = time.monotonic()
    s.shutdown(socket.SHUT_WR)
    extra = drain_to_eof(s, 0)
    t1 = time.monotonic()
    s.close()
    dt = t1 - t0
    out("discard: %d bytes in %d writes of %s, queued in %.3f s, closed by the peer after %.3f s"
        % (sent, writes, wsize, t_sent - t0, dt))
    if extra:
        fails.append("discard: got %d bytes back" % extra)
    finish(" bytes=%d secs=%.3f mbps=%.2f" % (sent, dt, sent / dt / 1e6))


# ---------------------------------------------------------------- echo
def echo_transfer(host, port, nbytes, tag="echo", stall=0.0, seed=7):
    """Send nbytes of random data and read the echo concurrently (reader
    thread, starting after stall seconds). Appends to fails; returns
    (bytes back, seconds)."""
    data = os.urandom(nbytes)
    want = hashlib.sha256(data).hexdigest()
    s = connect(host, port)
    res = {"got": 0, "hash": None, "err": None}

    def reader():
        h = hashlib.sha256()
        got = 0
        if stall:
            time.sleep(stall)
        try:
            while True:
                b = s.recv(1 << 16)
                if not b:
                    break
                h.update(b)
                got += len(b)
                if got > nbytes:
                    break
        except Exception as e:       # noqa: BLE001 -- reported as a failure
            res["err"] = "reader: %r" % (e,)
        res["got"] = got
        res["hash"] = h.hexdigest()

    t0 = time.monotonic()
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    rnd = random.Random(seed)
    mv = memoryview(data)
    off = 0
    try:
        while off < nbytes:
            n = min(rnd.randint(1, 65536), nbytes - off)
            s.sendall(mv[off:off + n])
            off += n
        s.shutdown(socket.SHUT_WR)
    except Exception as e:           # noqa: BLE001
        fails.append("%s: send failed after %d bytes: %r" % (tag, off, e))
    th.join(TIMEOUT * 4)
    dt = time.monotonic() - t0
    if th.is_alive():
        fails.append("%s: reader still running after the deadline (%d bytes back)" % (tag, res["got"]))
    s.close()
    if res["err"]:
        fails.append("%s: %s" % (tag, res["err"]))
    out("%s: sent %d bytes, got %d back in %.3f s (%.2f MB/s each way)"
        % (tag, off, res["got"], dt, res["got"] / dt / 1e6))
    if res["got"] != nbytes:
        fails.append("%s: got %d bytes back, want %d" % (tag, res["got"], nbytes))
    elif res["hash"] != want:
        fails.append("%s: SHA-256 of the echo differs" % tag)
    else:
        out("%s: SHA-256 matches (%s)" % (tag, want))
    return res["got"], dt


def mode_echo(host, port, nbytes):
    got, dt = echo_transfer(host, port, nbytes)
    finish(" bytes=%d secs=%.3f" % (got, dt))


def mode_echo_stall(host, port, nbytes, stall):
    """The reader starts late: the node's send side and then its receive
    window fill up (zero windows both ways); all must flow afterwards."""
    got, dt = echo_transfer(host, port, nbytes, tag="echo-stall", stall=stall)
    finish(" bytes=%d secs=%.3f" % (got, dt))


def mode_echo_parallel(host, port, conns, nbytes):
    """conns echo transfers at once (the node's shared segment and buffer
    pools run short: writes see WISP_ERR_MEM and must resume)."""
    ths = []
    res = []
    t0 = time.monotonic()
    for i in range(conns):
        th = threading.Thread(target=lambda i=i: res.append(
            echo_transfer(host, port, nbytes, tag="echo-parallel[%d]" % i, seed=100 + i)), daemon=True)
        th.start()
        ths.append(th)
    for th in ths:
        th.join(TIMEOUT * 5)
    dt = time.monotonic() - t0
    total = sum(g for g, _ in res)
    out("echo-parallel: %d connections x %d bytes: %d bytes back in %.3f s (%.2f MB/s in all)"
        % (conns, nbytes, total, dt, total / dt / 1e6))
    if len(res) != conns:
        fails.append("echo-parallel: only %d of %d transfers finished" % (len(res), conns))
    finish(" bytes=%d" % total)


def mode_echo_reset(host, port, nbytes):
    """Send without reading, then reset the connection (SO_LINGER 0): the
    node must free what it still holds for it (error callback)."""
    s = connect(host, port)
    out("LOCALPORT %d" % s.getsockname()[1])
    s.settimeout(2.0)
    sent = 0
    block = os.urandom(65536)
    try:
        while sent < nbytes:
            sent += s.send(block[:min(len(block), nbytes - sent)])
    except socket.timeout:
        pass                          # both windows full: fine
    time.sleep(0.3)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    out("echo-reset: sent %d bytes without reading, then reset" % sent)
    time.sleep(0.3)
    finish(" sent=%d" % sent)


def mode_hold(host, port, conns, secs):
    """Open conns connections and keep them idle for secs seconds (the
    node is stopped meanwhile: it must abort them)."""
    socks = []
    for _ in range(conns):
        s = connect(host, port)
        socks.append(s)
        out("LOCALPORT %d" % s.getsockname()[1])
    out("HELD %d" % conns)
    time.sleep(secs)
    for s in socks:
        s.close()
    finish()


def mode_echo_small(host, port):
    sizes = [1, 2, 7, 100, 536, 1000, 1459, 1460, 1461, 2920, 2921, 4000, 5840, 8192, 10000, 65536, 100000]
    for n in sizes:
        data = os.urandom(n)
        s = connect(host, port)
        try:
            s.sendall(data)
            got = recv_exact(s, n)
            if got != data:
                fails.append("echo-small %d: data differs" % n)
            s.shutdown(socket.SHUT_WR)
            extra = drain_to_eof(s, 0)
            if extra:
                fails.append("echo-small %d: %d extra bytes" % (n, extra))
        except Exception as e:       # noqa: BLE001
            fails.append("echo-small %d: %r" % (n, e))
        s.close()
    out("echo-small: %d sizes %s..%s exchanged on fresh connections" % (len(sizes), sizes[0], sizes[-1]))
    # Ping-pong on one connection (Nagle and delayed ACK on the node
    # must not add a delay per exchange: the reply carries data).
    for nodelay in (True, False):
        s = connect(host, port, nodelay=nodelay)
        n_ex = 200
        t0 = time.monotonic()
        try:
            for i in range(n_ex):
                msg = b"ping %05d\r\n" % i
                s.sendall(msg)
                if recv_exact(s, len(msg)) != msg:
                    fails.append("ping-pong %d: data differs" % i)
                    break
            s.shutdown(socket.SHUT_WR)
            drain_to_eof(s, 0)
        except Exception as e:       # noqa: BLE001
            fails.append("ping-pong (nodelay %s): %r" % (nodelay, e))
        dt = time.monotonic() - t0
        s.close()
        out("echo-small: ping-pong of %d 12-byte messages (TCP_NODELAY %s): %.3f s, %.2f ms per exchange"
            % (n_ex, "on" if nodelay else "off", dt, dt * 1e3 / n_ex))
        if dt > 10.0:
            fails.append("ping-pong (nodelay %s) took %.1f s for %d exchanges" % (nodelay, dt, n_ex))
    finish()


# ------------------------------------------------------------- chargen
def chargen_period():
    chars = bytes(range(0x20, 0x7F))          # the 95 printing characters
    assert len(chars) == 95
    ring = chars + chars
    # RFC 864: line i = 72 characters starting at character i mod 95, CR LF.
    return b"".join(ring[i:i + 72] + b"\r\n" for i in range(95))


def mode_chargen(host, port, nbytes):
    period = chargen_period()
    P = len(period)                           # 7030
    rep = period * ((1 << 16) // P + 3)
    s = connect(host, port)
    t0 = time.monotonic()
    off = 0          # stream offset
    bad = None

    def check(b):
        nonlocal off, bad
        p = off % P
        if bad is None and rep[p:p + len(b)] != b:
            for i in range(len(b)):
                if rep[p + i] != b[i]:
                    pos = off + i
                    bad = "byte %d (line %d, column %d) is %r, want %r" % (
                        pos, pos // 74, pos % 74, bytes([b[i]]), bytes([rep[p + i]]))
                    break
        off += len(b)

    try:
        while off < nbytes:
            b = s.recv(1 << 16)
            if not b:
                fails.append("chargen: peer closed after %d bytes" % off)
                break
            check(b)
        t1 = time.monotonic()
        main = off
        # Clean close: our FIN, then everything still in flight until the
        # peer's FIN (closing with unread data would make Linux send RST).
        s.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            b = s.recv(1 << 16)
            if not b:
                break
            check(b)
        else:
            fails.append("chargen: no FIN from the peer within %.0f s of our FIN" % TIMEOUT)
    except Exception as e:           # noqa: BLE001
        fails.append("chargen: %r after %d bytes" % (e, off))
        t1 = time.monotonic()
        main = off
    s.close()
    if bad:
        fails.append("chargen: pattern mismatch at " + bad)
    dt = t1 - t0
    out("chargen: %d bytes (%d lines) verified in %.3f s (%.2f MB/s), %d more drained after our FIN"
        % (main, main // 74, dt, main / dt / 1e6 if dt > 0 else 0, off - main))
    if off % 74 != 0 and not fails:
        out("chargen: stream ended in the middle of a line (offset %d): fine, the close may cut a line" % off)
    finish(" bytes=%d total=%d" % (main, off))


def mode_chargen_abort(host, port, nbytes):
    """Read nbytes from chargen, then close with unread data queued: Linux
    resets the connection (RFC 1122 4.2.2.13); the node must free it."""
    s = connect(host, port)
    out("LOCALPORT %d" % s.getsockname()[1])
    got = 0
    while got < nbytes:
        b = s.recv(min(1 << 16, nbytes - got))
        if not b:
            fails.append("chargen-abort: peer closed after %d bytes" % got)
            break
        got += len(b)
    time.sleep(0.2)                  # let more data arrive unread
    s.close()
    out("chargen-abort: read %d bytes, closed with unread data (RST)" % got)
    finish(" bytes=%d" % got)


# --------------------------------------------------------------- conns
def mode_conns(host, port, count):
    ok = 0
    t0 = time.monotonic()
    for i in range(count):
        msg = b"connection %d\r\n" % i
        try:
            s = connect(host, port)
            s.sendall(msg)
            if recv_exact(s, len(msg)) != msg:
                fails.append("conn %d: echo differs" % i)
            else:
                # our FIN, then the server's: the server has finished this
                # connection before the next one comes (a server with a
                # thread per connection and a bounded slot set refuses
                # once its slots lag behind a client that never waits)
                s.shutdown(socket.SHUT_WR)
                extra = s.recv(64)
                if extra:
                    fails.append("conn %d: %d bytes after the echo" % (i, len(extra)))
                else:
                    ok += 1
            s.close()
        except Exception as e:       # noqa: BLE001
            fails.append("conn %d: %r" % (i, e))
            if len(fails) > 20:
                break
    dt = time.monotonic() - t0
    out("conns: %d of %d connections exchanged and closed in %.3f s (%.2f ms each)"
        % (ok, count, dt, dt * 1e3 / max(count, 1)))
    if ok != count:
        fails.append("conns: only %d of %d succeeded" % (ok, count))
    finish(" ok=%d" % ok)


# ------------------------------------------------------------- servers
def listen(host, port):
    l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((host, port))
    l.listen(1)
    l.settimeout(TIMEOUT)
    out("LISTENING %s:%d" % (host, port))
    c, peer = l.accept()
    l.close()
    c.settimeout(TIMEOUT)
    out("accepted %s:%d" % peer)
    return c


def mode_server_recv(host, port):
    c = listen(host, port)
    h = hashlib.sha256()
    got = 0
    t0 = time.monotonic()
    try:
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            h.update(b)
            got += len(b)
    except Exception as e:           # noqa: BLE001
        fails.append("server-recv: %r after %d bytes" % (e, got))
    dt = time.monotonic() - t0
    c.close()
    out("server-recv: %d bytes in %.3f s (%.2f MB/s), sha256 %s" % (got, dt, got / dt / 1e6 if dt else 0,
                                                                     h.hexdigest()))
    finish(" bytes=%d sha256=%s" % (got, h.hexdigest()))


def mode_server_send(host, port, nbytes):
    data = os.urandom(nbytes)
    want = hashlib.sha256(data).hexdigest()
    c = listen(host, port)
    t0 = time.monotonic()
    try:
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        extra = drain_to_eof(c, 0)   # the peer closes after our FIN
        if extra:
            fails.append("server-send: got %d bytes" % extra)
    except Exception as e:           # noqa: BLE001
        fails.append("server-send: %r" % (e,))
    dt = time.monotonic() - t0
    c.close()
    out("server-send: %d bytes in %.3f s (%.2f MB/s incl. close), sha256 %s"
        % (nbytes, dt, nbytes / dt / 1e6 if dt else 0, want))
    finish(" bytes=%d sha256=%s" % (nbytes, want))


def netstat_counter(name):
    """TcpExt counter of this namespace (/proc/net/netstat)."""
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    for i in range(0, len(lines) - 1, 2):
        keys, vals = lines[i].split(), lines[i + 1].split()
        if keys and keys[0] == "TcpExt:" and name in keys:
            return int(vals[keys.index(name)])
    raise RuntimeError("no TcpExt %s in /proc/net/netstat" % name)


def snmp_counter(name):
    """Tcp counter of this namespace (/proc/net/snmp)."""
    with open("/proc/net/snmp") as f:
        lines = f.read().splitlines()
    for i in range(0, len(lines) - 1, 2):
        keys, vals = lines[i].split(), lines[i + 1].split()
        if keys and keys[0] == "Tcp:" and name in keys:
            return int(vals[keys.index(name)])
    raise RuntimeError("no Tcp %s in /proc/net/snmp" % name)


def mode_small(host, port, nbytes, wmax, stall):
    """Tiny TCP_NODELAY writes that fill the peer's whole window while its
    application reads slowly (echo: the node's echo thread stops reading
    while we do not read its echo). The sender's retransmissions are
    counted: data the window admitted and the peer dropped is resent."""
    rtx0, ds0 = snmp_counter("RetransSegs"), netstat_counter("TCPDSACKRecv")
    data = os.urandom(nbytes)
    want = hashlib.sha256(data).hexdigest()
    s = connect(host, port, nodelay=True)
    res = {"got": 0, "hash": None, "err": None}

    def reader():
        h = hashlib.sha256()
        got = 0
        time.sleep(stall)
        try:
            while got <= nbytes:
                b = s.recv(1 << 16)
                if not b:
                    break
                h.update(b)
                got += len(b)
        except Exception as e:       # noqa: BLE001 -- reported as a failure
            res["err"] = "reader: %r" % (e,)
        res["got"] = got
        res["hash"] = h.hexdigest()

    t0 = time.monotonic()
    th = None
    if stall >= 0:
        th = threading.Thread(target=reader, daemon=True)
        th.start()
    rnd = random.Random(1234)
    mv = memoryview(data)
    off = writes = 0
    try:
        while off < nbytes:
            n = min(rnd.randint(1, wmax), nbytes - off)
            s.sendall(mv[off:off + n])
            off += n
            writes += 1
        s.shutdown(socket.SHUT_WR)
        if th is None:
            extra = drain_to_eof(s, 0)
            if extra:
                fails.append("small: got %d bytes back from a discard service" % extra)
    except Exception as e:           # noqa: BLE001
        fails.append("small: send failed after %d bytes: %r" % (off, e))
    if th is not None:
        th.join(TIMEOUT * 4)
        if th.is_alive():
            fails.append("small: reader still running after the deadline (%d bytes back)" % res["got"])
    dt = time.monotonic() - t0
    s.close()
    rtx, ds = snmp_counter("RetransSegs") - rtx0, netstat_counter("TCPDSACKRecv") - ds0
    out("small: %d bytes in %d writes of 1..%d bytes (TCP_NODELAY) in %.3f s; sender retransmissions %d,"
        " D-SACKs received %d" % (off, writes, wmax, dt, rtx, ds))
    if th is not None:
        if res["err"]:
            fails.append("small: %s" % res["err"])
        if res["got"] != nbytes:
            fails.append("small: got %d bytes back, want %d" % (res["got"], nbytes))
        elif res["hash"] != want:
            fails.append("small: SHA-256 of the echo differs")
        else:
            out("small: the echo's SHA-256 matches")
    finish(" bytes=%d secs=%.3f retrans=%d dsack=%d" % (off, dt, rtx, ds))


def mode_dsack(host, port, iface):
    packet_outgoing = 4
    before = netstat_counter("TCPDSACKRecv")
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL: outgoing frames too
    raw.bind((iface, 0))
    raw.settimeout(0.2)
    c = socket.create_connection((host, port), timeout=TIMEOUT)
    lport = c.getsockname()[1]
    c.sendall(b"D" * 100)
    frame = None
    deadline = time.monotonic() + 5.0
    while frame is None and time.monotonic() < deadline:
        try:
            data, addr = raw.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] != packet_outgoing or len(data) < 14 + 20 + 20 or data[12:14] != b"\x08\x00":
            continue
        ip = data[14:]
        ihl = (ip[0] & 0x0f) * 4
        tot = struct.unpack("!H", ip[2:4])[0]
        if ip[9] != 6 or socket.inet_ntoa(ip[16:20]) != host:
            continue
        tcp = ip[ihl:]
        sport, dport = struct.unpack("!HH", tcp[0:4])
        doff = (tcp[12] >> 4) * 4
        if sport == lport and dport == port and tot - ihl - doff == 100:
            frame = data[:14 + tot]
    if frame is None:
        fails.append("dsack: the 100-byte segment was not seen on %s" % iface)
        finish()
    out("dsack: captured the data segment (%d bytes); sending it again after the ACK" % len(frame))
    time.sleep(0.5)                  # acknowledged meanwhile (delayed ACK <= 200 ms)
    raw.send(frame)
    after = before
    deadline = time.monotonic() + 5.0
    while after == before and time.monotonic() < deadline:
        time.sleep(0.05)
        after = netstat_counter("TCPDSACKRecv")
    out("dsack: TcpExt TCPDSACKRecv %d -> %d" % (before, after))
    if after <= before:
        fails.append("dsack: Linux received no D-SACK for the duplicate")
    c.close()
    raw.close()
    finish(" dsack_recv=%d" % (after - before))


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    mode, host, port = argv[1], argv[2], int(argv[3])
    args = argv[4:]
    try:
        if mode == "discard":
            mode_discard(host, port, int(args[0]), args[1])
        elif mode == "echo":
            mode_echo(host, port, int(args[0]))
        elif mode == "echo-stall":
            mode_echo_stall(host, port, int(args[0]), float(args[1]))
        elif mode == "echo-parallel":
            mode_echo_parallel(host, port, int(args[0]), int(args[1]))
        elif mode == "echo-reset":
            mode_echo_reset(host, port, int(args[0]))
        elif mode == "hold":
            mode_hold(host, port, int(args[0]), float(args[1]))
        elif mode == "echo-small":
            mode_echo_small(host, port)
        elif mode == "chargen":
            mode_chargen(host, port, int(args[0]))
        elif mode == "chargen-abort":
            mode_chargen_abort(host, port, int(args[0]))
        elif mode == "conns":
            mode_conns(host, port, int(args[0]))
        elif mode == "server-recv":
            mode_server_recv(host, port)
        elif mode == "server-send":
            mode_server_send(host, port, int(args[0]))
        elif mode == "small":
            mode_small(host, port, int(args[0]), int(args[1]), float(args[2]))
        elif mode == "dsack":
            mode_dsack(host, port, args[0])
        else:
            sys.stderr.write("unknown mode %s\n" % mode)
            return 2
    except SystemExit:
        raise
    except Exception as e:           # noqa: BLE001
        fails.append("%s: %r" % (mode, e))
        finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
