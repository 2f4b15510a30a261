/**
 * @file test_sockets_opts.c
 * Socket options with Linux's semantics and their effect seen from the
 * outside (issue 11 item 7): SO_SNDBUF bounding the data queued (a
 * blocking writer blocks, a non-blocking one gets EAGAIN, poll agrees),
 * SO_RCVBUF bounding the advertised window, TCP_MAXSEG limiting the MSS
 * announced and the segments on the wire, TCP_KEEPIDLE / TCP_KEEPINTVL /
 * TCP_KEEPCNT ranges and units, TCP_INFO (struct tcp_info: state, rtt,
 * rto, cwnd, mss, retransmits, unacked), options inherited by accepted
 * sockets, recv returning all queued data in one call however many
 * segments it came in, and TCP_CONGESTION.
 *
 * Same set-up as test_sockets.c (sock_testlib.h): one stack on its stack
 * thread in real time with a recording device towards the "peer"
 * 198.18.0.1, which the test plays by hand (segments injected and popped under the core lock,
 * tcp_testlib.h), plus loopback for socket pairs.
 */
#define _DEFAULT_SOURCE /* glibc: struct tcp_info of <netinet/tcp.h> under -std=c99 */
#include <stdlib.h>
#include <stddef.h>
#include <errno.h>
#include <netinet/tcp.h> /* the host's struct tcp_info: the layout to match */

#include "testutil.h"
#include "tcp_testlib.h"
#include "sock_testlib.h"

static struct senv senv_start(void)
{
    return sock_env_start(11, true);
}

static void senv_stop(struct senv *t)
{
    sock_env_stop(t, true);
}

static int geti(int fd, int level, int opt)
{
    int v = -12345;
    wisp_socklen_t vl = sizeof v;
    assert_int_equal(wisp_getsockopt(fd, level, opt, &v, &vl), 0);
    assert_int_equal(vl, sizeof v);
    return v;
}

static int seti(int fd, int level, int opt, int v)
{
    return wisp_setsockopt(fd, level, opt, &v, sizeof v);
}

static struct wisp_sock_tcp_info tcpinfo(int fd)
{
    struct wisp_sock_tcp_info ti;
    wisp_socklen_t l = sizeof ti;
    memset(&ti, 0xa5, sizeof ti);
    assert_int_equal(wisp_getsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_INFO, &ti, &l), 0);
    assert_int_equal(l, sizeof ti);
    return ti;
}

static struct wisp_tcp_pcb *pcb_of(struct senv *t, int fd)
{
    return t->tbl->sock[fd - WISP_SOCKET_OFFSET].conn->pcb.tcp;
}

/* Reset on close (SO_LINGER {1, 0}): the connection to the silent peer
 * is gone at once. */
static void close_rst(int fd)
{
    struct wisp_linger l = { 1, 0 };
    assert_int_equal(wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_LINGER, &l, sizeof l), 0);
    assert_int_equal(wisp_close(fd), 0);
}

/* The peer's side of a connection the socket opened to 198.18.0.1. */
struct peer {
    struct tt tt;
    uint16_t pport, lport;
    uint32_t iss;   /* the stack's ISS */
    uint32_t snd;   /* peer: next sequence number */
    uint32_t high;  /* data received: end of the highest segment, offset from iss + 1 */
    struct tt_seg syn;
};

#define PEER_ISN 0x30000000u

/* Non-blocking connect of fd to the peer; the peer answers the SYN with a
 * SYN-ACK carrying opts and window wnd; returns once fd is writable. */
