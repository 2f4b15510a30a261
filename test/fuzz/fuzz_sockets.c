/**
 * @file fuzz_sockets.c
 * Fuzz harness: a fuzzed sequence of BSD socket calls (src/api/sockets.c on
 * netconn and the stack thread), non-blocking sockets only.
 *
 * One stack (fuzz_env: 198.18.0.2/24 towards a silent peer 198.18.0.1
 * whose ARP entry is static, plus loopback 127.0.0.1) runs on its stack
 * thread (wisp_tcpip_start) with the fuzz environment's manual clock:
 * virtual time advances only when the input says so, and then in the
 * harness under the core lock. Connections between the input's own
 * sockets go over loopback; connections to the peer never get an answer
 * (SYN retransmissions, connect timeouts). After every call the harness
 * "settles" the stack: a wisp_tcpip_call round trip (every message posted
 * before it has run) and the loopback queue delivered under the core
 * lock, until nothing is pending; so the outcome depends on the input
 * only (deterministic replay).
 *
 * Input: records of 3 bytes [op][a][b], at most SOCK_OPS of them; a is
 * mostly the slot (a & 7; 8 slots holding descriptors, -1 = none, so
 * calls on bad descriptors happen too), b the argument. Ops: socket
 * (TCP/UDP/raw/bad), bind, listen, connect, accept, send, recv, sendto,
 * recvfrom, shutdown, close, setsockopt, getsockopt, poll, select,
 * getsockname/getpeername, fcntl/ioctl, sendmsg/recvmsg, advance the
 * clock. Every socket is made non-blocking at creation and stays so
 * (SO_LINGER is only ever {0|1, 0}: close never waits).
 *
 * Data check: every byte sent is a pattern of its position in its stream
 * (TCP: the sender's local port and the stream offset; UDP: the offset in
 * the datagram), so each byte received is checked against the pattern of
 * the peer's port (getpeername) and the receiver's offset: data lost,
 * duplicated, reordered or mixed between connections fails the input.
 *
 * At the end every descriptor is closed, the clock runs 20 minutes
 * (TIME-WAIT, retransmission give-up), and then: no socket open, stack
 * pools back at the baseline taken before the first call, and after the
 * stack thread stopped every pool at zero (fz_env_fini).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"
#include "wisp/tcpip.h"

#define SOCK_SLOTS 8
#define SOCK_OPS 400

static struct fz_env sock_env;
static struct wisp_tcpip sock_ctx;
static struct wisp_netconn_api sock_api;
static struct wisp_sockets sock_tbl;
static int sock_fd[SOCK_SLOTS];
static uint8_t sock_buf[8192]; /* > every length the ops use (recv: 4222) */
/* Per slot: bytes sent / received on its TCP stream; lost = the offsets
 * are no longer known (no data check on this slot). */
static struct {
    uint32_t tx, rx;
    uint8_t lost;
} sock_st[SOCK_SLOTS];
static int sock_verbose;

static wisp_err_t sock_noop(struct wisp_stack *s, void *arg)
{
    (void)s;
    (void)arg;
    return WISP_OK;
}

/* Run what is pending: messages posted to the stack thread, looped-back
 * packets and timers due now, until none is left. */
static void sock_settle(void)
{
    unsigned guard;
    for (guard = 0; guard < 10000u; guard++) {
        uint32_t due;
        int pending;
        if (wisp_tcpip_call(&sock_ctx, sock_noop, NULL) != WISP_OK) {
            fz_fail("sockets: tcpip_call");
        }
        wisp_tcpip_lock(&sock_ctx);
        pending = wisp_stack_next_deadline(sock_env.s, &due) && !wisp_time_before(sock_env.now, due);
        if (pending) {
            wisp_stack_poll(sock_env.s);
        }
        fz_clear(&sock_env); /* frames to the silent peer */
        wisp_tcpip_unlock(&sock_ctx);
        if (!pending) {
            return;
        }
    }
    fz_fail("sockets: the stack does not settle");
}

/* Advance the virtual clock by ms under the core lock, running timers at
 * their deadlines and looped-back packets as they come (fz_advance), then
 * settle. With core locking nothing is posted to the stack thread's
 * mailbox meanwhile (socket calls and netconn run in the caller); with
 * message passing a message posted by a timer would run at the end. */
