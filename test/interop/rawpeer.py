#!/usr/bin/env python3
"""rawpeer.py -- a hand-made TCP/IP peer for wisp's interop tests (python3,
stdlib only, root). Runs inside the test's network namespace.

The peer uses addresses the Linux kernel does not own (198.19.0.0/16, off
the tap's /24): wisp-node reaches them through its gateway (Linux,
--gw 198.18.0.1), and Linux, which does not forward, drops what wisp sends
there -- so the kernel never answers for the peer, and the peer sees every
frame on the tap through an AF_PACKET socket. Segments and datagrams are
sent through a raw IP socket (IP_HDRINCL: IP options as crafted).

Every wait has a deadline, every loop a bound. Each mode prints progress
lines and, last, "RESULT ok ..." or "RESULT fail ..."; exit status 0 only
on success.

Modes (NODE = wisp-node's address):
  edges NODE SRC           the RFC edge cases of issue 11 item 6 against
                           echo (7) and HTTP (80): in-window RST in
                           SYN-RECEIVED -> challenge ACK; FIN without ACK
                           in ESTABLISHED and TIME-WAIT -> nothing; IPv4
                           options with bad pointers/lengths -> nothing,
                           well-formed ones -> echo reply
  flood NODE PORT RATE SECS   spoofed SYNs from random 198.19.0.0/16
                           sources and ports to NODE:PORT at RATE per
                           second for SECS seconds (at most RATE * SECS
                           SYNs, SIGTERM stops it early); prints "FLOOD
                           start <time>" and at the end "FLOOD sent <n>
                           errors <e> secs <t> rate <r> end <time>"
"""
import os
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
fails = []


def out(msg):
    print(msg, flush=True)


def check(cond, what):
    out(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip_hdr(src, dst, proto, payload_len, opts=b"", ident=0):
    ihl = (20 + len(opts)) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(opts) + payload_len, ident, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:]


def tcp_seg(src, dst, sport, dport, seq, ack, flags, wnd=65535, opts=b"", data=b""):
    off = (20 + len(opts)) // 4
    h = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff, off << 4, flags, wnd, 0, 0)
    h += opts
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(h) + len(data))
    c = csum(pseudo + h + data)
    return h[:16] + struct.pack("!H", c) + h[18:] + data


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


class Peer:
    def __init__(self, node, src, dev="wtap0"):
        self.node, self.src = node, src
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.tx.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        self.rx.bind((dev, ETH_P_IP))
        self.rx.setblocking(False)

    def send_ip(self, proto, payload, opts=b"", ident=0):
        pkt = ip_hdr(self.src, self.node, proto, len(payload), opts, ident) + payload
        self.tx.sendto(pkt, (self.node, 0))

    def send_tcp(self, sport, dport, seq, ack, flags, data=b"", opts=b"", ipopts=b"", wnd=65535):
        self.send_ip(6, tcp_seg(self.src, self.node, sport, dport, seq, ack, flags, wnd, opts, data), ipopts)

    def frames(self, secs):
        """IP datagrams from the node to us within secs (a generator)."""
        end = time.monotonic() + secs
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.rx], [], [], left)
            if not r:
                continue
            for _ in range(256):
                try:
                    f, addr = self.rx.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING or len(f) < 34:
                    continue
                ip = f[14:]
                ihl = (ip[0] & 15) * 4
                if socket.inet_ntoa(ip[12:16]) != self.node or socket.inet_ntoa(ip[16:20]) != self.src:
                    continue
                yield ip[9], ip[ihl:struct.unpack("!H", ip[2:4])[0]]

    def tcp(self, sport, secs):
        """TCP segments to our port sport within secs: (flags, seq, ack, data)."""
        for proto, seg in self.frames(secs):
            if proto != 6 or len(seg) < 20:
                continue
            sp, dp, seq, ack, off, flags = struct.unpack("!HHIIBB", seg[:14])
            if dp != sport:
                continue
            yield flags, seq, ack, seg[(off >> 4) * 4:]

    def first_tcp(self, sport, secs):
        for s in self.tcp(sport, secs):
            return s
        return None