static void peer_handshake(struct senv *t, struct peer *p, int fd, uint16_t pport, const struct tt_opts *opts,
                           uint16_t wnd)
{
    struct wisp_sockaddr_in a = sin_of(tu_ip_peer(), pport);
    struct wisp_pollfd pfd;
    struct tt_seg g;
    bool syn = false;
    memset(p, 0, sizeof(*p));
    p->tt.e = t->e;
    p->pport = pport;
    assert_int_equal(wisp_fcntl(fd, WISP_F_SETFL, WISP_O_NONBLOCK), 0);
    assert_int_equal(wisp_connect(fd, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EINPROGRESS);
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    for (;;) {
        wisp_tcpip_lock(t->ctx);
        while (!syn && tt_pop(&p->tt, &g)) {
            if ((g.flags & TT_SYN) && g.dport == pport) {
                syn = true;
                p->syn = g;
                p->iss = g.seq;
                p->lport = g.sport;
            }
        }
        if (syn) {
            tt_inject(&p->tt, pport, p->lport, PEER_ISN, p->iss + 1u, TT_SYN | TT_ACK, wnd, opts, NULL, 0);
        }
        wisp_tcpip_unlock(t->ctx);
        if (syn) {
            break;
        }
        TU_POLL(&tp, "no SYN");
    }
    p->snd = PEER_ISN + 1u;
    pfd.fd = fd;
    pfd.events = WISP_POLLOUT;
    assert_int_equal(wisp_poll(&pfd, 1, 3000), 1);
    assert_int_equal(pfd.revents, WISP_POLLOUT);
    assert_int_equal(wisp_fcntl(fd, WISP_F_SETFL, 0), 0); /* blocking from now on */
}

/* Pop the stack's segments to the peer for up to ms (stops early once
 * want data bytes were seen, want > 0): data bytes popped; every segment's
 * window right edge is checked against *max_right (when not NULL), the
 * largest data length goes to *max_len, the last segment to *last, the
 * number of data segments is added to *nseg. */
static uint32_t peer_pop(struct senv *t, struct peer *p, uint32_t ms, uint32_t want, uint32_t *max_right,
                         uint16_t *max_len, struct tt_seg *last, unsigned *nseg)
{
    uint32_t got = 0;
    static struct tt_seg g;
    struct tu_poll tp = tu_poll_start(ms); /* the window of observation */
    for (;;) {
        bool any = false;
        wisp_tcpip_lock(t->ctx);
        while (tt_pop(&p->tt, &g)) {
            if (g.dport != p->pport) {
                continue;
            }
            any = true;
            got += g.len;
            if (g.len > 0 && (int32_t)(g.seq + g.len - (p->iss + 1u) - p->high) > 0) {
                p->high = g.seq + g.len - (p->iss + 1u);
            }
            if (max_right != NULL && (g.flags & TT_ACK)) {
                assert_true((int32_t)(g.ack + g.wnd - *max_right) <= 0);
            }
            if (max_len != NULL && g.len > *max_len) {
                *max_len = g.len;
            }
            if (last != NULL) {
                *last = g;
            }
            if (nseg != NULL && g.len > 0) {
                (*nseg)++;
            }
        }
        wisp_tcpip_unlock(t->ctx);
        if (want > 0 && got >= want) {
            return got;
        }
        if (!any && !tu_poll_more(&tp)) {
            return got;
        }
    }
}

static void peer_ack(struct senv *t, struct peer *p, uint32_t acked, uint16_t wnd)
{
    wisp_tcpip_lock(t->ctx);
    tt_inject(&p->tt, p->pport, p->lport, p->snd, p->iss + 1u + acked, TT_ACK, wnd, NULL, NULL, 0);
    wisp_tcpip_unlock(t->ctx);
}

static void peer_data(struct senv *t, struct peer *p, uint32_t acked, const void *data, uint16_t len)
{
    wisp_tcpip_lock(t->ctx);
    tt_inject(&p->tt, p->pport, p->lport, p->snd, p->iss + 1u + acked, TT_ACK | TT_PSH, 65535, NULL, data, len);
    wisp_tcpip_unlock(t->ctx);
    p->snd += len;
}

static uint8_t pat(size_t i)
{
    return (uint8_t)(i * 7u + (i >> 8));
}

/* ------------------------------------------------------------ keepalive */

/* Linux: TCP_KEEPIDLE / TCP_KEEPINTVL in seconds 1..32767, TCP_KEEPCNT
 * 1..127, EINVAL outside (nothing changed); read back as set; the
 * connection gets the times in ms. */
static void test_sockets_opts_keepalive_linux_ranges_and_units(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv;
    uint32_t idle, intvl;
    uint8_t cnt;
    (void)state;
    lfd = tcp_listener(6010, 2);
    tcp_pair(lfd, 6010, &cli, &srv);
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE), WISP_TCP_KEEPIDLE_MS / 1000);
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL), WISP_TCP_KEEPINTVL_MS / 1000);
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT), WISP_TCP_KEEPCNT);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, 32767), 0);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, 1), 0);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, 127), 0);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, 32768), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, 32768), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, -5), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, 128), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    /* unchanged by the refused values */
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE), 32767);
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL), 1);
    assert_int_equal(geti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT), 127);
    wisp_tcpip_lock(t.ctx);
    idle = pcb_of(&t, cli)->keep_idle;
    intvl = pcb_of(&t, cli)->keep_intvl;
    cnt = pcb_of(&t, cli)->keep_cnt;
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(idle, 32767000u);
    assert_int_equal(intvl, 1000u);
    assert_int_equal(cnt, 127);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* --------------------------------------------------- SO_SNDBUF / RCVBUF */

/* Linux: the value is clamped (no error, a negative value is the
 * maximum) and reported doubled; UDP sockets accept it; an accepted
 * socket inherits the listener's SO_SNDBUF / SO_RCVBUF / TCP_MAXSEG and
 * its connection gets them. */