static void sock_advance(uint32_t ms)
{
    wisp_tcpip_lock(&sock_ctx);
    fz_advance(&sock_env, ms);
    fz_clear(&sock_env);
    wisp_tcpip_unlock(&sock_ctx);
    sock_settle();
}

static struct wisp_sockaddr_in sock_addr(uint8_t sel)
{
    static const uint16_t ports[4] = { 0, 7000, 7001, 9 };
    struct wisp_sockaddr_in a;
    wisp_ip4_t ip;
    memset(&a, 0, sizeof(a));
    a.sin_family = WISP_AF_INET;
    switch ((sel >> 2) & 7u) {
    case 0:
    case 1: ip = wisp_ip4(127, 0, 0, 1); break;
    case 2: ip = WISP_IP4_ANY; break;
    case 3: ip = fz_ip_self(); break;
    case 4: ip = fz_ip_peer(); break;
    case 5: ip = wisp_ip4(198, 18, 0, 255); break; /* subnet broadcast */
    case 6: ip = wisp_ip4(203, 0, 113, 7); break;  /* off-link: via the peer (gateway) */
    default: ip = wisp_ip4(224, 0, 0, 1); break;
    }
    a.sin_port = wisp_htons(ports[sel & 3u]);
    a.sin_addr.s_addr = ip; /* wisp_ip4_t is in network order */
    if ((sel & 0xe0u) == 0xe0u) {
        a.sin_family = 99; /* unsupported family */
    }
    return a;
}

static wisp_socklen_t sock_alen(uint8_t sel)
{
    return (sel & 0xe0u) == 0xc0u ? 8u : (wisp_socklen_t)sizeof(struct wisp_sockaddr_in);
}

static void sock_store(int fd)
{
    unsigned i;
    if (fd < 0) {
        return;
    }
    for (i = 0; i < SOCK_SLOTS; i++) {
        if (sock_fd[i] < 0) {
            sock_fd[i] = fd;
            memset(&sock_st[i], 0, sizeof(sock_st[i]));
            return;
        }
    }
    (void)wisp_close(fd); /* no slot: closed at once */
}

static uint8_t sock_pat(uint16_t port, uint32_t k)
{
    return (uint8_t)(port * 7u + k * 13u + (k >> 8) * 3u);
}

static int sock_is_stream(int fd)
{
    int t = 0;
    wisp_socklen_t len = sizeof(t);
    return wisp_getsockopt(fd, WISP_SOL_SOCKET, WISP_SO_TYPE, &t, &len) == 0 && t == WISP_SOCK_STREAM;
}

/* The local (peer = 0) or remote port of fd, or -1. */
static int sock_port(int fd, int peer)
{
    struct wisp_sockaddr_in a;
    wisp_socklen_t len = sizeof(a);
    int r = peer ? wisp_getpeername(fd, (struct wisp_sockaddr *)&a, &len)
                 : wisp_getsockname(fd, (struct wisp_sockaddr *)&a, &len);
    return r == 0 ? (int)wisp_ntohs(a.sin_port) : -1;
}

/* Fill the n1 bytes at p1 and the n2 at p2 with what slot sends next: the
 * TCP stream pattern from its offset, or a datagram's. */
static void sock_fill(unsigned slot, int stream, uint8_t *p1, size_t n1, uint8_t *p2, size_t n2)
{
    int port = stream ? sock_port(sock_fd[slot], 0) : 0;
    uint32_t base = stream ? sock_st[slot].tx : 0;
    size_t i;
    if (port < 0) { /* a stream without a local port sends nothing; if it did, its receiver is not checkable */
        port = 0;
        sock_st[slot].lost = 1;
    }
    for (i = 0; i < n1; i++) {
        p1[i] = sock_pat((uint16_t)port, base + (uint32_t)i);
    }
    for (i = 0; i < n2; i++) {
        p2[i] = sock_pat((uint16_t)port, base + (uint32_t)(n1 + i));
    }
}