MSS_OPT = struct.pack("!BBH", 2, 4, 1460)


def handshake(p, sport, dport, isn):
    """SYN / SYN-ACK; returns the node's ISS or None (no ACK sent)."""
    p.send_tcp(sport, dport, isn, 0, SYN, opts=MSS_OPT)
    s = p.first_tcp(sport, 3.0)
    if s is None or s[0] & (SYN | ACK) != (SYN | ACK) or s[2] != (isn + 1) & 0xffffffff:
        out("no SYN-ACK: %r" % (s,))
        return None
    return s[1]


def quiet(p, sport, secs, what, iss=None):
    """Nothing to sport within secs (but a SYN-ACK retransmission of iss)."""
    segs = [x for x in p.tcp(sport, secs) if iss is None or not (x[0] & SYN and x[1] == iss)]
    check(not segs, "%s: no reply (got %s)" % (what, ["flags=%#x seq=%d ack=%d len=%d" % (f, s, a, len(d))
                                                       for f, s, a, d in segs[:3]]))


def edge_synrcvd_rst(p, node):
    """RFC 5961 §3.2, RFC 9293 §3.10.7.4: in-window RST in SYN-RECEIVED."""
    sport, isn = 41001, 0x11110000
    iss = handshake(p, sport, 7, isn)
    check(iss is not None, "SYN-RECEIVED: SYN-ACK for the SYN")
    if iss is None:
        return
    rcv = isn + 1
    p.send_tcp(sport, 7, rcv + 100, 0, RST)
    s = None
    for x in p.tcp(sport, 2.0):
        if not (x[0] & SYN and x[1] == iss):  # (a SYN-ACK retransmission on a slow machine)
            s = x
            break
    check(s is not None and s[0] & (SYN | RST | FIN | ACK) == ACK and s[1] == (iss + 1) & 0xffffffff
          and s[2] == rcv and not s[3],
          "SYN-RECEIVED: in-window RST (RCV.NXT+100) -> challenge ACK <SEQ=ISS+1><ACK=IRS+1> (got %r)" % (s,))
    p.send_tcp(sport, 7, rcv + 0x40000000, 0, RST)
    quiet(p, sport, 0.5, "SYN-RECEIVED: RST outside the window", iss)
    # the embryo survived: complete the handshake and echo
    p.send_tcp(sport, 7, rcv, iss + 1, ACK)
    p.send_tcp(sport, 7, rcv, iss + 1, ACK | PSH, data=b"hello")
    got = b""
    for f, seq, ack, d in p.tcp(sport, 3.0):
        got += d
        if got == b"hello":
            break
    check(got == b"hello", "SYN-RECEIVED: after the challenge ACK the handshake completes, echo works")
    p.send_tcp(sport, 7, rcv + 5, iss + 1 + len(got), RST)  # exact RST: gone


def edge_established_fin_noack(p, node):
    """RFC 9293 §3.10.7.4 fifth: FIN without ACK in ESTABLISHED."""
    sport, isn = 41002, 0x22220000
    iss = handshake(p, sport, 7, isn)
    if iss is None:
        check(False, "ESTABLISHED: handshake")
        return
    rcv, nxt = isn + 1, iss + 1
    p.send_tcp(sport, 7, rcv, nxt, ACK)
    p.send_tcp(sport, 7, rcv, 0, FIN)
    quiet(p, sport, 0.7, "ESTABLISHED: FIN without ACK at RCV.NXT")
    p.send_tcp(sport, 7, rcv + 5000, 0, FIN)
    quiet(p, sport, 0.5, "ESTABLISHED: FIN without ACK out of the window")
    p.send_tcp(sport, 7, rcv, nxt, ACK | PSH, data=b"still")
    got = b""
    for f, seq, ack, d in p.tcp(sport, 3.0):
        got += d
        check(not (f & FIN), "ESTABLISHED: the ACK-less FIN was not taken (no FIN from the echo)")
        if got == b"still":
            break
    check(got == b"still", "ESTABLISHED: the connection still echoes")
    p.send_tcp(sport, 7, rcv + 5, nxt + len(got), RST)


