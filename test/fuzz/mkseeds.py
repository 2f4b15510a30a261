#!/usr/bin/env python3
"""Writes the seed corpus of wisp's fuzz harnesses (test/fuzz/corpus/<target>/seed-*.bin):
a few valid frames / messages per target in each harness's input format
(see the comment at the top of test/fuzz/fuzz_<target>.c). Reproducible:
run it again to regenerate the seeds (crash reproducers are not touched)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SELF_MAC = bytes([2, 0, 0, 0, 0, 2])
PEER_MAC = bytes([2, 0, 0, 0, 0, 1])
BCAST_MAC = b'\xff' * 6
SELF_IP = bytes([198, 18, 0, 2])
PEER_IP = bytes([198, 18, 0, 1])


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip4(src, dst, proto, payload, ident=0x1234, flags_off=0):
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), ident, flags_off, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + payload


def l4sum(src, dst, proto, seg):
    return csum(src + dst + struct.pack('!BBH', 0, proto, len(seg)) + seg)


def udp(src, dst, sport, dport, data):
    u = struct.pack('!HHHH', sport, dport, 8 + len(data), 0) + data
    s = l4sum(src, dst, 17, u) or 0xffff
    return u[:6] + struct.pack('!H', s) + u[8:]


def tcp(src, dst, sport, dport, seq, ack, flags, wnd=65535, opts=b'', data=b''):
    opts += b'\0' * ((4 - len(opts) % 4) % 4)
    t = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, (20 + len(opts)) // 4 << 4, flags,
                    wnd, 0, 0) + opts + data
    return t[:16] + struct.pack('!H', l4sum(src, dst, 6, t)) + t[18:]


def eth(dst, src, typ, payload):
    return dst + src + struct.pack('!H', typ) + payload


def write(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name + '.bin'), 'wb') as f:
        f.write(data)


def rec(ctrl, frame):
    """fuzz_eth record: [ctrl][len hi][len lo][frame]."""
    return bytes([ctrl]) + struct.pack('!H', len(frame)) + frame


def seeds_eth():
    icmp = b'\x08\x00\x00\x00\x12\x34\x00\x01' + b'ping-data'
    icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
    ping = eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 1, icmp))
    write('eth', 'ping', rec(0, ping))
    write('eth', 'udp-echo', rec(0, eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 17,
                                                                          udp(PEER_IP, SELF_IP, 1234, 7, b'hello')))))
    other = bytes([198, 18, 0, 9])
    arp = struct.pack('!HHBBH6s4s6s4s', 1, 0x0800, 6, 4, 1, bytes([2, 0, 0, 0, 0, 9]), other, b'\0' * 6, SELF_IP)
    write('eth', 'arp-request', rec(0, eth(BCAST_MAC, bytes([2, 0, 0, 0, 0, 9]), 0x0806, arp)))
    # a UDP datagram to port 7 in two fragments (8-byte units), then 1 s
    dg = udp(PEER_IP, SELF_IP, 1234, 7, bytes(range(100)))
    f1 = eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 17, dg[:64], 0x777, 0x2000))
    f2 = eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 17, dg[64:], 0x777, 8))
    write('eth', 'frags', rec(0, f2) + rec(0x10, f1))
    # TCP on the scripted connection (ctrl 0x42: relative seq/ack + checksum)
    seg = tcp(PEER_IP, SELF_IP, 40000, 80, 0, 0, 0x18, data=b'GET / HTTP/1.0\r\n\r\n')
    fin = tcp(PEER_IP, SELF_IP, 40000, 80, 18, 0, 0x11)
    write('eth', 'tcp-data-fin', rec(0x42, eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 6, seg))) +
          rec(0x52, eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 6, fin))))
    syn = tcp(PEER_IP, SELF_IP, 40001, 80, 1000, 0, 0x02,
              opts=b'\x02\x04\x05\xb4\x04\x02\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x01\x03\x03\x07')
    write('eth', 'tcp-syn', rec(0, eth(SELF_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, SELF_IP, 6, syn))))
    # TCP to the subnet broadcast address (RFC 1122 §4.2.3.10: dropped, no RST)
    bc = bytes([198, 18, 0, 255])
    syn_bc = tcp(PEER_IP, bc, 40002, 80, 1000, 0, 0x02)
    write('eth', 'tcp-bcast', rec(0, eth(BCAST_MAC, PEER_MAC, 0x0800, ip4(PEER_IP, bc, 6, syn_bc))))


def trec(flags, conn=0, act=0, adv=0, dseq=0, dack=0, wnd=255, ts=False, sack=None, raw=b'', payload=b''):
    """fuzz_tcp record."""
    b7 = len(raw) | (0x40 if ts else 0) | (0x80 if sack else 0)
    r = struct.pack('!BBhhBBB', flags, conn | act << 2 | adv << 5, dseq, dack, wnd, b7, len(payload))
    if sack:
        r += struct.pack('!HH', *sack)
    return r + raw + payload


def seeds_tcp():
    ACK, PSH, FIN, SYN, RST = 0x10, 0x08, 0x01, 0x02, 0x04
    write('tcp', 'data-ts', bytes([0x03]) + trec(ACK | PSH, adv=3, ts=True, payload=b'x' * 100) +
          trec(ACK, adv=4, ts=True))
    write('tcp', 'write-ack-close', bytes([0x08]) + trec(ACK, act=1, adv=2) + trec(ACK, adv=4) +
          trec(FIN | ACK, act=3, adv=4) + trec(ACK, adv=6))
    write('tcp', 'active-open', bytes([0]) + trec(SYN | ACK, conn=1, raw=b'\x02\x04\x05\xb4') +
          trec(ACK | PSH, conn=1, act=1, payload=b'hello') + trec(FIN | ACK, conn=1, adv=4))
    write('tcp', 'listen', bytes([0]) + trec(SYN, conn=2, raw=b'\x02\x04\x02\x00\x01\x03\x03\x02') +
          trec(ACK, conn=2) + trec(ACK | PSH, conn=2, payload=b'abc') + trec(RST, conn=2))
    write('tcp', 'sack', bytes([0x02]) + trec(ACK, act=1, adv=1) + trec(ACK, dack=-2000, sack=(1460, 2000)) +
          trec(ACK, dack=-2000, sack=(1460, 2000)) + trec(ACK, dack=-2000, sack=(1460, 2000)) + trec(ACK, adv=5))
    write('tcp', 'zero-window', bytes([0x08]) + trec(ACK, act=1, wnd=0, adv=4) + trec(ACK, wnd=0, adv=6) +
          trec(ACK, wnd=16, adv=4))


def dopt(code, val):
    return bytes([code, len(val)]) + val


def drec(ctrl, body):
    return bytes([ctrl]) + struct.pack('!H', len(body)) + body


def seeds_dhcp():
    yi = bytes([198, 18, 0, 50])
    common = (dopt(54, PEER_IP) + dopt(51, struct.pack('!I', 3600)) + dopt(1, bytes([255, 255, 255, 0])) +
              dopt(3, PEER_IP) + dopt(6, PEER_IP + bytes([198, 18, 1, 53])) + dopt(26, struct.pack('!H', 1400)) +
              dopt(58, struct.pack('!I', 1800)) + dopt(59, struct.pack('!I', 3150)) + dopt(15, b'example.org'))
    offer = yi + dopt(53, b'\x02') + common + b'\xff'
    ack = yi + dopt(53, b'\x05') + common + b'\xff'
    nak = b'\0\0\0\0' + dopt(53, b'\x06') + dopt(54, PEER_IP) + dopt(56, b'no') + b'\xff'
    write('dhcp', 'offer-ack', bytes([0]) + drec(0x03 | 0x10, offer) + drec(0x03 | 0x30, ack) + drec(0x00 | 0x60, b''))
    write('dhcp', 'requesting-nak', bytes([1]) + drec(0x03 | 0x20, nak))
    write('dhcp', 'bound-renew', bytes([0x12]) + drec(0x00 | 0x60, b'') + drec(0x07 | 0x20, ack))
    write('dhcp', 'renewing-ack', bytes([3]) + drec(0x07 | 0x20, ack) + drec(0x00 | 0x70, b''))
    write('dhcp', 'check-conflict', bytes([0x05]) + drec(0x83 | 0x20, ack) + drec(0x00 | 0x40, b''))
    write('dhcp', 'reboot', bytes([0x08]) + drec(0x03 | 0x30, ack))
    # option overload (52 = 3): the type in 'file', the server id in 'sname'
    m = bytearray(240)
    m[0:3] = b'\x02\x01\x06'
    m[16:20] = yi
    m[28:34] = SELF_MAC
    m[44:44 + 6] = dopt(54, PEER_IP)
    m[108:108 + 4] = dopt(53, b'\x02') + b'\xff'
    m[236:240] = bytes([99, 130, 83, 99])
    m += dopt(52, b'\x03') + dopt(51, struct.pack('!I', 600)) + b'\xff'
    write('dhcp', 'overload', bytes([0]) + drec(0x01 | 0x20, bytes(m)))
    # malformed options, one message each (SELECTING): an option code in the last octet without its length,
    # bad lengths of router, DNS, MTU, lease, server id, message type 9, a non-contiguous mask; then a NAK
    # while SELECTING and message types a server never sends (DISCOVER, REQUEST, RELEASE)
    t2 = dopt(53, b'\x02')
    bad = [t2 + b'\x33', t2 + dopt(3, b'\1\2\3'), t2 + dopt(6, b'\1\2\3\4\5'), t2 + dopt(26, b'\1\2\3'),
           t2 + dopt(51, b'\1\2'), t2 + dopt(54, b'\1\2\3'), dopt(53, b'\x09'),
           t2 + dopt(54, PEER_IP) + dopt(51, struct.pack('!I', 3600)) + dopt(1, bytes([255, 0, 255, 0])) + b'\xff']
    bad += [dopt(53, bytes([k])) + dopt(54, PEER_IP) + b'\xff' for k in (6, 1, 3, 7)]
    write('dhcp', 'bad-options', bytes([0]) + b''.join(drec(0x03, yi + o) for o in bad))
    # an OFFER while BOUND is ignored
    write('dhcp', 'offer-when-bound', bytes([2]) + drec(0x03, offer) + drec(0x00 | 0x40, b''))


def dname(n):
    return b''.join(bytes([len(x)]) + x.encode() for x in n.split('.')) + b'\0'


def dhdr(flags=0x8180, an=1, ns=0, ar=0):
    return struct.pack('!HHHHHH', 0, flags, 1, an, ns, ar)


def rr_a(name=b'\xc0\x0c', ttl=300, addr=bytes([93, 184, 216, 34])):
    return name + struct.pack('!HHIH', 1, 1, ttl, 4) + addr


def seeds_dns():
    write('dns', 'answer', bytes([0]) + drec(0x03, dhdr() + rr_a()))
    alias = dname('alias.example.net')
    # the answer starts at 12 + 21 (question) = 33, the CNAME's rdata (alias) at 33 + 12 = 45
    cname = b'\xc0\x0c' + struct.pack('!HHIH', 5, 1, 600, len(alias)) + alias
    write('dns', 'cname', bytes([0]) + drec(0x03, dhdr(an=2) + cname + rr_a(name=b'\xc0\x2d', ttl=60)))
    write('dns', 'nxdomain', bytes([0]) + drec(0x03, dhdr(flags=0x8183, an=0)))
    write('dns', 'servfail-next', bytes([1]) + drec(0x03, dhdr(flags=0x8182, an=0)) + drec(0x03, dhdr() + rr_a()))
    write('dns', 'two-queries', bytes([2]) + drec(0x03, dhdr() + rr_a()) + drec(0x13 | 0x80, dhdr() + rr_a(ttl=0)) +
          drec(0x80, b''))
    write('dns', 'truncated-timeout', bytes([0]) + drec(0x03 | 0x60, dhdr(flags=0x8380, an=0)))
    # the whole response verbatim (question included), answer with authority and additional records
    q = dname('www.example.com') + struct.pack('!HH', 1, 1)
    full = dhdr(an=1, ns=1, ar=1) + q + rr_a() + b'\xc0\x10' + struct.pack('!HHIH', 2, 1, 300, 5) + b'\x02ns\xc0\x10' + \
        rr_a(name=b'\xc0\x3d')
    write('dns', 'full', bytes([0]) + drec(0x01, full))


def seeds_http():
    write('http', 'get-root', bytes([0x10 | 0x08 | 6]) + b'GET / HTTP/1.1\r\nHost: wisp\r\n\r\n')
    write('http', 'pipelined', bytes([0x10 | 2]) + b'GET /status HTTP/1.1\r\nHost: a\r\n\r\n'
          b'HEAD /status.json HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    write('http', 'post-body', bytes([0x10 | 4]) + b'POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n'
          b'0123456789GET /nope HTTP/1.1\r\nHost: a\r\n\r\n')
    write('http', 'http10-keepalive', bytes([0x10 | 0x08 | 5]) +
          b'GET /index.html HTTP/1.0\r\nConnection: keep-alive\r\nUser-Agent: seed\r\n\r\n')
    write('http', 'bad-version', bytes([0x08 | 3]) + b'GET / HTTP/2.0\r\nHost: a\r\n\r\n')
    write('http', 'slow-head', bytes([0x20 | 0x10 | 1]) + b'GET / HTTP/1.1\r\nHo')
    write('http', 'big', bytes([0x10 | 6]) + b'GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n')
    # Expect, a Connection token and a field name longer than the parser keeps
    write('http', 'expect-long-tokens', bytes([0x10 | 6]) + b'GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n'
          b'Connection: ' + b'k' * 80 + b', close\r\nX-' + b'n' * 80 + b': v\r\n\r\n')


def iperf_dg(seq, hdr_flags=0x48000000, size=200):
    """iperf 2 UDP datagram: id, tv_sec, tv_usec, id2, client header (flags, threads, port, buflen, winband,
    amount), the rest the digits pattern."""
    d = struct.pack('!iIII', seq, 1, 0, 0) + struct.pack('!IIIIIi', hdr_flags, 1, 5001, size, 0, -1000)
    return d + (b'0123456789' * 200)[:size - len(d)]


def seeds_iperf():
    recs = b''.join(drec(0x40 | 0x08, iperf_dg(0)) for _ in range(5))
    write('iperf', 'session-fin', bytes([0]) + recs + drec(0xc0, iperf_dg(0)) + drec(0xc0 | 0x10, iperf_dg(0)))
    # loss and reordering, 32-bit numbers: ids 1, 2, 5, 3, then FIN -6 (verbatim ids)
    recs = b''.join(drec(0x08, iperf_dg(i, hdr_flags=0x40000000)) for i in (1, 2, 5, 3)) + \
        drec(0x08, iperf_dg(-6, hdr_flags=0x40000000))
    write('iperf', 'loss-reorder', bytes([0]) + recs)
    two = drec(0x40, iperf_dg(0)) + drec(0x41, iperf_dg(0, hdr_flags=0)) + drec(0x44 | 0x28, iperf_dg(0)) + \
        drec(0x41 | 0x80, iperf_dg(0, hdr_flags=0))
    write('iperf', 'two-peers-idle', bytes([1]) + two)
    write('iperf', 'runt', bytes([0]) + drec(0x00, b'short'))


def seeds_arp():
    """fuzz_arp records [op][a][b][c] (see fuzz_arp.c)."""
    def r(op, a=0, b=0, c=0):
        return bytes([op, a, b, c])
    # IP selectors: 0 self, 1 peer, 2/3 host .10+k (k = sel >> 3), 4 any, 5 bcast, 6 off-link, 7 mcast
    # MAC selectors: 0/1 peer, 2/3 host k, 4 self, 5 bcast, 6 mcast, 7 zero
    # c: bits 0-1 eth dst (0 ours, 1/2 bcast, 3 other), 2-3 op (0 req, 1 reply, 2 req, 3 bad), 4 tha set
    host = lambda k: 2 | k << 3
    write('arp', 'request-reply', r(0, host(1), host(1) | 0 << 3, 1) +            # request for us from host .11
          r(4, host(1), 10) + r(7, 1) +                                             # send to .11: cached
          r(4, host(2), 20) + r(4, host(2), 30) + r(4, host(2), 40) + r(4, host(2), 50) +  # queue (3) + drop oldest
          r(0, host(2), host(2), 0x04 | 0x10) + r(7, 3, 0))                        # the reply resolves it
    write('arp', 'retries-giveup', r(4, host(5), 1) + r(7, 3) + r(7, 3) + r(7, 3) + r(7, 4) + r(7, 5))
    write('arp', 'conflict-defend', r(0, host(3), 0, 1) + r(0, host(3), 0, 0x05) + r(7, 2) + r(0, host(3), 0, 1) +
          r(5, 0, 0, 1) + r(5, host(4), 0, 2) + r(0, 4, 4 | 0 << 3, 1))       # probe from 0.0.0.0
    write('arp', 'malformed', b''.join(r(2, host(1), host(1), 0x01 | k << 5) for k in range(8)) +
          r(6, 0, 0, 28) + bytes(28) + r(0, 5, 1, 1) + r(0, 4, 1, 1) + r(0, 1, 5, 1) + r(0, 1, 7, 0x0d))
    write('arp', 'table-full', b''.join(r(0, host(k), host(k), 1) for k in range(12)) +
          b''.join(r(4, host(k), 1) for k in range(12)) + r(5, 1, 1, 3) + r(5, 0, 0, 4) + r(5, 0, 0, 6) +
          r(7, 6) + r(7, 7))


def seeds_ip4_frag():
    """fuzz_ip4_frag records [ctl][o1][o2][l1][l2]: ctl bits 0-1 template (0 UDP 1008 B, 1 UDP 3908 B,
    2 ICMP 2008 B, 3 TCP SYN 40 B), 2 MF, 3 DF, 4-5 clock, 6 other source, 7 ID+1."""
    def f(ctl, off8, length):
        return struct.pack('!BHH', ctl, off8, length)
    MF = 4
    write('ip4_frag', 'udp-two', f(0 | MF, 0, 504) + f(0, 63, 504))
    write('ip4_frag', 'udp-three-reverse', f(1, 370, 948) + f(1 | MF, 185, 1480) + f(1 | MF, 0, 1480))
    write('ip4_frag', 'icmp-dup', f(2 | MF, 0, 1000) + f(2 | MF, 0, 1000) + f(2, 125, 1008))
    write('ip4_frag', 'overlap', f(0 | MF, 0, 512) + f(0 | MF, 32, 512) + f(0, 63, 504) + f(0 | MF, 0, 504) +
          f(0, 63, 504))
    write('ip4_frag', 'timeout', f(2 | MF, 0, 1000) + f(2 | 0x30, 125, 1008) + f(0 | MF | 0x40, 0, 504) +
          f(0 | 0x40, 63, 504))
    write('ip4_frag', 'flood', b''.join(f(k & 3 | MF | (0x40 if k & 4 else 0) | (0x80 if k & 8 else 0), 0, 64)
                                        for k in range(16)) + f(3 | MF, 0, 16) + f(3, 2, 24))
    write('ip4_frag', 'toobig-badfrag', f(0 | MF, 8189, 1000) + f(0, 8189, 100) + f(0 | MF, 0, 13) +
          f(0 | MF, 0, 0) + f(3 | MF, 0, 8) + f(3, 1, 32) + f(0 | 8, 0, 1008))
    # a first fragment with 40 bytes of options (IHL 15) and the rest up to 65515 bytes of payload: each
    # fragment fits 65535 with its own header, the datagram (60 + 65515) does not (ip4.reass.toobig)
    OPT = 0x8000
    write('ip4_frag', 'toobig-options', f(0 | MF, 0, OPT | 1440) +
          b''.join(f(0 | MF, k, 1480) for k in range(180, 8189 - 185, 185)) +
          f(0 | MF, 8135, 432) + f(0, 8189, 3))


def seeds_sockets():
    """fuzz_sockets records [op][a][b] (see fuzz_sockets.c). Ops: 0 socket, 1 bind, 2 listen, 3 connect,
    4 accept, 5 send, 6 recv, 7 sendto, 8 recvfrom, 9 shutdown, 10 close, 11 setsockopt, 12 getsockopt,
    13 poll, 14 select, 15 get*name, 16 fcntl/ioctl, 17 sendmsg/recvmsg, 18/19 advance.
    Address selector: bits 0-1 port (0, 7000, 7001, 9), bits 2-4 address (0/1 127.0.0.1, 2 any, 3 self,
    4 peer, 5 bcast, 6 off-link, 7 mcast)."""
    def r(op, a=0, b=0):
        return bytes([op, a, b])
    LO7000, LO7001, ANY7000, PEER9, OFF9 = 1, 2, 0x09, 0x13, 0x1b
    tcp = (r(0, 0, 0) + r(11, 0, 1) + r(1, 0, LO7000) + r(2, 0, 3) +            # slot 0: listen on 127.0.0.1:7000
           r(0, 1, 0) + r(3, 1, LO7000) + r(18, 0, 1) + r(4, 0, 0) +             # slot 1 connects, slot 2 accepts
           r(13, 0x18, 0x07) + r(5, 1 | 5 << 3, 40) + r(6, 2, 0x81) + r(6, 2, 0x80) +
           r(15, 2, 2) + r(15, 1, 0) + r(12, 2, 0) + r(16, 2, 1) +
           r(9, 1, 1) + r(6, 2, 4) + r(6, 2, 4) + r(10, 2) + r(10, 1) + r(18, 0, 5) + r(10, 0))
    write('sockets', 'tcp-loopback', tcp)
    udp = (r(0, 0, 1) + r(1, 0, LO7001) + r(0, 1, 1) + r(7, 1 | 3 << 3, LO7001) + r(7, 1 | 1 << 3, LO7001) +
           r(8, 0 | 0 << 3, 200) + r(8, 0 | 1 << 3, 3) + r(17, 1, 0x40 | 0x1b) + r(17, 0, 0x80 | 0x3f) +
           r(3, 1, LO7001) + r(17, 1, 0x12) + r(6, 0, 0x40) + r(14, 0, 0x03) + r(11, 1 << 3 | 1, 0xff) + r(10, 0))
    write('sockets', 'udp-loopback', udp)
    write('sockets', 'connect-peer-timeout', r(0, 0, 0) + r(3, 0, PEER9) + r(3, 0, PEER9) + r(13, 0x10, 0x03) +
          r(5, 0, 8) + r(19, 0, 3) + r(19, 0, 5) + r(19, 0, 6) + r(12, 0, 0) + r(19, 0, 7) + r(6, 0, 1) +
          r(0, 1, 0) + r(3, 1, OFF9) + r(11, 3 << 3 | 1, 1) + r(10, 1))
    write('sockets', 'backlog-reset', r(0, 0, 0) + r(1, 0, ANY7000) + r(2, 0, 1) +
          b''.join(r(0, k, 0) + r(3, k, LO7000) for k in (1, 2, 3, 4)) + r(18, 0, 2) +
          r(4, 0, 0) + r(4, 0, 2) + r(4, 0, 1) + r(11, 1 | 3 << 3, 1) + r(10, 1) + r(18, 0, 1) +
          r(5, 5, 10) + r(6, 5, 0) + r(12, 2, 0) + r(9, 3, 2) + r(0, 6, 0x83) + r(0, 6, 0xc2) + r(2, 7, 0))
    write('sockets', 'bad-calls', r(5, 0, 1) + r(6, 0, 1) + r(10, 0) + r(2, 0) + r(0, 0, 1) + r(2, 0, 1) +
          r(4, 0, 0) + r(1, 0, 0xe1) + r(1, 0, 0xc1) + r(1, 0, 0x0d) + r(9, 0, 3) + r(11, 13 << 3, 7) +
          r(13, 0xff, 0x0f) + r(14, 0xff, 0x07) + r(0, 1, 3) + r(0, 1, 2) + r(7, 1, 0x1e))
    # the whole socket table, 8 slots of the harness and 160 of the stack: stores close the rest
    write('sockets', 'many', b''.join(r(0, k, k & 1) for k in range(40)) + r(18, 0, 3))


if __name__ == '__main__':
    seeds_eth()
    seeds_tcp()
    seeds_dhcp()
    seeds_dns()
    seeds_http()
    seeds_iperf()
    seeds_arp()
    seeds_ip4_frag()
    seeds_sockets()