/* Check r received bytes (n1 at p1, the rest at p2) against the pattern;
 * advance the stream offset unless peek. port < 0: not checkable. */
static void sock_check(unsigned slot, int stream, int port, const uint8_t *p1, size_t n1, const uint8_t *p2,
                       long r, int peek)
{
    uint32_t base = stream ? sock_st[slot].rx : 0;
    size_t i;
    if (r <= 0) {
        return;
    }
    if (port < 0 || (stream && sock_st[slot].lost)) {
        sock_st[slot].lost = (uint8_t)(sock_st[slot].lost | stream);
        return;
    }
    for (i = 0; i < (size_t)r; i++) {
        uint8_t got = i < n1 ? p1[i] : p2[i - n1];
        uint8_t want = sock_pat((uint16_t)(stream ? port : 0), base + (uint32_t)i);
        if (got != want) {
            fz_fail("sockets: slot %u (fd %d) %s byte %u of %ld received 0x%02x, expected 0x%02x (peer port %d)", slot,
                    sock_fd[slot], stream ? "stream" : "datagram", (unsigned)(base + i), r, got, want, port);
        }
    }
    if (stream && !peek) {
        sock_st[slot].rx += (uint32_t)r;
    }
}

static void sock_setopt(int fd, uint8_t which, uint8_t v)
{
    int iv = v;
    struct wisp_linger l;
    struct wisp_timeval tv;
    switch (which % 14u) {
    case 0: (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &iv, sizeof(iv)); break;
    case 1:
        iv = v * 64;
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_RCVBUF, &iv, sizeof(iv));
        break;
    case 2:
        iv = v * 64;
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_SNDBUF, &iv, sizeof(iv));
        break;
    case 3:
        l.l_onoff = v & 1;
        l.l_linger = 0; /* {1, 0}: reset on close; never a lingering (blocking) close */
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_LINGER, &l, sizeof(l));
        break;
    case 4: (void)wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, &iv, sizeof(iv)); break;
    case 5: (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &iv, sizeof(iv)); break;
    case 6:
        iv = v % 8u;
        (void)wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, &iv, sizeof(iv));
        (void)wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, &iv, sizeof(iv));
        (void)wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, &iv, sizeof(iv));
        break;
    case 7:
        iv = v * 8;
        (void)wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, &iv, sizeof(iv));
        break;
    case 8: (void)wisp_setsockopt(fd, WISP_IPPROTO_IP, WISP_IP_TTL, &iv, sizeof(iv)); break;
    case 9: (void)wisp_setsockopt(fd, WISP_IPPROTO_IP, WISP_IP_TOS, &iv, sizeof(iv)); break;
    case 10: (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_BROADCAST, &iv, sizeof(iv)); break;
    case 11:
        tv.tv_sec = 0;
        tv.tv_usec = (long)v * 1000; /* no effect on a non-blocking socket */
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, (v & 1) ? WISP_SO_RCVTIMEO : WISP_SO_SNDTIMEO, &tv, sizeof(tv));
        break;
    case 12: (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_RCVLOWAT, &iv, sizeof(iv)); break;
    default: /* bad length / unknown option / bad level */
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &iv, 1);
        (void)wisp_setsockopt(fd, v, v, &iv, sizeof(iv));
        (void)wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_TYPE, &iv, sizeof(iv));
        break;
    }
}

static void sock_getopt(int fd, uint8_t which)
{
    static const int opts[][2] = {
        { WISP_SOL_SOCKET, WISP_SO_ERROR },       { WISP_SOL_SOCKET, WISP_SO_TYPE },
        { WISP_SOL_SOCKET, WISP_SO_RCVBUF },      { WISP_SOL_SOCKET, WISP_SO_SNDBUF },
        { WISP_SOL_SOCKET, WISP_SO_ACCEPTCONN },  { WISP_SOL_SOCKET, WISP_SO_LINGER },
        { WISP_SOL_SOCKET, WISP_SO_KEEPALIVE },   { WISP_SOL_SOCKET, WISP_SO_RCVTIMEO },
        { WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY }, { WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG },
        { WISP_IPPROTO_IP, WISP_IP_TTL },         { WISP_SOL_SOCKET, WISP_SO_REUSEADDR },
    };
    uint8_t v[32];
    wisp_socklen_t len = (which & 0x80u) ? 2u : (wisp_socklen_t)sizeof(v);
    const int *o = opts[(which & 0x7fu) % (sizeof(opts) / sizeof(opts[0]))];
    (void)wisp_getsockopt(fd, o[0], o[1], v, &len);
}