static void test_sockets_opts_buffer_values_clamped_doubled_inherited(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, u;
    uint32_t sb, rb;
    uint16_t mss, umss;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 2 * WISP_TCP_SND_BUF);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF), 2 * WISP_TCP_WND);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF, 8192), 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 16384);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF, 1), 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 2 * WISP_TCP_MSS);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF, -1), 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 2 * WISP_TCP_SND_BUF);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF, 0x7fffffff), 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF), 2 * WISP_TCP_WND);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF, 0), 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF), 2 * WISP_TCP_MSS);
    assert_int_equal(wisp_close(u), 0);
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_SNDBUF, 4096), 0);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_RCVBUF, 4096), 0);
    assert_int_equal(wisp_close(u), 0);

    lfd = tcp_listener(6020, 2);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_SNDBUF, 10000), 0);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_RCVBUF, 12000), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 900), 0);
    assert_int_equal(geti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG), 900);
    tcp_pair(lfd, 6020, &cli, &srv);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 20000);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_RCVBUF), 24000);
    wisp_tcpip_lock(t.ctx);
    sb = pcb_of(&t, srv)->snd_buf;
    rb = pcb_of(&t, srv)->rcv_buf;
    mss = pcb_of(&t, srv)->mss;
    umss = pcb_of(&t, srv)->user_mss;
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(sb, 10000);
    assert_int_equal(rb, 12000);
    assert_int_equal(umss, 900);
    assert_true(mss <= 900);
    assert_true(geti(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG) <= 900);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

struct writer {
    int fd;
    size_t len;
    const uint8_t *data;
    wisp_ssize_t r;
    int err;
    uint32_t done_ms;
};

static void writer_thread(void *arg)
{
    struct writer *w = (struct writer *)arg;
    w->r = wisp_send(w->fd, w->data, w->len, 0);
    w->err = errno;
    w->done_ms = wisp_sys_now_ms();
}

/* SO_SNDBUF bounds the bytes written and not acknowledged (the peer's
 * window is wide open and it acknowledges nothing): non-blocking sends
 * take exactly the bound, then EAGAIN; poll reports no POLLOUT; a blocking
 * writer blocks until the peer's ACK makes room, then completes. */