def edge_timewait_fin_noack(p, node):
    """RFC 9293 §3.10.7.4 fifth in TIME-WAIT (wisp's HTTP server closes first)."""
    sport, isn = 41003, 0x33330000
    iss = handshake(p, sport, 80, isn)
    if iss is None:
        check(False, "TIME-WAIT: handshake with the HTTP server")
        return
    req = b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"
    rcv, nxt = isn + 1, iss + 1
    p.send_tcp(sport, 80, rcv, nxt, ACK)
    p.send_tcp(sport, 80, rcv, nxt, ACK | PSH, data=req)
    rcv += len(req)
    fin = False
    total = 0
    deadline = time.monotonic() + 10
    while not fin and time.monotonic() < deadline:
        for f, seq, ack, d in p.tcp(sport, 0.5):
            if seq == nxt & 0xffffffff:
                nxt += len(d)
                total += len(d)
                if f & FIN:
                    nxt += 1
                    fin = True
            p.send_tcp(sport, 80, rcv, nxt, ACK)
            if fin:
                break
    check(fin and total > 0, "TIME-WAIT: HTTP response (%d bytes) and the server's FIN" % total)
    if not fin:
        return
    p.send_tcp(sport, 80, rcv, nxt, FIN | ACK)  # our FIN: the node goes to TIME-WAIT
    s = p.first_tcp(sport, 2.0)
    check(s is not None and s[0] & (ACK | FIN | SYN | RST) == ACK and s[2] == (rcv + 1) & 0xffffffff,
          "TIME-WAIT: our FIN acknowledged (%r)" % (s,))
    p.send_tcp(sport, 80, rcv, 0, FIN)  # the FIN again, without ACK
    quiet(p, sport, 0.7, "TIME-WAIT: retransmitted FIN without ACK")
    p.send_tcp(sport, 80, rcv + 1, 0, FIN | PSH, data=b"x")
    quiet(p, sport, 0.5, "TIME-WAIT: FIN + data without ACK")
    p.send_tcp(sport, 80, rcv, nxt, FIN | ACK)  # the FIN again, with ACK
    s = p.first_tcp(sport, 2.0)
    check(s is not None and s[0] & (ACK | FIN | SYN | RST) == ACK and s[2] == (rcv + 1) & 0xffffffff,
          "TIME-WAIT: retransmitted FIN with ACK -> ACK (%r)" % (s,))


def icmp_echo(ident, seq):
    m = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"wisp-opts"
    return m[:2] + struct.pack("!H", csum(m)) + m[4:]