static void sock_poll(uint8_t mask, uint8_t ev)
{
    struct wisp_pollfd pf[SOCK_SLOTS + 1];
    unsigned i, n = 0;
    for (i = 0; i < SOCK_SLOTS; i++) {
        if (mask & (1u << i)) {
            pf[n].fd = sock_fd[i];
            pf[n].events = (short)((ev & 1u ? WISP_POLLIN : 0) | (ev & 2u ? WISP_POLLOUT : 0) |
                                   (ev & 4u ? WISP_POLLPRI : 0));
            pf[n].revents = 0;
            n++;
        }
    }
    if (ev & 8u) {
        pf[n].fd = 12345; /* not a socket */
        pf[n].events = WISP_POLLIN;
        pf[n].revents = 0;
        n++;
    }
    (void)wisp_poll(pf, n, 0);
}

static void sock_select(uint8_t mask, uint8_t ev)
{
    wisp_fd_set r, w, x;
    struct wisp_timeval tv;
    unsigned i;
    int maxfd = -1;
    WISP_FD_ZERO(&r);
    WISP_FD_ZERO(&w);
    WISP_FD_ZERO(&x);
    for (i = 0; i < SOCK_SLOTS; i++) {
        if ((mask & (1u << i)) && sock_fd[i] >= 0) {
            if (ev & 1u) {
                WISP_FD_SET(sock_fd[i], &r);
            }
            if (ev & 2u) {
                WISP_FD_SET(sock_fd[i], &w);
            }
            if (ev & 4u) {
                WISP_FD_SET(sock_fd[i], &x);
            }
            maxfd = sock_fd[i] > maxfd ? sock_fd[i] : maxfd;
        }
    }
    tv.tv_sec = 0;
    tv.tv_usec = 0;
    (void)wisp_select(maxfd + 1, &r, &w, &x, &tv);
}