static void test_sockets_opts_sndbuf_blocks_the_writer(void **state)
{
    struct senv t = senv_start();
    static struct peer p;
    static uint8_t buf[8192];
    struct wisp_pollfd pfd;
    struct writer w;
    wisp_sys_thread_t th;
    wisp_ssize_t r;
    size_t total = 0, i;
    uint32_t queued, ack_ms;
    int fd;
    (void)state;
    for (i = 0; i < sizeof buf; i++) {
        buf[i] = pat(i);
    }
    fd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_true(fd >= 0);
    peer_handshake(&t, &p, fd, 7810, NULL, 65535);
    {
        /* bounds the test's wait should the writer never be woken */
        struct wisp_timeval tv = { 10, 0 };
        assert_int_equal(wisp_setsockopt(fd, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), 0);
    }
    assert_int_equal(seti(fd, WISP_SOL_SOCKET, WISP_SO_SNDBUF, 4096), 0);
    assert_int_equal(geti(fd, WISP_SOL_SOCKET, WISP_SO_SNDBUF), 8192);
    for (i = 0; i < 100; i++) {
        r = wisp_send(fd, buf + total, 1000, WISP_MSG_DONTWAIT);
        if (r < 0) {
            break;
        }
        total += (size_t)r;
    }
    assert_int_equal(r, -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(total, 4096);
    wisp_tcpip_lock(t.ctx);
    queued = pcb_of(&t, fd)->snd_queued;
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(queued, 4096);
    pfd.fd = fd;
    pfd.events = WISP_POLLOUT;
    assert_int_equal(wisp_poll(&pfd, 1, 0), 0);
    /* a blocking writer blocks */
    memset(&w, 0, sizeof w);
    w.fd = fd;
    w.data = buf + total;
    w.len = 3000;
    assert_int_equal(wisp_sys_thread_new(&th, "writer", writer_thread, &w, 0, 0), WISP_OK);
    WAIT_IN_SEND(&th, fd); /* it blocks for room */
    (void)peer_pop(&t, &p, TU_WAIT_MS, 4096u - WISP_TCP_MSS, NULL, NULL, NULL, NULL);
    /* (Nagle may hold the last short piece back) */
    assert_true(p.high >= 4096u - WISP_TCP_MSS && p.high <= 4096u);
    ack_ms = wisp_sys_now_ms();
    peer_ack(&t, &p, p.high, 65535);
    wisp_sys_thread_join(&th);
    if (w.r != 3000) {
        fail_msg("writer: %d errno %d abort_rtx %u rto %u ka %u", (int)w.r, w.err, (unsigned)TU_CTR(t.e, TCP_ABORT_RTX),
                 (unsigned)TU_CTR(t.e, TCP_TIMEOUT), (unsigned)TU_CTR(t.e, TCP_ABORT_KEEPALIVE));
    }
    assert_true(w.done_ms >= ack_ms);
    wisp_tcpip_lock(t.ctx);
    queued = pcb_of(&t, fd)->snd_queued;
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(queued, 7096u - p.high);
    assert_int_equal(wisp_poll(&pfd, 1, 0), 0); /* less than half free */
    /* room again: all acknowledged */
    for (i = 0; i < 20 && p.high < 7096u; i++) {
        (void)peer_pop(&t, &p, 100, 0, NULL, NULL, NULL, NULL);
        peer_ack(&t, &p, p.high, 65535);
    }
    assert_int_equal(p.high, 7096);
    assert_int_equal(wisp_poll(&pfd, 1, 1000), 1);
    assert_int_equal(pfd.revents, WISP_POLLOUT);
    close_rst(fd);
    senv_stop(&t);
}

/* SO_RCVBUF set before connect bounds the window of the SYN and every
 * window after it while the application does not read; one recv then
 * returns everything received (four segments); reading reopens the
 * window. */
static void test_sockets_opts_rcvbuf_bounds_the_advertised_window(void **state)
{
    struct senv t = senv_start();
    static struct peer p;
    static uint8_t data[4000], got[8192];
    struct tt_seg last;
    uint32_t right0, i;
    int fd, avail = 0;
    wisp_ssize_t r;
    (void)state;
    for (i = 0; i < sizeof data; i++) {
        data[i] = pat(i);
    }
    fd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(seti(fd, WISP_SOL_SOCKET, WISP_SO_RCVBUF, 4000), 0);
    assert_int_equal(geti(fd, WISP_SOL_SOCKET, WISP_SO_RCVBUF), 8000);
    peer_handshake(&t, &p, fd, 7820, NULL, 65535); /* no window scaling */
    assert_true(p.syn.wnd > 0 && p.syn.wnd <= 4000);
    right0 = PEER_ISN + 1u + 4000u;
    memset(&last, 0, sizeof last);
    for (i = 0; i < 4; i++) {
        peer_data(&t, &p, 0, data + 1000u * i, 1000);
        (void)peer_pop(&t, &p, 20, 0, &right0, NULL, &last, NULL);
    }
    /* (the delayed ACK) all taken, window closed */
    (void)peer_pop(&t, &p, 600, 0, &right0, NULL, &last, NULL);
    assert_true(last.flags & TT_ACK);
    assert_int_equal(last.ack, PEER_ISN + 1u + 4000u);
    assert_int_equal(last.wnd, 0);
    assert_int_equal(wisp_ioctl(fd, WISP_FIONREAD, &avail), 0);
    assert_int_equal(avail, 4000);
    r = wisp_recv(fd, got, sizeof got, 0);
    assert_int_equal(r, 4000);
    assert_memory_equal(got, data, 4000);
    /* the window reopens (a window update) */
    memset(&last, 0, sizeof last);
    (void)peer_pop(&t, &p, 1000, 0, NULL, NULL, &last, NULL);
    assert_true(last.flags & TT_ACK);
    assert_true(last.wnd > 0 && last.wnd <= 4000);
    close_rst(fd);
    senv_stop(&t);
}

/* ---------------------------------------------------- TCP_MAXSEG / INFO */

/* TCP_MAXSEG (Linux): 0 or 88..32767, else EINVAL; reads 536 before it is
 * set, the value set before the connection, the data bytes per segment
 * after. Set before connect it is the MSS of the SYN and no data segment
 * is larger, though the peer offers 1460. TCP_INFO follows the
 * connection: SYN-SENT, then ESTABLISHED with the segments in flight,
 * none once acknowledged, a retransmission counted. */
static void test_sockets_opts_maxseg_on_the_wire_and_tcp_info(void **state)
{
    struct senv t = senv_start();
    static struct peer p;
    static uint8_t buf[5000];
    struct tt_opts o;
    struct wisp_sock_tcp_info ti;
    uint16_t maxlen = 0;
    uint32_t got, start;
    unsigned nseg = 0;
    int fd, u, lfd;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof buf; i++) {
        buf[i] = pat(i);
    }
    fd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(geti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG), 536);
    assert_int_equal(seti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 87), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 32768), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, -1), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 88), 0);
    assert_int_equal(geti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG), 88);
    assert_int_equal(seti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 1000), 0);
    assert_int_equal(geti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG), 1000);
    ti = tcpinfo(fd);
    assert_int_equal(ti.tcpi_state, 7); /* TCP_CLOSE */
    /* TCP_INFO is read-only, TCP only; a short buffer gets the head */
    assert_int_equal(wisp_setsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_INFO, &ti, sizeof ti), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    {
        wisp_socklen_t l = sizeof ti;
        assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_INFO, &ti, &l), -1);
        assert_int_equal(errno, WISP_ENOPROTOOPT);
    }
    assert_int_equal(wisp_close(u), 0);
    lfd = tcp_listener(6030, 1);
    {
        uint8_t head[4] = { 0, 0, 0, 0 };
        wisp_socklen_t l = sizeof head;
        assert_int_equal(wisp_getsockopt(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_INFO, head, &l), 0);
        assert_int_equal(l, 4);
        assert_int_equal(head[0], 10); /* TCP_LISTEN */
    }
    assert_int_equal(wisp_close(lfd), 0);

    memset(&o, 0, sizeof o);
    o.mss = 1460;
    o.ws = 0xff;
    o.sackp = true;
    peer_handshake(&t, &p, fd, 7830, &o, 65535);
    assert_int_equal(p.syn.mss, 1000);
    assert_int_equal(geti(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG), 1000); /* no timestamps */
    ti = tcpinfo(fd);
    assert_int_equal(ti.tcpi_state, 1); /* TCP_ESTABLISHED */
    assert_int_equal(ti.tcpi_snd_mss, 1000);
    assert_int_equal((ti.tcpi_options & WISP_TCPI_OPT_SACK) != 0, WISP_TCP_SACK != 0); /* none when compiled out */
    assert_false(ti.tcpi_options & WISP_TCPI_OPT_TIMESTAMPS);
    assert_int_equal(ti.tcpi_unacked, 0);
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_send(fd, buf, sizeof buf, 0), (wisp_ssize_t)sizeof buf);
    got = peer_pop(&t, &p, 2000, sizeof buf, NULL, &maxlen, NULL, &nseg);
    assert_int_equal(got, sizeof buf);
    assert_int_equal(maxlen, 1000);
    assert_int_equal(nseg, 5);
    ti = tcpinfo(fd);
    assert_int_equal(ti.tcpi_unacked, 5);
    assert_true(ti.tcpi_snd_cwnd >= 5 && ti.tcpi_snd_cwnd <= 10); /* RFC 6928 IW: 10 segments of 1000 */
    assert_true(ti.tcpi_rto >= WISP_TCP_RTO_MIN_MS * 1000u && ti.tcpi_rto <= WISP_TCP_RTO_MAX_MS * 1000u);
    assert_true(ti.tcpi_rtt <= ti.tcpi_rto);
    if (wisp_sys_now_ms() - start < WISP_TCP_RTO_MIN_MS) { /* else a stall of this machine may have let the RTO fire */
        assert_int_equal(ti.tcpi_retransmits, 0);
        assert_int_equal(ti.tcpi_total_retrans, 0);
    }
    peer_ack(&t, &p, 3000, 65535);
    assert_int_equal(tcpinfo(fd).tcpi_unacked, 2);
    peer_ack(&t, &p, 5000, 65535);
    ti = tcpinfo(fd);
    assert_int_equal(ti.tcpi_unacked, 0);
    assert_true(ti.tcpi_rtt <= ti.tcpi_rto);
    /* one more segment, never acknowledged: the RTO retransmits it */
    assert_int_equal(wisp_send(fd, buf, 100, 0), 100);
    start = wisp_sys_now_ms();
    do {
        (void)peer_pop(&t, &p, 20, 0, NULL, NULL, NULL, NULL);
        ti = tcpinfo(fd);
    } while (ti.tcpi_retransmits == 0 && wisp_sys_now_ms() - start < 8000u);
    assert_true(ti.tcpi_retransmits >= 1);