def edge_ip_options(p, node):
    """RFC 791 §3.1, RFC 1122 §3.2.1.8 / §3.3.5: malformed options dropped."""
    cases = [
        ("Record Route pointer 0", bytes([7, 7, 0, 0, 0, 0, 0, 1]), False),
        ("Record Route pointer 5 (partial slot)", bytes([7, 7, 5, 0, 0, 0, 0, 1]), False),
        ("loose source route, length 8", bytes([131, 8, 8, 0, 0, 0, 0, 0]), False),
        ("strict source route, length 6", bytes([137, 6, 4, 0, 0, 0, 0, 1]), False),
        ("loose source route not done (a further hop)", bytes([131, 7, 4, 198, 18, 0, 9, 1]), False),
        ("timestamp pointer 4", bytes([68, 8, 4, 0, 0, 0, 0, 0]), False),
        ("timestamp flag 2", bytes([68, 8, 5, 2, 0, 0, 0, 0]), False),
        ("Record Route, fresh", bytes([7, 7, 4, 0, 0, 0, 0, 1]), True),
        ("Record Route, full", bytes([7, 7, 8, 1, 2, 3, 4, 1]), True),
        ("loose source route, done", bytes([131, 7, 8, 198, 18, 0, 9, 1]), True),
        ("timestamp, fresh", bytes([68, 8, 5, 0, 0, 0, 0, 0]), True),
    ]
    ident = 0x5150
    for i, (name, opts, want) in enumerate(cases):
        p.send_ip(1, icmp_echo(ident, i), opts, ident=0x700 + i)
        got = False
        for proto, m in p.frames(0.6 if not want else 2.0):
            if proto == 1 and len(m) >= 8 and m[0] == 0 and struct.unpack("!HH", m[4:8]) == (ident, i):
                got = True
                break
        check(got == want, "IPv4 options, %s: %s" % (name, "echo reply" if want else "dropped, no reply"))
    # a SYN carrying a malformed option list: no SYN-ACK
    p.send_tcp(41004, 7, 0x44440000, 0, SYN, opts=MSS_OPT, ipopts=bytes([7, 7, 0, 0, 0, 0, 0, 1]))
    quiet(p, 41004, 0.6, "IPv4 options: SYN with Record Route pointer 0")


def mode_edges(node, src):
    p = Peer(node, src)
    edge_synrcvd_rst(p, node)
    edge_established_fin_noack(p, node)
    edge_timewait_fin_noack(p, node)
    edge_ip_options(p, node)
    if fails:
        out("RESULT fail (%d): %s" % (len(fails), "; ".join(fails[:5])))
        sys.exit(1)
    out("RESULT ok")


def mode_flood(node, port, rate, secs):
    """Spoofed SYNs (RFC 4987 §2 style) at rate/s for secs, bounded."""
    rnd = random.Random(4987)
    tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    opts = MSS_OPT + bytes([4, 2, 8, 10]) + b"\0" * 8 + bytes([1, 3, 3, 7])  # like Linux: SACK-perm, TS, WS 7
    pool = []
    for i in range(16384):
        if os.environ.get("RAWPEER_FLOOD_ONLINK"):
            src = "198.18.0.%d" % rnd.randrange(3, 255)  # on the node's /24: it must ARP
        else:
            src = "198.19.%d.%d" % (rnd.randrange(256), rnd.randrange(1, 255))
        o = opts[:8] + struct.pack("!I", rnd.getrandbits(32)) + opts[12:]
        seg = tcp_seg(src, node, rnd.randrange(1024, 65535), port, rnd.getrandbits(32), 0, SYN, 64240, o)
        pool.append(ip_hdr(src, node, 6, len(seg), ident=i) + seg)
    stop = []
    signal.signal(signal.SIGTERM, lambda sig, frm: stop.append(sig))
    total = int(rate * secs)
    batch = max(1, rate // 200)  # one batch per 5 ms
    dst = (node, 0)
    t0 = time.monotonic()
    out("FLOOD start %.3f" % time.time())
    sent = errs = 0
    while sent < total and not stop:
        now = time.monotonic()
        if now - t0 > secs + 2.0:
            break  # cannot keep up: stop on time anyway
        due = int((now - t0) * rate) + batch
        while sent < min(due, total):
            try:
                tx.sendto(pool[sent % len(pool)], dst)
            except OSError:
                errs += 1  # ENOBUFS under load: the SYN is lost, as on a wire
            sent += 1
        time.sleep(0.005)
    el = time.monotonic() - t0
    out("FLOOD sent %d errors %d secs %.3f rate %.0f end %.3f" % (sent, errs, el, sent / el if el > 0 else 0,
                                                                  time.time()))
    out("RESULT ok")


def main(argv):
    if len(argv) < 3:
        out(__doc__)
        sys.exit(2)
    mode = argv[1]
    if mode == "edges":
        mode_edges(argv[2], argv[3])
    elif mode == "flood":
        mode_flood(argv[2], int(argv[3]), int(argv[4]), float(argv[5]))
    else:
        out("unknown mode " + mode)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