static void sock_op(uint8_t op, uint8_t a, uint8_t b)
{
    static const uint32_t adv[8] = { 1, 10, 200, 1000, 3000, 10000, 60000, 300000 };
    static const int sendflags[4] = { 0, WISP_MSG_DONTWAIT, WISP_MSG_MORE, WISP_MSG_NOSIGNAL | WISP_MSG_OOB };
    static const int recvflags[4] = { 0, WISP_MSG_PEEK, WISP_MSG_TRUNC | WISP_MSG_DONTWAIT, WISP_MSG_WAITALL };
    unsigned slot = a & (SOCK_SLOTS - 1u);
    int fd = sock_fd[slot];
    struct wisp_sockaddr_in sa;
    wisp_socklen_t alen;
    size_t len;
    int r = 0, stream;

    switch (op % 20u) {
    case 0: { /* socket */
        static const int types[4] = { WISP_SOCK_STREAM, WISP_SOCK_DGRAM, WISP_SOCK_RAW, 77 };
        int s = wisp_socket((b & 0x80u) ? 1234 : WISP_AF_INET, types[b & 3u], (b & 0x40u) ? 255 : 0);
        if (s >= 0) {
            int on = 1;
            if (b & 4u) {
                r = wisp_ioctl(s, WISP_FIONBIO, &on);
            } else {
                r = wisp_fcntl(s, WISP_F_SETFL, WISP_O_NONBLOCK);
            }
            if (r != 0) {
                fz_fail("sockets: cannot make socket %d non-blocking", s);
            }
        }
        sock_store(s);
        r = s;
        break;
    }
    case 1:
        sa = sock_addr(b);
        r = wisp_bind(fd, (const struct wisp_sockaddr *)&sa, sock_alen(b));
        break;
    case 2: r = wisp_listen(fd, (int)(b % 6u) - 1); break;
    case 3:
        sa = sock_addr(b);
        r = wisp_connect(fd, (const struct wisp_sockaddr *)&sa, sock_alen(b));
        break;
    case 4:
        alen = (b & 1u) ? 3u : (wisp_socklen_t)sizeof(sa);
        r = wisp_accept(fd, (b & 2u) ? NULL : (struct wisp_sockaddr *)&sa, (b & 2u) ? NULL : &alen);
        /* as on Linux, the accepted socket does not inherit O_NONBLOCK */
        if (r >= 0 && wisp_fcntl(r, WISP_F_SETFL, WISP_O_NONBLOCK) != 0) {
            fz_fail("sockets: cannot make accepted socket %d non-blocking", r);
        }
        sock_store(r);
        break;
    case 5:
        len = (size_t)(b >> 2) * 61u + (a >> 3);
        stream = sock_is_stream(fd);
        sock_fill(slot, stream, sock_buf, len, NULL, 0);
        r = (int)wisp_send(fd, sock_buf, len, sendflags[b & 3u]);
        if (stream && r > 0) {
            sock_st[slot].tx += (uint32_t)r;
        }
        break;
    case 6:
        len = (size_t)(b >> 2) * 67u + 1u;
        stream = sock_is_stream(fd);
        r = (int)wisp_recv(fd, sock_buf, len, recvflags[b & 3u] | WISP_MSG_DONTWAIT);
        if (r > 0) { /* with MSG_TRUNC a datagram's r is its length: check what was copied */
            sock_check(slot, stream, stream ? sock_port(fd, 1) : 0, sock_buf, (size_t)r, NULL,
                       (long)((size_t)r < len ? (size_t)r : len), (recvflags[b & 3u] & WISP_MSG_PEEK) != 0);
        }
        break;
    case 7:
        sa = sock_addr(b);
        len = (size_t)(a >> 3) * 100u;
        stream = sock_is_stream(fd);
        sock_fill(slot, stream, sock_buf, len, NULL, 0);
        r = (int)wisp_sendto(fd, sock_buf, len, 0, (const struct wisp_sockaddr *)&sa, sock_alen(b));
        if (stream && r > 0) {
            sock_st[slot].tx += (uint32_t)r;
        }
        break;
    case 8:
        alen = (b & 1u) ? 2u : (wisp_socklen_t)sizeof(sa);
        stream = sock_is_stream(fd);
        len = (size_t)(b >> 1) * 5u;
        r = (int)wisp_recvfrom(fd, sock_buf, len, recvflags[(a >> 3) & 3u], (struct wisp_sockaddr *)&sa, &alen);
        if (r > 0) { /* with MSG_TRUNC a datagram's r is its length: check what was copied */
            sock_check(slot, stream, stream ? sock_port(fd, 1) : 0, sock_buf, (size_t)r, NULL,
                       (long)((size_t)r < len ? (size_t)r : len), (recvflags[(a >> 3) & 3u] & WISP_MSG_PEEK) != 0);
        }
        break;
    case 9: r = wisp_shutdown(fd, (int)(b % 4u)); break;
    case 10:
        r = wisp_close(fd);
        sock_fd[slot] = -1;
        memset(&sock_st[slot], 0, sizeof(sock_st[slot]));
        break;
    case 11: sock_setopt(fd, (uint8_t)(a >> 3), b); break;
    case 12: sock_getopt(fd, b); break;
    case 13: sock_poll(b, a >> 3); break;
    case 14: sock_select(b, a >> 3); break;
    case 15:
        alen = (b & 1u) ? 1u : (wisp_socklen_t)sizeof(sa);
        r = (b & 2u) ? wisp_getpeername(fd, (struct wisp_sockaddr *)&sa, &alen)
                     : wisp_getsockname(fd, (struct wisp_sockaddr *)&sa, &alen);
        break;
    case 16: {
        int avail = 0;
        r = (b & 1u) ? wisp_ioctl(fd, WISP_FIONREAD, &avail) : wisp_fcntl(fd, WISP_F_GETFL, 0);
        break;
    }
    case 17: { /* gather write / scatter read */
        struct wisp_iovec iov[3];
        struct wisp_msghdr m;
        memset(&m, 0, sizeof(m));
        stream = sock_is_stream(fd);
        iov[0].iov_base = sock_buf;
        iov[0].iov_len = (size_t)(b & 7u) * 30u;
        iov[1].iov_base = sock_buf + 300;
        iov[1].iov_len = 0;
        iov[2].iov_base = sock_buf + 300;
        iov[2].iov_len = (size_t)((b >> 3) & 7u) * 40u;
        m.msg_iov = iov;
        m.msg_iovlen = 3;
        if (!(b & 0x80u)) {
            sock_fill(slot, stream, sock_buf, iov[0].iov_len, sock_buf + 300, iov[2].iov_len);
        }
        if (b & 0x40u) {
            sa = sock_addr(a);
            m.msg_name = &sa;
            m.msg_namelen = sizeof(sa);
        }
        if (b & 0x80u) {
            size_t cap = iov[0].iov_len + iov[2].iov_len;
            r = (int)wisp_recvmsg(fd, &m, WISP_MSG_DONTWAIT);
            if (r > 0) {
                sock_check(slot, stream, stream ? sock_port(fd, 1) : 0, sock_buf, iov[0].iov_len, sock_buf + 300,
                           (long)((size_t)r < cap ? (size_t)r : cap), 0);
            }
        } else {
            r = (int)wisp_sendmsg(fd, &m, 0);
            if (stream && r > 0) {
                sock_st[slot].tx += (uint32_t)r;
            }
        }
        break;
    }
    default: sock_advance(adv[b & 7u]); break;
    }
    if (sock_verbose) {
        fprintf(stderr, "op %u slot %u (fd %d) arg %u -> %d (errno %d)\n", op % 20u, slot, fd, b, r,
                r < 0 ? wisp_errno() : 0);
    }
    sock_settle();
}