#if WISP_TCP_PCB_STATS
    assert_true(ti.tcpi_total_retrans >= 1);
#endif
    assert_int_equal(ti.tcpi_unacked, 1);
    close_rst(fd);
    senv_stop(&t);
}

/* struct wisp_sock_tcp_info is Linux's struct tcp_info up to
 * tcpi_total_retrans: the same offsets as the host's <netinet/tcp.h>. */
static void test_sockets_opts_tcp_info_has_the_linux_layout(void **state)
{
    (void)state;
#define SAME_OFF(f) assert_int_equal(offsetof(struct wisp_sock_tcp_info, f), offsetof(struct tcp_info, f))
    SAME_OFF(tcpi_state);
    SAME_OFF(tcpi_retransmits);
    SAME_OFF(tcpi_backoff);
    SAME_OFF(tcpi_options);
    SAME_OFF(tcpi_rto);
    SAME_OFF(tcpi_snd_mss);
    SAME_OFF(tcpi_rcv_mss);
    SAME_OFF(tcpi_unacked);
    SAME_OFF(tcpi_lost);
    SAME_OFF(tcpi_retrans);
    SAME_OFF(tcpi_pmtu);
    SAME_OFF(tcpi_rcv_ssthresh);
    SAME_OFF(tcpi_rtt);
    SAME_OFF(tcpi_rttvar);
    SAME_OFF(tcpi_snd_ssthresh);
    SAME_OFF(tcpi_snd_cwnd);
    SAME_OFF(tcpi_advmss);
    SAME_OFF(tcpi_rcv_space);
    SAME_OFF(tcpi_total_retrans);
#undef SAME_OFF
    assert_int_equal(sizeof(struct wisp_sock_tcp_info), offsetof(struct tcp_info, tcpi_total_retrans) + 4u);
    assert_int_equal(WISP_TCPOPT_INFO, TCP_INFO);
    assert_int_equal(WISP_TCPOPT_MAXSEG, TCP_MAXSEG);
    assert_int_equal(WISP_TCPI_OPT_SACK, TCPI_OPT_SACK);
    assert_int_equal(WISP_TCPI_OPT_TIMESTAMPS, TCPI_OPT_TIMESTAMPS);
    assert_int_equal(WISP_TCPI_OPT_WSCALE, TCPI_OPT_WSCALE);
}

