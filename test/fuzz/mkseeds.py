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


if __name__ == '__main__':
    seeds_eth()
    seeds_tcp()
    seeds_dhcp()
    seeds_dns()
    seeds_http()
    seeds_iperf()