int fuzz_sockets_one(const uint8_t *data, size_t size);

int fuzz_sockets_one(const uint8_t *data, size_t size)
{
    struct fz_env *e = &sock_env;
    unsigned baseline, i, ops = 0;
    size_t off = 0;
    int left;

    sock_verbose = getenv("FUZZ_VERBOSE") != NULL;
    for (i = 0; i < SOCK_SLOTS; i++) {
        sock_fd[i] = -1;
    }
    fz_env_init(e, 3, 1);
    fz_arp_peer(e);
    if (wisp_sys_init() != WISP_OK || wisp_tcpip_start(&sock_ctx, e->s, NULL) != WISP_OK ||
        wisp_netconn_api_init(&sock_api, &sock_ctx) != WISP_OK || wisp_sockets_init(&sock_tbl, &sock_api) != WISP_OK) {
        fz_fail("sockets: setup");
    }
    wisp_tcpip_lock(&sock_ctx);
    baseline = wisp_stack_pools_in_use(e->s);
    wisp_tcpip_unlock(&sock_ctx);

    while (off + 3 <= size && ops++ < SOCK_OPS) {
        sock_op(data[off], data[off + 1], data[off + 2]);
        off += 3;
    }

    for (i = 0; i < SOCK_SLOTS; i++) {
        if (sock_fd[i] >= 0) {
            if (wisp_close(sock_fd[i]) != 0) {
                fz_fail("sockets: close(%d) of an open socket failed (errno %d)", sock_fd[i], wisp_errno());
            }
            sock_fd[i] = -1;
        }
    }
    sock_settle();
    sock_advance(20u * 60u * 1000u);
    left = wisp_sockets_in_use();
    if (left != 0) {
        fz_fail("sockets: %d sockets still in use after close and 20 min", left);
    }
    wisp_tcpip_lock(&sock_ctx);
    fz_check_pools(e, baseline, "sockets: after close and 20 min");
    wisp_tcpip_unlock(&sock_ctx);
    if (wisp_sockets_deinit() != 0) {
        fz_fail("sockets: deinit found open sockets");
    }
    if (wisp_netconn_api_deinit(&sock_api) != WISP_OK) {
        fz_fail("sockets: netconn_api_deinit");
    }
    wisp_tcpip_stop(&sock_ctx);
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_sockets_one(data, size);
}
#endif