/* ---------------------------------------------------------------- recv */

/* recv returns all the data queued (many small segments: each send went
 * out alone with TCP_NODELAY), up to the buffer, in one call -- also when
 * there are more segments than the receive mailbox holds. */
static void test_sockets_opts_recv_takes_all_queued_segments_at_once(void **state)
{
    struct senv t = senv_start();
    static uint8_t got[65536];
    uint8_t small[7];
    int lfd, cli, srv, round;
    (void)state;
    lfd = tcp_listener(6040, 1);
    tcp_pair(lfd, 6040, &cli, &srv);
    assert_int_equal(seti(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, 1), 0);
    for (round = 0; round < 2; round++) {
        /* round 0: fewer segments than the mailbox holds; round 1: more */
        unsigned nseg = round == 0 ? WISP_NETCONN_RECVMBOX_SIZE / 2u : WISP_NETCONN_RECVMBOX_SIZE * 3u;
        size_t total = (size_t)nseg * sizeof small, off = 0, k;
        int avail = 0;
        wisp_ssize_t r;
        unsigned i;
        for (i = 0; i < nseg; i++) {
            for (k = 0; k < sizeof small; k++) {
                small[k] = pat(i * sizeof small + k);
            }
            assert_int_equal(wisp_send(cli, small, sizeof small, 0), (wisp_ssize_t)sizeof small);
        }
        /* everything arrived (loopback: acknowledged) and is queued */
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        for (;;) {
            uint32_t unacked;
            wisp_tcpip_lock(t.ctx);
            unacked = pcb_of(&t, cli)->snd_queued;
            wisp_tcpip_unlock(t.ctx);
            assert_int_equal(wisp_ioctl(srv, WISP_FIONREAD, &avail), 0);
            if (unacked == 0 && avail > 0) {
                break;
            }
            TU_POLL(&tp, "the data did not arrive");
        }
        if (round == 0) {
            /* a smaller buffer: exactly its size, then the rest */
            r = wisp_recv(srv, got, 50, 0);
            assert_int_equal(r, 50);
            off = 50;
        }
        r = wisp_recv(srv, got + off, sizeof got - off, 0);
        assert_int_equal((size_t)r, total - off);
        for (k = 0; k < total; k++) {
            assert_int_equal(got[k], pat(k));
        }
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* ------------------------------------------------------ TCP_CONGESTION */

static void get_cc(int fd, char *name, wisp_socklen_t len)
{
    wisp_socklen_t l = len;
    memset(name, 0x55, len);
    assert_int_equal(wisp_getsockopt(fd, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, name, &l), 0);
    assert_int_equal(l, WISP_MIN(len, WISP_TCP_CA_NAME_MAX));
}

static uint8_t cc_of(struct senv *t, int fd)
{
    uint8_t cc;
    wisp_tcpip_lock(t->ctx);
    cc = pcb_of(t, fd)->c.cc_algo;
    wisp_tcpip_unlock(t->ctx);
    return cc;
}

/* Linux: the name as a string of optlen bytes (ENOENT for an unknown
 * one, EINVAL for none), read back NUL-padded to TCP_CA_NAME_MAX and cut
 * to optlen; UDP: ENOPROTOOPT. It reaches the connection, set before
 * connect, after it, or on the listener for what it accepts. */
static void test_sockets_opts_tcp_congestion(void **state)
{
    struct senv t = senv_start();
    char name[32];
    int lfd, cli, srv, u;
    wisp_socklen_t l;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    get_cc(u, name, sizeof name);
    assert_memory_equal(name, WISP_TCP_CC_DEFAULT == WISP_TCP_CC_CUBIC ? "cubic\0\0\0\0\0\0\0\0\0\0\0"
                                                                      : "reno\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    assert_int_equal((unsigned char)name[16], 0x55);        /* no more than TCP_CA_NAME_MAX */
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "reno", 4), 0);
    memset(name, 0x55, sizeof name);
    get_cc(u, name, 3);
    assert_memory_equal(name, "ren", 3);
    assert_int_equal((unsigned char)name[3], 0x55);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "vegas", 5), -1);
    assert_int_equal(errno, WISP_ENOENT);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "renox", 5), -1);
    assert_int_equal(errno, WISP_ENOENT);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "reno", 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, NULL, 4), -1);
    assert_int_equal(errno, WISP_EFAULT);
    l = sizeof name;
    assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, name, NULL), -1);
    assert_int_equal(errno, WISP_EFAULT);
    assert_int_equal(cc_of(&t, u), WISP_TCP_CC_NEWRENO);
    assert_int_equal(wisp_close(u), 0);
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "reno", 4), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, name, &l), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_close(u), 0);
#if WISP_TCP_CUBIC
    /* on the listener (before listen: remembered by the socket): the
     * accepted connection gets it; and on the client after connect */
    lfd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_setsockopt(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "cubic\0junk", 10), 0);
    assert_int_equal(wisp_close(lfd), 0);
    lfd = tcp_listener(6030, 2);
    assert_int_equal(wisp_setsockopt(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "cubic", 5), 0);
    get_cc(lfd, name, sizeof name);
    assert_string_equal(name, "cubic");
    tcp_pair(lfd, 6030, &cli, &srv);
    get_cc(srv, name, sizeof name);
    assert_string_equal(name, "cubic");
    assert_int_equal(cc_of(&t, srv), WISP_TCP_CC_CUBIC);
    assert_int_equal(cc_of(&t, cli), WISP_TCP_CC_DEFAULT);
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "cubic", 6), 0);
    assert_int_equal(cc_of(&t, cli), WISP_TCP_CC_CUBIC);
    assert_int_equal(wisp_setsockopt(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "reno", 4), 0);
    assert_int_equal(cc_of(&t, srv), WISP_TCP_CC_NEWRENO);
    get_cc(srv, name, sizeof name);
    assert_string_equal(name, "reno");
    /* the data still flows both ways */
    assert_int_equal(wisp_send(cli, "ping", 4, 0), 4);
    assert_int_equal(wisp_recv(srv, name, sizeof name, 0), 4);
    assert_int_equal(wisp_send(srv, "pong", 4, 0), 4);
    assert_int_equal(wisp_recv(cli, name, sizeof name, 0), 4);
    assert_memory_equal(name, "pong", 4);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
#else
    (void)lfd;
    (void)cli;
    (void)srv;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "cubic", 5), -1);
    assert_int_equal(errno, WISP_ENOENT);
    assert_int_equal(wisp_close(u), 0);
#endif
    senv_stop(&t);
}

/* Every option: what setsockopt stores getsockopt reads back, the errors
 * of each kind of argument (short optlen, out of range, read-only, not
 * known, a TCP option on a datagram socket) and what accept() inherits
 * from the listener (one table drives both calls: sockets.c opt_table). */
static void test_sockets_opts_every_option_round_trip_errors_inherited(void **state)
{
    struct senv t = senv_start();
    struct wisp_timeval tv = { 2, 500 }, tvr;
    struct wisp_linger l = { 1, 7 }, lr;
    wisp_socklen_t len;
    int lfd, cli, srv, u, v = 1;
    (void)state;
    lfd = tcp_listener(6031, 2);
    /* booleans and ints: round trip */
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_REUSEPORT, 5), 0);
    assert_int_equal(geti(lfd, WISP_SOL_SOCKET, WISP_SO_REUSEADDR), 1);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, 1), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, 1), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, 32767), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, 1), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, 127), 0);
    assert_int_equal(seti(lfd, WISP_IPPROTO_IP, WISP_IP_TOS, 0xbb), 0);
    assert_int_equal(geti(lfd, WISP_IPPROTO_IP, WISP_IP_TOS), 0xb8);
    assert_int_equal(seti(lfd, WISP_IPPROTO_IP, WISP_IP_TTL, 200), 0);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_DEBUG, 1), 0); /* accepted, no effect */
    assert_int_equal(geti(lfd, WISP_SOL_SOCKET, WISP_SO_ACCEPTCONN), 1);
    assert_int_equal(geti(lfd, WISP_SOL_SOCKET, WISP_SO_TYPE), WISP_SOCK_STREAM);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv), 0);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), 0);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_LINGER, &l, sizeof l), 0);
    /* errors: nothing is stored */
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, 128), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, 0), -1);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, 87), -1);
    assert_int_equal(seti(lfd, WISP_IPPROTO_IP, WISP_IP_TOS, 256), -1);
    assert_int_equal(seti(lfd, WISP_IPPROTO_IP, WISP_IP_TTL, 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(geti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT), 127);
    assert_int_equal(geti(lfd, WISP_IPPROTO_IP, WISP_IP_TTL), 200);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &v, 3), -1); /* short int */
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, 77, &v, 3), -1); /* not known, short: EINVAL first */
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, 77, 1), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(seti(lfd, 99, WISP_SO_KEEPALIVE, 1), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(seti(lfd, WISP_SOL_SOCKET, WISP_SO_TYPE, 1), -1); /* read-only */
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(seti(lfd, WISP_IPPROTO_TCP, WISP_TCPOPT_INFO, 1), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_LINGER, &l, sizeof l - 1), -1);
    assert_int_equal(errno, WISP_EINVAL);
    tvr.tv_sec = 0;
    tvr.tv_usec = 1000000;
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tvr, sizeof tvr), -1);
    assert_int_equal(errno, WISP_EDOM);
    len = sizeof v;
    assert_int_equal(wisp_getsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_DEBUG, &v, &len), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    /* the accepted socket inherits them */
    tcp_pair(lfd, 6031, &cli, &srv);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_REUSEADDR), 1);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE), 1);
    assert_int_equal(geti(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY), 1);
    assert_int_equal(geti(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE), 32767);
    assert_int_equal(geti(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL), 1);
    assert_int_equal(geti(srv, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT), 127);
    assert_int_equal(geti(srv, WISP_IPPROTO_IP, WISP_IP_TOS), 0xb8);
    assert_int_equal(geti(srv, WISP_IPPROTO_IP, WISP_IP_TTL), 200);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_ACCEPTCONN), 0);
    len = sizeof tvr;
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tvr, &len), 0);
    assert_int_equal(len, sizeof tvr);
    assert_int_equal(tvr.tv_sec, 2);
    assert_int_equal(tvr.tv_usec, 1000); /* rounded up to the ms */
    len = sizeof tvr;
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tvr, &len), 0);
    assert_int_equal(tvr.tv_sec, 2);
    len = sizeof lr;
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_LINGER, &lr, &len), 0);
    assert_int_equal(lr.l_onoff, 1);
    assert_int_equal(lr.l_linger, 7);
    len = sizeof lr - 1;
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_LINGER, &lr, &len), -1);
    assert_int_equal(errno, WISP_EINVAL);
    /* TTL -1: back to the default; KEEPALIVE off on the accepted one only */
    assert_int_equal(seti(srv, WISP_IPPROTO_IP, WISP_IP_TTL, -1), 0);
    assert_int_equal(geti(srv, WISP_IPPROTO_IP, WISP_IP_TTL), WISP_IP_DEFAULT_TTL);
    assert_int_equal(seti(srv, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, 0), 0);
    assert_int_equal(geti(srv, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE), 0);
    assert_int_equal(geti(lfd, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE), 1);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    /* a datagram socket: TCP's options are not its own */
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_TYPE), WISP_SOCK_DGRAM);
    assert_int_equal(seti(u, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, 1), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_CONGESTION, "cub", 3), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    len = sizeof v;
    assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, &v, &len), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(seti(u, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, 1), 0); /* kept, no effect */
    assert_int_equal(geti(u, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE), 1);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sockets_opts_keepalive_linux_ranges_and_units, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_buffer_values_clamped_doubled_inherited, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_sndbuf_blocks_the_writer, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_rcvbuf_bounds_the_advertised_window, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_maxseg_on_the_wire_and_tcp_info, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_recv_takes_all_queued_segments_at_once, senv_teardown),
        cmocka_unit_test(test_sockets_opts_tcp_info_has_the_linux_layout),
        cmocka_unit_test_teardown(test_sockets_opts_tcp_congestion, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_opts_every_option_round_trip_errors_inherited, senv_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
