/**
 * @file test_sockets.c
 * The BSD socket layer (src/api/sockets.c) on netconn, the stack thread and
 * the POSIX sys port: every call, blocking / timed / non-blocking paths,
 * errno values, select and poll over 64 connections, close while other
 * threads block in a socket, one reader and one writer per socket, accept
 * backlog overflow, a reset by the peer (ECONNRESET for the next send, for
 * recv after the queued data, once in SO_ERROR; poll flags; a send and a
 * recv blocked at the time both fail with it; a partial send passes it on
 * to the next call), a full socket table and exhausted stack pools (clean
 * errors, then recovery), and the pool leak check of tu_env_free at the end
 * of every test.
 *
 * Each test runs one stack (tu_env: 198.18.0.2 with a recording device
 * towards the silent "peer" 198.18.0.1, plus loopback 127.0.0.1) on its
 * stack thread in real time; connections between two sockets of the test
 * go over loopback. Threads of a test record what they saw; the test
 * asserts after joining them (cmocka asserts only on the main thread).
 */
#include <stdlib.h>
#include <errno.h>

#include "testutil.h"
#include "tcp_testlib.h"
#include "sock_testlib.h"

#define SOCK_HUGE_LEN 65508 /* one byte above the largest UDP payload */

static struct senv senv_start(void)
{
    return sock_env_start(7, true);
}

static void senv_stop(struct senv *t)
{
    sock_env_stop(t, true);
}

static uint8_t pat(size_t i)
{
    return (uint8_t)(i * 7u + (i >> 8));
}

/* Receive exactly len bytes (blocking); returns bytes received. */
static size_t recv_all(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        wisp_ssize_t n = wisp_recv(fd, buf + got, len - got, 0);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    return got;
}

static void start_thread(wisp_sys_thread_t *th, wisp_sys_thread_fn fn, void *arg)
{
    assert_int_equal(wisp_sys_thread_new(th, "sock-test", fn, arg, 0, 0), WISP_OK);
}

/* ------------------------------------------------------------ creation */

static void test_sockets_socket_rejects_bad_arguments(void **state)
{
    struct senv t = senv_start();
    int fd;
    (void)state;
    assert_int_equal(wisp_socket(10 /* AF_INET6 */, WISP_SOCK_STREAM, 0), -1);
    assert_int_equal(errno, WISP_EAFNOSUPPORT);
    assert_int_equal(wisp_errno(), WISP_EAFNOSUPPORT);
    assert_int_equal(wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, WISP_IPPROTO_UDP), -1);
    assert_int_equal(errno, WISP_EPROTONOSUPPORT);
    assert_int_equal(wisp_socket(WISP_AF_INET, WISP_SOCK_RAW, 0), -1);
    assert_int_equal(errno, WISP_EPROTONOSUPPORT);
    assert_int_equal(wisp_socket(WISP_AF_INET, 77, 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    /* descriptors that are no socket */
    assert_int_equal(wisp_close(-1), -1);
    assert_int_equal(errno, WISP_EBADF);
    assert_int_equal(wisp_send(2, "x", 1, 0), -1); /* below the offset: a file */
    assert_int_equal(errno, WISP_ENOTSOCK);
    assert_int_equal(wisp_recv(WISP_SOCKET_OFFSET + WISP_SOCKET_COUNT, NULL, 0, 0), -1);
    assert_int_equal(errno, WISP_EBADF);
    fd = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM | WISP_SOCK_CLOEXEC, 0);
    assert_true(fd >= WISP_SOCKET_OFFSET);
    assert_int_equal(wisp_sockets_in_use(), 1);
    assert_int_equal(wisp_close(fd), 0);
    assert_int_equal(wisp_close(fd), -1); /* twice */
    assert_int_equal(errno, WISP_EBADF);
    assert_int_equal(wisp_socket_errno(fd), -1);
    senv_stop(&t);
}

static void test_sockets_err_to_errno_matches_lwip_mapping(void **state)
{
    (void)state;
    assert_int_equal(wisp_err_to_errno(WISP_OK), 0);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_MEM), WISP_ENOMEM);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_BUF), WISP_ENOBUFS);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_TIMEOUT), WISP_ETIMEDOUT);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_RTE), WISP_EHOSTUNREACH);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_INPROGRESS), WISP_EINPROGRESS);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_WOULDBLOCK), WISP_EWOULDBLOCK);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_USE), WISP_EADDRINUSE);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_ALREADY), WISP_EALREADY);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_ISCONN), WISP_EISCONN);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_CONN), WISP_ENOTCONN);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_ABRT), WISP_ECONNABORTED);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_RST), WISP_ECONNRESET);
    assert_int_equal(wisp_err_to_errno(WISP_ERR_ARG), WISP_EINVAL);
    /* the numbers are Linux's, so the host's errno names agree */
    assert_int_equal(WISP_EAGAIN, EAGAIN);
    assert_int_equal(WISP_EINPROGRESS, EINPROGRESS);
    assert_int_equal(WISP_ECONNREFUSED, ECONNREFUSED);
    assert_int_equal(WISP_ENOTSOCK, ENOTSOCK);
    assert_int_equal(WISP_EMSGSIZE, EMSGSIZE);
    assert_int_equal(WISP_ETIMEDOUT, ETIMEDOUT);
    assert_int_equal(WISP_EADDRINUSE, EADDRINUSE);
}

static void test_sockets_inet_pton_ntop_dotted_quad(void **state)
{
    struct wisp_in_addr a;
    char buf[WISP_INET_ADDRSTRLEN];
    (void)state;
    assert_int_equal(wisp_inet_pton(WISP_AF_INET, "198.18.0.2", &a), 1);
    assert_true(a.s_addr == wisp_ip4(198, 18, 0, 2));
    assert_int_equal(wisp_inet_pton(WISP_AF_INET, "198.18.0", &a), 0);
    assert_int_equal(wisp_inet_pton(WISP_AF_INET, "256.1.1.1", &a), 0);
    assert_int_equal(wisp_inet_pton(10, "::1", &a), -1);
    assert_int_equal(errno, WISP_EAFNOSUPPORT);
    a.s_addr = wisp_ip4(255, 255, 255, 255);
    assert_string_equal(wisp_inet_ntop(WISP_AF_INET, &a, buf, sizeof buf), "255.255.255.255");
    assert_null(wisp_inet_ntop(WISP_AF_INET, &a, buf, 15));
    assert_int_equal(errno, WISP_ENOSPC);
    a.s_addr = wisp_ip4(1, 2, 3, 4);
    assert_non_null(wisp_inet_ntop(WISP_AF_INET, &a, buf, 8)); /* "1.2.3.4" fits */
    assert_string_equal(buf, "1.2.3.4");
}

/* ------------------------------------------------------------ TCP basics */

struct bulk {
    int fd;
    size_t len, done;
    int err;
    bool ok;
};

static void bulk_send_thread(void *arg)
{
    struct bulk *b = (struct bulk *)arg;
    uint8_t chunk[3000];
    size_t i;
    b->ok = true;
    while (b->done < b->len) {
        size_t n = WISP_MIN(sizeof chunk, b->len - b->done);
        wisp_ssize_t r;
        for (i = 0; i < n; i++) {
            chunk[i] = pat(b->done + i);
        }
        r = wisp_send(b->fd, chunk, n, 0);
        if (r != (wisp_ssize_t)n) {
            b->ok = false;
            b->err = errno;
            return;
        }
        b->done += n;
    }
}

static void bulk_recv_thread(void *arg)
{
    struct bulk *b = (struct bulk *)arg;
    uint8_t buf[4096];
    size_t i;
    b->ok = true;
    while (b->done < b->len) {
        wisp_ssize_t r = wisp_recv(b->fd, buf, sizeof buf, 0);
        if (r <= 0) {
            b->ok = false;
            b->err = r < 0 ? errno : 0;
            return;
        }
        for (i = 0; i < (size_t)r; i++) {
            if (buf[i] != pat(b->done + i)) {
                b->ok = false;
                return;
            }
        }
        b->done += (size_t)r;
    }
}

static void test_sockets_tcp_connect_accept_transfer_and_names(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a, peer;
    wisp_socklen_t alen;
    int lfd, cli, srv;
    struct bulk tx, rx;
    wisp_sys_thread_t th;
    int v;
    wisp_socklen_t vl = sizeof v;
    (void)state;
    lfd = tcp_listener(5001, 4);
    /* getsockname of the listener: the bound port */
    alen = sizeof a;
    assert_int_equal(wisp_getsockname(lfd, SA(&a), &alen), 0);
    assert_int_equal(alen, sizeof a);
    assert_int_equal(wisp_ntohs(a.sin_port), 5001);
    assert_int_equal(wisp_getsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_ACCEPTCONN, &v, &vl), 0);
    assert_int_equal(v, 1);

    a = sin_of(LO, 5001);
    cli = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, WISP_IPPROTO_TCP);
    assert_int_equal(wisp_getpeername(cli, SA(&peer), &alen), -1);
    assert_int_equal(errno, WISP_ENOTCONN);
    assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_ENOTCONN);
    assert_int_equal(wisp_connect(cli, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_connect(cli, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EISCONN);
    alen = sizeof peer;
    memset(&peer, 0xee, sizeof peer);
    srv = wisp_accept(lfd, SA(&peer), &alen);
    assert_true(srv >= 0);
    assert_int_equal(alen, sizeof peer);
    assert_int_equal(peer.sin_family, WISP_AF_INET);
    assert_true(peer.sin_addr.s_addr == LO);
    /* the accepted socket's peer is the client's local address */
    alen = sizeof a;
    assert_int_equal(wisp_getsockname(cli, SA(&a), &alen), 0);
    assert_int_equal(a.sin_port, peer.sin_port);
    alen = sizeof a;
    assert_int_equal(wisp_getpeername(srv, SA(&a), &alen), 0);
    assert_int_equal(a.sin_port, peer.sin_port);
    alen = sizeof a;
    assert_int_equal(wisp_getpeername(cli, SA(&a), &alen), 0);
    assert_int_equal(wisp_ntohs(a.sin_port), 5001);

    /* 600 KB client -> server (more than the window and the send buffer),
     * the receiver checks every byte */
    memset(&tx, 0, sizeof tx);
    memset(&rx, 0, sizeof rx);
    tx.fd = cli;
    tx.len = 600000;
    rx.fd = srv;
    rx.len = tx.len;
    start_thread(&th, bulk_recv_thread, &rx);
    bulk_send_thread(&tx);
    wisp_sys_thread_join(&th);
    assert_true(tx.ok);
    assert_true(rx.ok);
    assert_int_equal(rx.done, tx.len);

    /* orderly close: the server reads EOF (0), twice, and select shows it readable */
    assert_int_equal(wisp_close(cli), 0);
    {
        uint8_t b;
        assert_int_equal(wisp_recv(srv, &b, 1, 0), 0);
        assert_int_equal(wisp_recv(srv, &b, 1, 0), 0);
    }
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_readv_writev_sendmsg_recvmsg_scatter_gather(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv;
    struct wisp_iovec v[3];
    struct wisp_msghdr m;
    char a[4] = "abc", b[6] = "defgh", c[2] = "i";
    char r1[2], r2[5], r3[16];
    uint8_t big[32];
    (void)state;
    lfd = tcp_listener(5002, 2);
    tcp_pair(lfd, 5002, &cli, &srv);
    v[0].iov_base = a;
    v[0].iov_len = 3;
    v[1].iov_base = b;
    v[1].iov_len = 5;
    v[2].iov_base = c;
    v[2].iov_len = 1;
    assert_int_equal(wisp_writev(cli, v, 3), 9);
    memset(&m, 0, sizeof m);
    m.msg_iov = v;
    m.msg_iovlen = 2;
    assert_int_equal(wisp_sendmsg(cli, &m, 0), 8);
    /* 17 bytes: "abcdefghi" "abcdefgh" */
    assert_int_equal(recv_all(srv, big, 17), 17);
    assert_memory_equal(big, "abcdefghiabcdefgh", 17);
    assert_int_equal(wisp_write(srv, "0123456789", 10), 10);
    v[0].iov_base = r1;
    v[0].iov_len = sizeof r1;
    v[1].iov_base = r2;
    v[1].iov_len = sizeof r2;
    v[2].iov_base = r3;
    v[2].iov_len = 3;
    {
        /* wait until all 10 bytes are there, then one readv takes them */
        uint8_t tmp[10];
        int n = 0;
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        for (;;) {
            assert_int_equal(wisp_ioctl(cli, WISP_FIONREAD, &n), 0);
            if (n >= 10) {
                break;
            }
            TU_POLL(&tp, "10 bytes did not arrive");
        }
        assert_int_equal(wisp_recv(cli, tmp, 3, WISP_MSG_PEEK), 3);
        assert_memory_equal(tmp, "012", 3);
    }
    assert_int_equal(wisp_readv(cli, v, 3), 10);
    assert_memory_equal(r1, "01", 2);
    assert_memory_equal(r2, "23456", 5);
    assert_memory_equal(r3, "789", 3);
    /* recvmsg of a stream: no address, flags 0, control length 0 */
    assert_int_equal(wisp_send(srv, "zz", 2, 0), 2);
    memset(&m, 0, sizeof m);
    v[0].iov_base = r3;
    v[0].iov_len = 2;
    m.msg_iov = v;
    m.msg_iovlen = 1;
    m.msg_controllen = 99;
    assert_int_equal(wisp_recvmsg(cli, &m, WISP_MSG_WAITALL), 2);
    assert_memory_equal(r3, "zz", 2);
    assert_int_equal(m.msg_controllen, 0);
    assert_int_equal(m.msg_flags, 0);
    /* bad vectors */
    assert_int_equal(wisp_writev(cli, v, 0), 0);
    assert_int_equal(wisp_writev(cli, v, WISP_SOCKET_IOV_MAX + 1), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_msg_waitall_waits_for_every_byte(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv;
    struct bulk tx;
    wisp_sys_thread_t th;
    static uint8_t buf[100000];
    size_t i;
    (void)state;
    lfd = tcp_listener(5003, 2);
    tcp_pair(lfd, 5003, &cli, &srv);
    memset(&tx, 0, sizeof tx);
    tx.fd = cli;
    tx.len = sizeof buf;
    start_thread(&th, bulk_send_thread, &tx);
    assert_int_equal(wisp_recv(srv, buf, sizeof buf, WISP_MSG_WAITALL), (wisp_ssize_t)sizeof buf);
    wisp_sys_thread_join(&th);
    assert_true(tx.ok);
    for (i = 0; i < sizeof buf; i++) {
        if (buf[i] != pat(i)) {
            fail_msg("byte %u differs", (unsigned)i);
        }
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_bind_and_listen_errors(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(WISP_IP4_ANY, 5004);
    int l1, s2, s3, u;
    (void)state;
    l1 = tcp_listener(5004, 1);
    s2 = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EADDRINUSE);
    assert_int_equal(wisp_socket_errno(s2), WISP_EADDRINUSE);
    a = sin_of(wisp_ip4(10, 9, 9, 9), 5005);
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EADDRNOTAVAIL);
    a = sin_of(LO, 5005);
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a - 1), -1);
    assert_int_equal(errno, WISP_EINVAL);
    a.sin_family = 10;
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EAFNOSUPPORT);
    assert_int_equal(wisp_bind(s2, NULL, sizeof a), -1);
    assert_int_equal(errno, WISP_EFAULT);
    a = sin_of(LO, 5005);
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_bind(s2, SA(&a), sizeof a), -1); /* bound already */
    assert_int_equal(errno, WISP_EINVAL);
    /* accept on a socket that does not listen; listen on UDP */
    assert_int_equal(wisp_accept(s2, NULL, NULL), -1);
    assert_int_equal(errno, WISP_EINVAL);
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_listen(u, 1), -1);
    assert_int_equal(errno, WISP_EOPNOTSUPP);
    /* listen on an unbound socket: an ephemeral port */
    s3 = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_listen(s3, 0), 0);
    {
        wisp_socklen_t alen = sizeof a;
        assert_int_equal(wisp_getsockname(s3, SA(&a), &alen), 0);
        assert_true(wisp_ntohs(a.sin_port) >= WISP_EPHEMERAL_MIN);
    }
    assert_int_equal(wisp_close(s3), 0);
    assert_int_equal(wisp_close(u), 0);
    assert_int_equal(wisp_close(s2), 0);
    assert_int_equal(wisp_close(l1), 0);
    senv_stop(&t);
}

/* ----------------------------------------------- timeouts and non-blocking */

static void test_sockets_so_rcvtimeo_recv_and_accept_time_out_with_eagain(void **state)
{
    struct senv t = senv_start();
    struct wisp_timeval tv = { 0, 150000 }, got;
    wisp_socklen_t gl = sizeof got;
    int lfd, cli, srv;
    uint32_t start, el;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5010, 2);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv), 0);
    assert_int_equal(wisp_getsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &got, &gl), 0);
    assert_int_equal(got.tv_sec, 0);
    assert_int_equal(got.tv_usec, 150000);
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_accept(lfd, NULL, NULL), -1);
    el = wisp_sys_now_ms() - start;
    assert_int_equal(errno, WISP_EAGAIN);
    assert_true(el >= 150 && el < 2000);
    tcp_pair(lfd, 5010, &cli, &srv);
    /* the accepted socket inherits SO_RCVTIMEO */
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_recv(srv, &b, 1, 0), -1);
    el = wisp_sys_now_ms() - start;
    assert_int_equal(errno, WISP_EWOULDBLOCK);
    assert_true(el >= 150 && el < 2000);
    /* data arriving within the timeout is returned (a timeout a loaded
     * machine cannot miss: the loopback hop runs through the stack thread) */
    tv.tv_sec = 10;
    tv.tv_usec = 0;
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv), 0);
    assert_int_equal(wisp_send(cli, "q", 1, 0), 1);
    assert_int_equal(wisp_recv(srv, &b, 1, 0), 1);
    assert_int_equal(b, 'q');
    /* bad timeval */
    tv.tv_usec = 1000000;
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), -1);
    assert_int_equal(errno, WISP_EDOM);
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, 4), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_so_sndtimeo_send_returns_partial_then_eagain(void **state)
{
    struct senv t = senv_start();
    struct wisp_timeval tv = { 0, 100000 };
    static uint8_t buf[WISP_TCP_SND_BUF + WISP_TCP_WND + 200000];
    int lfd, cli, srv, i;
    wisp_ssize_t r;
    (void)state;
    lfd = tcp_listener(5011, 2);
    tcp_pair(lfd, 5011, &cli, &srv);
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), 0);
    /* nobody reads: the window and the send buffer fill, then the timeout */
    r = wisp_send(cli, buf, sizeof buf, 0);
    assert_true(r > 0 && r < (wisp_ssize_t)sizeof buf);
    /* acknowledgements still on their way (a slow, sanitised build) may
     * free some room once more; then nothing is written: EAGAIN */
    for (i = 0; i < 20 && (r = wisp_send(cli, buf, sizeof buf, 0)) > 0; i++) {
    }
    assert_int_equal(r, -1);
    assert_int_equal(errno, WISP_EAGAIN);
    /* the connection's share of the transmit blocks may end before the
     * send buffer does (here: the loopback's receiver holds blocks too):
     * single bytes still fill the room left in its last block */
    for (i = 0; i < 4000 && wisp_send(cli, buf, 1, WISP_MSG_DONTWAIT) == 1; i++) {
    }
    assert_true(i < 4000);
    /* non-blocking: EAGAIN at once; MSG_DONTWAIT likewise */
    assert_int_equal(wisp_send(cli, buf, 1, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* SO_SNDTIMEO set on the listener is the accepted socket's too (sockets.c
 * keeps whether it is set; the value is the netconn's); 0 clears it. */
static void test_sockets_so_sndtimeo_inherited_by_accept(void **state)
{
    struct senv t = senv_start();
    struct wisp_timeval tv = { 0, 100000 }, tvr;
    static uint8_t buf[WISP_TCP_SND_BUF + WISP_TCP_WND + 200000];
    wisp_socklen_t len = sizeof tvr;
    int lfd, cli, srv;
    wisp_ssize_t r;
    (void)state;
    lfd = tcp_listener(5016, 2);
    assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), 0);
    tcp_pair(lfd, 5016, &cli, &srv);
    /* nobody reads: the accepted socket's send ends at its timeout */
    r = wisp_send(srv, buf, sizeof buf, 0);
    assert_true(r > 0 && r < (wisp_ssize_t)sizeof buf);
    tv.tv_usec = 0;
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tv, sizeof tv), 0);
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_SNDTIMEO, &tvr, &len), 0);
    assert_int_equal(tvr.tv_sec, 0);
    assert_int_equal(tvr.tv_usec, 0);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_nonblocking_recv_accept_eagain_fcntl_ioctl(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, on = 1, off = 0, n = -1;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5012, 2);
    assert_int_equal(wisp_fcntl(lfd, WISP_F_GETFL), WISP_O_RDWR);
    assert_int_equal(wisp_fcntl(lfd, WISP_F_SETFL, WISP_O_NONBLOCK | WISP_O_RDWR), 0);
    assert_int_equal(wisp_fcntl(lfd, WISP_F_GETFL, 0), WISP_O_RDWR | WISP_O_NONBLOCK);
    assert_int_equal(wisp_accept(lfd, NULL, NULL), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_fcntl(lfd, 99, 0), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_fcntl(lfd, WISP_F_SETFL, 0), 0);
    tcp_pair(lfd, 5012, &cli, &srv);
    assert_int_equal(wisp_ioctl(srv, WISP_FIONBIO, &on), 0);
    assert_int_equal(wisp_fcntl(srv, WISP_F_GETFL), WISP_O_RDWR | WISP_O_NONBLOCK);
    assert_int_equal(wisp_recv(srv, &b, 1, 0), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_ioctl(srv, WISP_FIONREAD, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(wisp_ioctl(srv, WISP_FIONBIO, &off), 0);
    assert_int_equal(wisp_recv(srv, &b, 1, WISP_MSG_DONTWAIT), -1); /* per call */
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_ioctl(srv, 0x1234, &n), -1);
    assert_int_equal(errno, WISP_EINVAL);
    /* SOCK_NONBLOCK at creation */
    {
        int s = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
        assert_int_equal(wisp_fcntl(s, WISP_F_GETFL), WISP_O_RDWR | WISP_O_NONBLOCK);
        assert_int_equal(wisp_close(s), 0);
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_nonblocking_connect_einprogress_select_so_error(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 5013);
    struct wisp_timeval tv = { 2, 0 }, zero = { 0, 0 };
    wisp_fd_set ws;
    int lfd, cli, srv, err = -1, s2;
    wisp_socklen_t el = sizeof err;
    (void)state;
    lfd = tcp_listener(5013, 2);
    cli = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
    assert_int_equal(wisp_connect(cli, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EINPROGRESS);
    WISP_FD_ZERO(&ws);
    WISP_FD_SET(cli, &ws);
    assert_int_equal(wisp_select(cli + 1, NULL, &ws, NULL, &tv), 1);
    assert_true(WISP_FD_ISSET(cli, &ws));
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &el), 0);
    assert_int_equal(err, 0);
    assert_int_equal(wisp_connect(cli, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EISCONN);
    srv = wisp_accept(lfd, NULL, NULL);
    assert_true(srv >= 0);
    assert_int_equal(wisp_send(cli, "ok", 2, 0), 2);
    {
        char b[2];
        assert_int_equal(recv_all(srv, (uint8_t *)b, 2), 2);
        assert_memory_equal(b, "ok", 2);
    }
    /* towards the silent peer: the SYN goes unanswered, a second connect
     * says EALREADY and the socket does not become writable */
    a = sin_of(tu_ip_peer(), 80);
    s2 = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
    assert_int_equal(wisp_connect(s2, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EINPROGRESS);
    assert_int_equal(wisp_connect(s2, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EALREADY);
    WISP_FD_ZERO(&ws);
    WISP_FD_SET(s2, &ws);
    assert_int_equal(wisp_select(s2 + 1, NULL, &ws, NULL, &zero), 0);
    assert_false(WISP_FD_ISSET(s2, &ws));
    assert_int_equal(wisp_send(s2, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_close(s2), 0);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_connect_refused_blocking_and_nonblocking(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 5999);
    struct wisp_pollfd pfd;
    int s, err = -1;
    wisp_socklen_t el = sizeof err;
    (void)state;
    s = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_connect(s, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_ECONNREFUSED);
    assert_int_equal(wisp_close(s), 0);

    s = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
    assert_int_equal(wisp_connect(s, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EINPROGRESS);
    pfd.fd = s;
    pfd.events = WISP_POLLOUT;
    assert_int_equal(wisp_poll(&pfd, 1, 2000), 1);
    assert_true(pfd.revents & WISP_POLLOUT);
    assert_true(pfd.revents & WISP_POLLERR);
    assert_int_equal(wisp_getsockopt(s, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &el), 0);
    assert_int_equal(err, WISP_ECONNREFUSED);
    /* read once: cleared */
    assert_int_equal(wisp_getsockopt(s, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &el), 0);
    assert_int_equal(err, 0);
    assert_int_equal(wisp_close(s), 0);
    senv_stop(&t);
}

static void test_sockets_peer_reset_gives_econnreset_then_eof_and_epipe(void **state)
{
    struct senv t = senv_start();
    struct wisp_linger lg = { 1, 0 }, lg2;
    wisp_socklen_t ll = sizeof lg2;
    struct wisp_pollfd pfd;
    int lfd, cli, srv;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5014, 2);
    tcp_pair(lfd, 5014, &cli, &srv);
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_LINGER, &lg, sizeof lg), 0);
    assert_int_equal(wisp_getsockopt(srv, WISP_SOL_SOCKET, WISP_SO_LINGER, &lg2, &ll), 0);
    assert_int_equal(lg2.l_onoff, 1);
    assert_int_equal(lg2.l_linger, 0);
    assert_int_equal(wisp_close(srv), 0); /* RST */
    pfd.fd = cli;
    pfd.events = WISP_POLLIN;
    assert_int_equal(wisp_poll(&pfd, 1, 2000), 1);
    assert_true(pfd.revents & WISP_POLLIN);
    assert_true(pfd.revents & WISP_POLLHUP);
    assert_int_equal(wisp_recv(cli, &b, 1, 0), -1);
    assert_int_equal(errno, WISP_ECONNRESET);
    assert_int_equal(wisp_recv(cli, &b, 1, 0), 0);
    assert_int_equal(wisp_send(cli, "x", 1, WISP_MSG_NOSIGNAL), -1);
    assert_int_equal(errno, WISP_EPIPE);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_shutdown_wr_gives_peer_eof_and_local_epipe(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, u;
    uint8_t b[4];
    (void)state;
    lfd = tcp_listener(5015, 2);
    tcp_pair(lfd, 5015, &cli, &srv);
    assert_int_equal(wisp_shutdown(cli, 7), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_send(cli, "ab", 2, 0), 2);
    assert_int_equal(wisp_shutdown(cli, WISP_SHUT_WR), 0);
    assert_int_equal(wisp_send(cli, "c", 1, 0), -1);
    assert_int_equal(errno, WISP_EPIPE);
    assert_int_equal(recv_all(srv, b, 2), 2);
    assert_int_equal(wisp_recv(srv, b, 1, 0), 0); /* EOF after the data */
    /* the other direction still works */
    assert_int_equal(wisp_send(srv, "back", 4, 0), 4);
    assert_int_equal(recv_all(cli, b, 4), 4);
    assert_memory_equal(b, "back", 4);
    /* SHUT_RD: reads return 0 */
    assert_int_equal(wisp_shutdown(srv, WISP_SHUT_RD), 0);
    assert_int_equal(wisp_recv(srv, b, 1, 0), 0);
    /* not connected */
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_int_equal(wisp_shutdown(u, WISP_SHUT_RDWR), -1);
    assert_int_equal(errno, WISP_ENOTCONN);
    assert_int_equal(wisp_recv(u, b, 1, 0), -1);
    assert_int_equal(errno, WISP_ENOTCONN);
    assert_int_equal(wisp_close(u), 0);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* --------------------------------------------------- reset by the peer */

/* The peer resets the connection (srv closed with SO_LINGER {1, 0}); wait
 * until cli saw the RST (poll reports POLLHUP whatever is asked). */
static void peer_resets(int srv, int cli)
{
    struct wisp_linger lg = { 1, 0 };
    struct wisp_pollfd pfd;
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_LINGER, &lg, sizeof lg), 0);
    assert_int_equal(wisp_close(srv), 0);
    pfd.fd = cli;
    pfd.events = 0;
    pfd.revents = 0;
    assert_int_equal(wisp_poll(&pfd, 1, 3000), 1);
    assert_true(pfd.revents & WISP_POLLHUP);
}

static int so_error(int fd)
{
    int err = -1;
    wisp_socklen_t el = sizeof err;
    assert_int_equal(wisp_getsockopt(fd, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &el), 0);
    return err;
}

/* Wait (up to 3 s) until fd has n bytes to read. */
static void wait_readable(int fd, int n)
{
    int avail = -1;
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    for (;;) {
        assert_int_equal(wisp_ioctl(fd, WISP_FIONREAD, &avail), 0);
        if (avail >= n) {
            break;
        }
        TU_POLL(&tp, "the data did not arrive");
    }
    assert_int_equal(avail, n);
}

/* The first send after the reset fails with ECONNRESET (not EPIPE); the
 * error is then reported: EPIPE, SO_ERROR 0, recv 0 (Linux). */
static void test_sockets_reset_next_send_gets_econnreset_then_epipe(void **state)
{
    struct senv t = senv_start();
    struct wisp_iovec v[2];
    int lfd, cli, srv;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5080, 2);
    tcp_pair(lfd, 5080, &cli, &srv);
    assert_int_equal(wisp_send(cli, "ab", 2, 0), 2); /* unread: the close resets anyway */
    peer_resets(srv, cli);
    assert_int_equal(wisp_send(cli, "x", 1, WISP_MSG_NOSIGNAL), -1);
    assert_int_equal(errno, WISP_ECONNRESET);
    assert_int_equal(wisp_socket_errno(cli), WISP_ECONNRESET);
    assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_EPIPE);
    assert_int_equal(so_error(cli), 0);
    assert_int_equal(wisp_recv(cli, &b, 1, 0), 0);
    assert_int_equal(wisp_close(cli), 0);
    /* the vectored path (writev) likewise */
    tcp_pair(lfd, 5080, &cli, &srv);
    peer_resets(srv, cli);
    v[0].iov_base = (void *)(uintptr_t) "ab";
    v[0].iov_len = 2;
    v[1].iov_base = (void *)(uintptr_t) "cd";
    v[1].iov_len = 2;
    assert_int_equal(wisp_writev(cli, v, 2), -1);
    assert_int_equal(errno, WISP_ECONNRESET);
    assert_int_equal(wisp_writev(cli, v, 2), -1);
    assert_int_equal(errno, WISP_EPIPE);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* recv returns the data received before the reset, then ECONNRESET once,
 * then 0 (end of stream), as Linux. */
static void test_sockets_reset_recv_gives_queued_data_then_econnreset_then_eof(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, round;
    char b[100];
    (void)state;
    lfd = tcp_listener(5081, 2);
    for (round = 0; round < 2; round++) {
        int fl = round == 0 ? 0 : WISP_MSG_DONTWAIT;
        tcp_pair(lfd, 5081, &cli, &srv);
        assert_int_equal(wisp_send(srv, "hello world", 11, 0), 11);
        wait_readable(cli, 11);
        peer_resets(srv, cli);
        memset(b, 0, sizeof b);
        assert_int_equal(wisp_recv(cli, b, 4, fl), 4);
        assert_memory_equal(b, "hell", 4);
        assert_int_equal(wisp_recv(cli, b, sizeof b, fl), 7);
        assert_memory_equal(b, "o world", 7);
        assert_int_equal(wisp_recv(cli, b, sizeof b, fl), -1);
        assert_int_equal(errno, WISP_ECONNRESET);
        assert_int_equal(wisp_recv(cli, b, sizeof b, fl), 0);
        assert_int_equal(wisp_recv(cli, b, sizeof b, 0), 0);
        assert_int_equal(so_error(cli), 0);
        assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
        assert_int_equal(errno, WISP_EPIPE);
        assert_int_equal(wisp_close(cli), 0);
    }
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* SO_ERROR reports the reset once and clears it; poll says POLLERR while
 * it is pending, POLLIN | POLLOUT | POLLHUP from the reset on. */
static void test_sockets_reset_so_error_once_and_poll_flags(void **state)
{
    struct senv t = senv_start();
    struct wisp_pollfd pfd;
    struct wisp_timeval zero = { 0, 0 };
    wisp_fd_set rs, ws;
    int lfd, cli, srv;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5082, 2);
    tcp_pair(lfd, 5082, &cli, &srv);
    pfd.fd = cli;
    pfd.events = WISP_POLLIN | WISP_POLLOUT;
    assert_int_equal(wisp_poll(&pfd, 1, 0), 1);
    assert_int_equal(pfd.revents, WISP_POLLOUT); /* before: writable only */
    peer_resets(srv, cli);
    assert_int_equal(wisp_poll(&pfd, 1, 0), 1);
    assert_int_equal(pfd.revents, WISP_POLLIN | WISP_POLLOUT | WISP_POLLERR | WISP_POLLHUP);
    pfd.events = WISP_POLLIN;
    assert_int_equal(wisp_poll(&pfd, 1, 0), 1);
    assert_int_equal(pfd.revents, WISP_POLLIN | WISP_POLLERR | WISP_POLLHUP);
    WISP_FD_ZERO(&rs);
    WISP_FD_ZERO(&ws);
    WISP_FD_SET(cli, &rs);
    WISP_FD_SET(cli, &ws);
    assert_int_equal(wisp_select(cli + 1, &rs, &ws, NULL, &zero), 2);
    assert_int_equal(so_error(cli), WISP_ECONNRESET);
    assert_int_equal(so_error(cli), 0); /* cleared by reading it */
    pfd.events = WISP_POLLIN | WISP_POLLOUT;
    assert_int_equal(wisp_poll(&pfd, 1, 0), 1);
    assert_int_equal(pfd.revents, WISP_POLLIN | WISP_POLLOUT | WISP_POLLHUP);
    /* reported: recv sees the end, send EPIPE */
    assert_int_equal(wisp_recv(cli, &b, 1, 0), 0);
    assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_EPIPE);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

struct rst_call {
    int fd;
    int kind; /* 0 send (more than the path holds), 1 send (1000 bytes), 2 recv */
    wisp_ssize_t r;
    int err;
};

static void rst_call_thread(void *arg)
{
    struct rst_call *c = (struct rst_call *)arg;
    static uint8_t big[WISP_TCP_SND_BUF + WISP_TCP_WND + 100000];
    uint8_t b;
    switch (c->kind) {
    case 0: c->r = wisp_send(c->fd, big, sizeof big, 0); break;
    case 1: c->r = wisp_send(c->fd, big, 1000, 0); break;
    default: c->r = wisp_recv(c->fd, &b, 1, 0); break;
    }
    c->err = errno;
}

/* A send blocked after writing part of its data when the reset comes
 * returns the bytes it wrote (as Linux); the reset is not lost: the next
 * call reports it -- a send, a recv after the data queued before the
 * reset, or SO_ERROR (wisp-node's socket echo once saw EPIPE and then
 * nothing here). */
static void test_sockets_reset_during_partial_send_goes_to_the_next_call(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, next;
    char b[16];
    (void)state;
    lfd = tcp_listener(5083, 2);
    for (next = 0; next < 3; next++) {
        struct rst_call c;
        wisp_sys_thread_t th;
        tcp_pair(lfd, 5083, &cli, &srv);
        assert_int_equal(wisp_send(srv, "abc", 3, 0), 3);
        wait_readable(cli, 3);
        memset(&c, 0, sizeof c);
        c.fd = cli;
        c.kind = 0;
        start_thread(&th, rst_call_thread, &c);
        WAIT_IN_SEND(&th, cli); /* it filled the window and waits for room */
        peer_resets(srv, cli);
        wisp_sys_thread_join(&th);
        assert_true(c.r > 0);
        assert_true((size_t)c.r < (size_t)(WISP_TCP_SND_BUF + WISP_TCP_WND + 100000));
        switch (next) {
        case 0:
            assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
            assert_int_equal(errno, WISP_ECONNRESET);
            assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
            assert_int_equal(errno, WISP_EPIPE);
            assert_int_equal(wisp_recv(cli, b, sizeof b, 0), 3); /* the data stays readable */
            assert_int_equal(wisp_recv(cli, b, sizeof b, 0), 0);
            break;
        case 1:
            assert_int_equal(wisp_recv(cli, b, sizeof b, 0), 3);
            assert_memory_equal(b, "abc", 3);
            assert_int_equal(wisp_recv(cli, b, sizeof b, 0), -1);
            assert_int_equal(errno, WISP_ECONNRESET);
            assert_int_equal(wisp_recv(cli, b, sizeof b, 0), 0);
            assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
            assert_int_equal(errno, WISP_EPIPE);
            break;
        default:
            assert_int_equal(so_error(cli), WISP_ECONNRESET);
            assert_int_equal(so_error(cli), 0);
            assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
            assert_int_equal(errno, WISP_EPIPE);
            break;
        }
        assert_int_equal(wisp_close(cli), 0);
    }
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* The race: the reset arrives while one thread blocks in send() (nothing
 * of it written: the send buffer is full) and another in recv(): both
 * wake with ECONNRESET; the error is then reported (SO_ERROR 0, recv 0,
 * send EPIPE). The peer is 198.18.0.1 played by the test (tcp_testlib.h):
 * it answers the SYN with a zero window and never acknowledges anything,
 * so the send buffer stays full -- a wisp peer over loopback would take a
 * byte now and then, and a send that wrote some bytes returns their count
 * (Linux) -- and its RST carries the exact sequence number (RFC 5961). */
static void test_sockets_reset_wakes_blocked_sender_and_receiver_with_econnreset(void **state)
{
    struct senv t = senv_start();
    static uint8_t fill[4096];
    static struct tt tt;
    struct tt_seg g;
    int cli, round;
    uint8_t b;
    (void)state;
    memset(&tt, 0, sizeof tt);
    tt.e = t.e;
    for (round = 0; round < 3; round++) {
        uint16_t pport = (uint16_t)(7700 + round), lport = 0;
        struct wisp_sockaddr_in a = sin_of(tu_ip_peer(), pport);
        const uint32_t pisn = 0x20000000u;
        uint32_t iss = 0;
        struct rst_call snd, rcv;
        wisp_sys_thread_t ts, tr;
        struct wisp_pollfd pfd;
        bool syn = false;
        unsigned i;
        wisp_ssize_t r;
        cli = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
        assert_true(cli >= 0);
        assert_int_equal(wisp_connect(cli, SA(&a), sizeof a), -1);
        assert_int_equal(errno, WISP_EINPROGRESS);
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        for (;;) {
            wisp_tcpip_lock(t.ctx);
            while (!syn && tt_pop(&tt, &g)) {
                if ((g.flags & TT_SYN) && g.dport == pport) {
                    syn = true;
                    iss = g.seq;
                    lport = g.sport;
                }
            }
            if (syn) {
                /* SYN-ACK, window 0 */
                tt_inject(&tt, pport, lport, pisn, iss + 1u, TT_SYN | TT_ACK, 0, NULL, NULL, 0);
            }
            wisp_tcpip_unlock(t.ctx);
            if (syn) {
                break;
            }
            TU_POLL(&tp, "no SYN");
        }
        pfd.fd = cli;
        pfd.events = WISP_POLLOUT;
        assert_int_equal(wisp_poll(&pfd, 1, 3000), 1);
        assert_int_equal(pfd.revents, WISP_POLLOUT);
        assert_int_equal(so_error(cli), 0);
        assert_int_equal(wisp_fcntl(cli, WISP_F_SETFL, 0), 0); /* blocking from now on */
        /* fill the send buffer: nothing is ever acknowledged */
        for (i = 0; i < 1000 && (r = wisp_send(cli, fill, sizeof fill, WISP_MSG_DONTWAIT)) > 0; i++) {
        }
        assert_true(i > 0 && i < 1000);
        assert_int_equal(errno, WISP_EAGAIN);
        memset(&snd, 0, sizeof snd);
        memset(&rcv, 0, sizeof rcv);
        snd.fd = rcv.fd = cli;
        snd.kind = 1;
        rcv.kind = 2;
        start_thread(&ts, rst_call_thread, &snd);
        start_thread(&tr, rst_call_thread, &rcv);
        WAIT_IN_SEND(&ts, cli); /* both block: for room and for data */
        WAIT_IN_RECV(&tr, cli);
        wisp_tcpip_lock(t.ctx);
        tt_inject(&tt, pport, lport, pisn + 1u, iss + 1u, TT_RST | TT_ACK, 0, NULL, NULL, 0);
        tu_clear(t.e); /* the probes and the handshake's ACK */
        wisp_tcpip_unlock(t.ctx);
        wisp_sys_thread_join(&ts);
        wisp_sys_thread_join(&tr);
        assert_int_equal(snd.r, -1);
        assert_int_equal(snd.err, WISP_ECONNRESET);
        assert_int_equal(rcv.r, -1);
        assert_int_equal(rcv.err, WISP_ECONNRESET);
        assert_int_equal(so_error(cli), 0);
        assert_int_equal(wisp_recv(cli, &b, 1, 0), 0);
        assert_int_equal(wisp_send(cli, "x", 1, 0), -1);
        assert_int_equal(errno, WISP_EPIPE);
        assert_int_equal(wisp_close(cli), 0);
    }
    senv_stop(&t);
}

/* ------------------------------------------------------------------ UDP */

static void test_sockets_udp_sendto_recvfrom_peek_trunc_connect(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 6001), from;
    wisp_socklen_t fl = sizeof from;
    struct wisp_iovec v[2];
    struct wisp_msghdr m;
    int u1, u2, n = -1;
    char buf[16];
    static uint8_t huge[SOCK_HUGE_LEN];
    (void)state;
    u1 = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    u2 = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, WISP_IPPROTO_UDP);
    assert_int_equal(wisp_bind(u1, SA(&a), sizeof a), 0);
    /* unconnected send without address */
    assert_int_equal(wisp_send(u2, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_EDESTADDRREQ);
    assert_int_equal(wisp_sendto(u2, "hello", 5, 0, SA(&a), sizeof a), 5);
    assert_int_equal(wisp_sendto(u2, huge, sizeof huge, 0, SA(&a), sizeof a), -1);
    assert_int_equal(errno, WISP_EMSGSIZE);
    /* peek, FIONREAD (size of the next datagram), then read */
    memset(buf, 0, sizeof buf);
    assert_int_equal(wisp_recvfrom(u1, buf, 3, WISP_MSG_PEEK, NULL, NULL), 3);
    assert_int_equal(wisp_ioctl(u1, WISP_FIONREAD, &n), 0);
    assert_int_equal(n, 5);
    assert_int_equal(wisp_recvfrom(u1, buf, sizeof buf, 0, SA(&from), &fl), 5);
    assert_memory_equal(buf, "hello", 5);
    assert_int_equal(fl, sizeof from);
    assert_true(from.sin_addr.s_addr == LO);
    /* truncation: the rest is discarded, MSG_TRUNC reports the length */
    assert_int_equal(wisp_sendto(u2, "0123456789", 10, 0, SA(&a), sizeof a), 10);
    assert_int_equal(wisp_recv(u1, buf, 4, WISP_MSG_TRUNC), 10);
    assert_memory_equal(buf, "0123", 4);
    assert_int_equal(wisp_sendto(u2, "abcdef", 6, 0, SA(&a), sizeof a), 6);
    memset(&m, 0, sizeof m);
    v[0].iov_base = buf;
    v[0].iov_len = 2;
    v[1].iov_base = buf + 8;
    v[1].iov_len = 2;
    m.msg_iov = v;
    m.msg_iovlen = 2;
    m.msg_name = &from;
    m.msg_namelen = sizeof from;
    assert_int_equal(wisp_recvmsg(u1, &m, 0), 4);
    assert_true(m.msg_flags & WISP_MSG_TRUNC);
    assert_memory_equal(buf, "ab", 2);
    assert_memory_equal(buf + 8, "cd", 2);
    assert_int_equal(m.msg_namelen, sizeof from);
    /* a gathered datagram (sendmsg) and an empty one */
    v[0].iov_base = "12";
    v[1].iov_base = "34";
    memset(&m, 0, sizeof m);
    m.msg_iov = v;
    m.msg_iovlen = 2;
    m.msg_name = &a;
    m.msg_namelen = sizeof a;
    assert_int_equal(wisp_sendmsg(u2, &m, 0), 4);
    assert_int_equal(wisp_recv(u1, buf, sizeof buf, 0), 4);
    assert_memory_equal(buf, "1234", 4);
    assert_int_equal(wisp_sendto(u2, NULL, 0, 0, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_recv(u1, buf, sizeof buf, 0), 0);
    /* connect: send without address; getpeername */
    assert_int_equal(wisp_connect(u2, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_send(u2, "c", 1, 0), 1);
    assert_int_equal(wisp_recv(u1, buf, sizeof buf, 0), 1);
    fl = sizeof from;
    assert_int_equal(wisp_getpeername(u2, SA(&from), &fl), 0);
    assert_int_equal(wisp_ntohs(from.sin_port), 6001);
    /* disconnect (AF_UNSPEC) */
    from.sin_family = WISP_AF_UNSPEC;
    assert_int_equal(wisp_connect(u2, SA(&from), sizeof from), 0);
    assert_int_equal(wisp_send(u2, "x", 1, 0), -1);
    assert_int_equal(errno, WISP_EDESTADDRREQ);
    /* nothing waiting: non-blocking EAGAIN */
    assert_int_equal(wisp_recv(u1, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_close(u1), 0);
    assert_int_equal(wisp_close(u2), 0);
    senv_stop(&t);
}

static void test_sockets_udp_recv_timeout_and_ip_tos_goes_to_emergency_queue(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in peer = sin_of(tu_ip_peer(), 9999);
    struct wisp_timeval tv = { 0, 100000 };
    int u, tos = 0xb8, ttl = 3, v = 0;
    wisp_socklen_t vl = sizeof v;
    uint32_t start, el;
    uint32_t emerg0, emerg1;
    uint8_t frame[1600];
    int flen = -1;
    char b;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_setsockopt(u, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv), 0);
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_recv(u, &b, 1, 0), -1);
    el = wisp_sys_now_ms() - start;
    assert_int_equal(errno, WISP_EAGAIN);
    assert_true(el >= 100 && el < 2000);

    /* IP_TOS with DSCP EF (46): the datagram leaves through the emergency
     * transmit queue, with that TOS byte; IP_TTL sets its TTL */
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_IP, WISP_IP_TOS, &tos, sizeof tos), 0);
    assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_IP, WISP_IP_TTL, &ttl, sizeof ttl), 0);
    assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_IP, WISP_IP_TOS, &v, &vl), 0);
    assert_int_equal(v, 0xb8);
    assert_int_equal(wisp_getsockopt(u, WISP_IPPROTO_IP, WISP_IP_TTL, &v, &vl), 0);
    assert_int_equal(v, 3);
    wisp_tcpip_lock(t.ctx);
    tu_clear(t.e);
    emerg0 = t.e->nif.st.tx_emerg;
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(wisp_sendto(u, "urgent", 6, 0, SA(&peer), sizeof peer), 6);
    wisp_tcpip_lock(t.ctx);
    emerg1 = t.e->nif.st.tx_emerg;
    flen = tu_pop(t.e, frame, sizeof frame);
    wisp_tcpip_unlock(t.ctx);
    assert_int_equal(emerg1, emerg0 + 1);
    assert_int_equal(flen, 14 + 20 + 8 + 6);
    assert_int_equal(frame[14 + 1], 0xb8); /* TOS */
    assert_int_equal(frame[14 + 8], 3);    /* TTL */
    assert_memory_equal(frame + 42, "urgent", 6);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

/* ------------------------------------------------------------- options */

static void test_sockets_tcp_options_reach_the_connection(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, v, one = 1;
    wisp_socklen_t vl = sizeof v;
    struct wisp_netconn *nc;
    uint32_t idle, intvl;
    uint8_t cnt, pttl, ptos;
    bool ka;
    (void)state;
    lfd = tcp_listener(5020, 2);
    tcp_pair(lfd, 5020, &cli, &srv);
    v = 1;
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &v, sizeof v), 0);
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_REUSEADDR, &v, &vl), 0);
    assert_int_equal(v, 1);
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &one, sizeof one), 0);
    v = 30;
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, &v, sizeof v), 0);
    v = 7;
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPINTVL, &v, sizeof v), 0);
    v = 4;
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, &v, sizeof v), 0);
    v = 0;
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPCNT, &v, sizeof v), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, &one, sizeof one), 0);
    v = 0x28; /* TOS 0x28: DSCP 10 (AF11) */
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_IP, WISP_IP_TOS, &v, sizeof v), 0);
    v = 17;
    assert_int_equal(wisp_setsockopt(cli, WISP_IPPROTO_IP, WISP_IP_TTL, &v, sizeof v), 0);
    /* what the connection (PCB) got, read in the core context */
    nc = t.tbl->sock[cli - WISP_SOCKET_OFFSET].conn;
    wisp_tcpip_lock(t.ctx);
    ka = (nc->pcb.tcp->flags & 0x00000800u) != 0; /* TF_KEEPALIVE (src/core/tcp_priv.h) */
    idle = nc->pcb.tcp->keep_idle;
    intvl = nc->pcb.tcp->keep_intvl;
    cnt = nc->pcb.tcp->keep_cnt;
    pttl = nc->pcb.tcp->c.ttl;
    ptos = nc->pcb.tcp->c.tos;
    wisp_tcpip_unlock(t.ctx);
    assert_true(ka);
    assert_int_equal(idle, 30000);
    assert_int_equal(intvl, 7000);
    assert_int_equal(cnt, 4);
    assert_int_equal(pttl, 17);
    assert_int_equal(ptos, 0x28);
    /* read back */
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &v, &vl), 0);
    assert_int_equal(v, 1);
    assert_int_equal(wisp_getsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_KEEPIDLE, &v, &vl), 0);
    assert_int_equal(v, 30);
    assert_int_equal(wisp_getsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, &v, &vl), 0);
    assert_int_equal(v, 1);
    assert_int_equal(wisp_getsockopt(cli, WISP_IPPROTO_TCP, WISP_TCPOPT_MAXSEG, &v, &vl), 0);
    assert_true(v > 0 && v <= 65495);
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_TYPE, &v, &vl), 0);
    assert_int_equal(v, WISP_SOCK_STREAM);
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_RCVBUF, &v, &vl), 0);
    assert_int_equal(v, 2 * WISP_TCP_WND); /* reported doubled, as Linux */
    assert_int_equal(wisp_getsockopt(cli, WISP_SOL_SOCKET, WISP_SO_SNDBUF, &v, &vl), 0);
    assert_int_equal(v, 2 * WISP_TCP_SND_BUF);
    v = 4096;
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_SNDBUF, &v, sizeof v), 0);
    /* unknown options, short values, wrong level for the type */
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, 999, &v, sizeof v), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_getsockopt(cli, 77, 1, &v, &vl), -1);
    assert_int_equal(errno, WISP_ENOPROTOOPT);
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &v, 2), -1);
    assert_int_equal(errno, WISP_EINVAL);
    assert_int_equal(wisp_setsockopt(cli, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, NULL, 4), -1);
    assert_int_equal(errno, WISP_EFAULT);
    {
        int u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
        assert_int_equal(wisp_setsockopt(u, WISP_IPPROTO_TCP, WISP_TCPOPT_NODELAY, &one, sizeof one), -1);
        assert_int_equal(errno, WISP_ENOPROTOOPT);
        assert_int_equal(wisp_close(u), 0);
    }
    /* options set on a listener are inherited by what it accepts */
    {
        int cli2, srv2;
        assert_int_equal(wisp_setsockopt(lfd, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &one, sizeof one), 0);
        tcp_pair(lfd, 5020, &cli2, &srv2);
        assert_int_equal(wisp_getsockopt(srv2, WISP_SOL_SOCKET, WISP_SO_KEEPALIVE, &v, &vl), 0);
        assert_int_equal(v, 1);
        assert_int_equal(wisp_close(cli2), 0);
        assert_int_equal(wisp_close(srv2), 0);
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* ------------------------------------------------------ select and poll */

#define NCONN 64

struct selwait {
    int maxfd;
    wisp_fd_set rs;
    int r, err;
    uint32_t waited;
};

static void select_thread(void *arg)
{
    struct selwait *s = (struct selwait *)arg;
    uint32_t start = wisp_sys_now_ms();
    s->r = wisp_select(s->maxfd + 1, &s->rs, NULL, NULL, NULL);
    s->err = errno;
    s->waited = wisp_sys_now_ms() - start;
}

static void test_sockets_select_and_poll_over_64_connections(void **state)
{
    struct senv t = senv_start();
    int lfd, cli[NCONN], srv[NCONN], i, maxfd = 0;
    wisp_fd_set rs, ws;
    struct wisp_timeval zero = { 0, 0 }, tv = { 0, 50000 };
    static struct wisp_pollfd pfd[NCONN + 1];
    uint32_t start, el;
    wisp_sys_thread_t th;
    struct selwait sw;
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5030, 64);
    for (i = 0; i < NCONN; i++) {
        tcp_pair(lfd, 5030, &cli[i], &srv[i]);
        maxfd = WISP_MAX(maxfd, WISP_MAX(cli[i], srv[i]));
    }
    /* nothing to read anywhere; every connected socket is writable */
    WISP_FD_ZERO(&rs);
    WISP_FD_ZERO(&ws);
    for (i = 0; i < NCONN; i++) {
        WISP_FD_SET(srv[i], &rs);
        WISP_FD_SET(cli[i], &ws);
    }
    assert_int_equal(wisp_select(maxfd + 1, &rs, &ws, NULL, &zero), NCONN);
    for (i = 0; i < NCONN; i++) {
        assert_false(WISP_FD_ISSET(srv[i], &rs));
        assert_true(WISP_FD_ISSET(cli[i], &ws));
    }
    /* a timed select with nothing ready waits its timeout */
    WISP_FD_ZERO(&rs);
    for (i = 0; i < NCONN; i++) {
        WISP_FD_SET(srv[i], &rs);
    }
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_select(maxfd + 1, &rs, NULL, NULL, &tv), 0);
    el = wisp_sys_now_ms() - start;
    assert_true(el >= 50 && el < 2000);
    /* data on two of them: exactly those two */
    assert_int_equal(wisp_send(cli[17], "a", 1, 0), 1);
    assert_int_equal(wisp_send(cli[63], "b", 1, 0), 1);
    for (;;) {
        WISP_FD_ZERO(&rs);
        for (i = 0; i < NCONN; i++) {
            WISP_FD_SET(srv[i], &rs);
        }
        tv.tv_sec = 2;
        tv.tv_usec = 0;
        i = wisp_select(maxfd + 1, &rs, NULL, NULL, &tv);
        if (i < 1) {
            fail_msg("select returned %d (errno %d)", i, errno);
        }
        if (i == 2) {
            break;
        }
    }
    for (i = 0; i < NCONN; i++) {
        assert_int_equal(WISP_FD_ISSET(srv[i], &rs), i == 17 || i == 63);
    }
    /* poll over the 64 plus the listener (not readable) */
    for (i = 0; i < NCONN; i++) {
        pfd[i].fd = srv[i];
        pfd[i].events = WISP_POLLIN;
    }
    pfd[NCONN].fd = lfd;
    pfd[NCONN].events = WISP_POLLIN;
    assert_int_equal(wisp_poll(pfd, NCONN + 1, 0), 2);
    for (i = 0; i <= NCONN; i++) {
        assert_int_equal(pfd[i].revents, (i == 17 || i == 63) ? WISP_POLLIN : 0);
    }
    assert_int_equal(wisp_recv(srv[17], &b, 1, 0), 1);
    assert_int_equal(wisp_recv(srv[63], &b, 1, 0), 1);
    /* a select blocked in another thread wakes for data on one of 64 */
    memset(&sw, 0, sizeof sw);
    sw.maxfd = maxfd;
    for (i = 0; i < NCONN; i++) {
        WISP_FD_SET(srv[i], &sw.rs);
    }
    start_thread(&th, select_thread, &sw);
    wait_in_select(&th); /* it blocked: the data below must wake it */
    assert_int_equal(wisp_send(cli[5], "c", 1, 0), 1);
    wisp_sys_thread_join(&th);
    assert_int_equal(sw.r, 1);
    assert_true(WISP_FD_ISSET(srv[5], &sw.rs));
    assert_int_equal(wisp_recv(srv[5], &b, 1, 0), 1);
    /* a pending connection makes the listener readable */
    {
        int c2 = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0), s2;
        struct wisp_sockaddr_in a = sin_of(LO, 5030);
        assert_int_equal(wisp_connect(c2, SA(&a), sizeof a), 0);
        assert_int_equal(wisp_poll(&pfd[NCONN], 1, 2000), 1);
        assert_int_equal(pfd[NCONN].revents, WISP_POLLIN);
        s2 = wisp_accept(lfd, NULL, NULL);
        assert_true(s2 >= 0);
        assert_int_equal(wisp_close(c2), 0);
        assert_int_equal(wisp_close(s2), 0);
    }
    /* descriptors that are not open: poll says POLLNVAL, select EBADF */
    assert_int_equal(wisp_close(cli[0]), 0);
    pfd[0].fd = cli[0];
    pfd[0].events = WISP_POLLIN;
    pfd[1].fd = -1;
    assert_int_equal(wisp_poll(pfd, 2, 0), 1);
    assert_int_equal(pfd[0].revents, WISP_POLLNVAL);
    assert_int_equal(pfd[1].revents, 0);
    WISP_FD_ZERO(&rs);
    WISP_FD_SET(cli[0], &rs);
    assert_int_equal(wisp_select(cli[0] + 1, &rs, NULL, NULL, &zero), -1);
    assert_int_equal(errno, WISP_EBADF);
    tv.tv_sec = -1;
    assert_int_equal(wisp_select(1, NULL, NULL, NULL, &tv), -1);
    assert_int_equal(errno, WISP_EINVAL);
    for (i = 0; i < NCONN; i++) {
        if (i > 0) {
            assert_int_equal(wisp_close(cli[i]), 0);
        }
        assert_int_equal(wisp_close(srv[i]), 0);
    }
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* -------------------------------------------------- close while blocked */

struct blocked {
    int fd;
    int kind; /* 0 recv, 1 accept, 2 select, 3 udp recvfrom, 4 send */
    wisp_ssize_t r;
    int err;
    volatile int started;
};

static void blocked_thread(void *arg)
{
    struct blocked *b = (struct blocked *)arg;
    static uint8_t big[WISP_TCP_SND_BUF + WISP_TCP_WND + 100000];
    uint8_t c;
    b->started = 1;
    switch (b->kind) {
    case 0: b->r = wisp_recv(b->fd, &c, 1, 0); break;
    case 1: b->r = wisp_accept(b->fd, NULL, NULL); break;
    case 2: {
        wisp_fd_set rs;
        WISP_FD_ZERO(&rs);
        WISP_FD_SET(b->fd, &rs);
        b->r = wisp_select(b->fd + 1, &rs, NULL, NULL, NULL);
        if (b->r == 1) {
            b->r = wisp_recv(b->fd, &c, 1, 0); /* the descriptor is gone now */
        }
        break;
    }
    case 3: b->r = wisp_recvfrom(b->fd, &c, 1, 0, NULL, NULL); break;
    default: b->r = wisp_send(b->fd, big, sizeof big, 0); break;
    }
    b->err = errno;
}

static void close_while_blocked(int fd, int kind)
{
    struct blocked b;
    wisp_sys_thread_t th;
    memset(&b, 0, sizeof b);
    b.fd = fd;
    b.kind = kind;
    start_thread(&th, blocked_thread, &b);
    if (kind == 2) {
        wait_in_select(&th);
    } else if (kind == 4) {
        WAIT_IN_SEND(&th, fd); /* the window is full */
    } else {
        WAIT_IN_RECV(&th, fd); /* recv, accept, recvfrom */
    }
    assert_int_equal(wisp_close(fd), 0);
    wisp_sys_thread_join(&th);
    assert_int_equal(b.r, -1);
    assert_int_equal(b.err, WISP_EBADF);
}

static void test_sockets_close_wakes_threads_blocked_in_the_socket(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv, u, i;
    struct wisp_sockaddr_in a = sin_of(LO, 6002);
    (void)state;
    for (i = 0; i < 2; i++) {
        int cli2, srv2;
        lfd = tcp_listener(5040, 2);
        tcp_pair(lfd, 5040, &cli, &srv);
        tcp_pair(lfd, 5040, &cli2, &srv2);
        close_while_blocked(cli2, 4);             /* send into a full window */
        close_while_blocked(srv, i == 0 ? 0 : 2); /* recv, select */
        close_while_blocked(lfd, 1);              /* accept */
        assert_int_equal(wisp_close(cli), 0);
        assert_int_equal(wisp_close(srv2), 0);
    }
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_bind(u, SA(&a), sizeof a), 0);
    close_while_blocked(u, 3); /* UDP recvfrom */
    assert_int_equal(wisp_sockets_in_use(), 0);
    senv_stop(&t);
}

/* ---------------------------------------------- two threads per socket */

struct duplex {
    int fd;
    size_t len;
    struct bulk tx, rx;
    wisp_sys_thread_t ttx, trx;
};

static void test_sockets_one_reader_and_one_writer_per_socket_at_once(void **state)
{
    struct senv t = senv_start();
    int lfd, cli, srv;
    struct duplex d[2];
    int i;
    (void)state;
    lfd = tcp_listener(5050, 2);
    tcp_pair(lfd, 5050, &cli, &srv);
    memset(d, 0, sizeof d);
    d[0].fd = cli;
    d[1].fd = srv;
    for (i = 0; i < 2; i++) {
        d[i].tx.fd = d[i].fd;
        d[i].tx.len = 1000000;
        d[i].rx.fd = d[i].fd;
        d[i].rx.len = 1000000;
        start_thread(&d[i].ttx, bulk_send_thread, &d[i].tx);
        start_thread(&d[i].trx, bulk_recv_thread, &d[i].rx);
    }
    for (i = 0; i < 2; i++) {
        wisp_sys_thread_join(&d[i].ttx);
        wisp_sys_thread_join(&d[i].trx);
        assert_true(d[i].tx.ok);
        assert_true(d[i].rx.ok);
        assert_int_equal(d[i].rx.done, 1000000);
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* Two threads reading one socket: the second waits for its turn. */
struct reader {
    int fd;
    wisp_ssize_t r;
    int err;
    char got[4];
};

static void reader_thread(void *arg)
{
    struct reader *rd = (struct reader *)arg;
    rd->r = wisp_recv(rd->fd, rd->got, 1, 0);
    rd->err = errno;
}

static void test_sockets_two_readers_take_turns_and_close_wakes_both(void **state)
{
    struct senv t = senv_start();
    struct wisp_timeval tv = { 0, 100000 }, forever = { 0, 0 };
    struct reader a, b, c, d;
    wisp_sys_thread_t ta, tb, tc, td;
    int lfd, cli, srv, n = -1;
    uint32_t start, el;
    char buf[2];
    (void)state;
    lfd = tcp_listener(5055, 2);
    tcp_pair(lfd, 5055, &cli, &srv);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.fd = b.fd = srv;
    start_thread(&ta, reader_thread, &a); /* blocks in recv: holds the turn */
    WAIT_IN_RECV(&ta, srv);
    /* a second reader: without waiting EAGAIN at once; with SO_RCVTIMEO it
     * waits for its turn that long; FIONREAD still answers */
    assert_int_equal(wisp_recv(srv, buf, 1, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(errno, WISP_EAGAIN);
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &tv, sizeof tv), 0);
    start = wisp_sys_now_ms();
    assert_int_equal(wisp_recv(srv, buf, 1, 0), -1);
    el = wisp_sys_now_ms() - start;
    assert_int_equal(errno, WISP_EAGAIN);
    assert_true(el >= 100 && el < 2000);
    assert_int_equal(wisp_ioctl(srv, WISP_FIONREAD, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(wisp_setsockopt(srv, WISP_SOL_SOCKET, WISP_SO_RCVTIMEO, &forever, sizeof forever), 0);
    /* b waits for its turn; each gets its own byte */
    start_thread(&tb, reader_thread, &b);
    wait_in_select(&tb); /* waits for its turn */
    assert_int_equal(wisp_send(cli, "x", 1, 0), 1);
    wisp_sys_thread_join(&ta);
    assert_int_equal(a.r, 1);
    assert_int_equal(a.got[0], 'x');
    WAIT_IN_RECV(&tb, srv); /* b has the turn now and waits for data */
    assert_int_equal(wisp_send(cli, "y", 1, 0), 1);
    wisp_sys_thread_join(&tb);
    assert_int_equal(b.r, 1);
    assert_int_equal(b.got[0], 'y');
    /* one in the recv, one waiting for its turn: close wakes both */
    memset(&c, 0, sizeof c);
    memset(&d, 0, sizeof d);
    c.fd = d.fd = srv;
    start_thread(&tc, reader_thread, &c);
    WAIT_IN_RECV(&tc, srv);
    start_thread(&td, reader_thread, &d);
    wait_in_select(&td);
    assert_int_equal(wisp_close(srv), 0);
    wisp_sys_thread_join(&tc);
    wisp_sys_thread_join(&td);
    assert_int_equal(c.r, -1);
    assert_int_equal(c.err, WISP_EBADF);
    assert_int_equal(d.r, -1);
    assert_int_equal(d.err, WISP_EBADF);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_udp_broadcast_needs_so_broadcast(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in bc = sin_of(WISP_IP4_BCAST, 9999);
    int u, one = 1, v = 0;
    wisp_socklen_t vl = sizeof v;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_sendto(u, "b", 1, 0, SA(&bc), sizeof bc), -1);
    assert_int_equal(errno, WISP_EACCES);
    assert_int_equal(wisp_setsockopt(u, WISP_SOL_SOCKET, WISP_SO_BROADCAST, &one, sizeof one), 0);
    assert_int_equal(wisp_getsockopt(u, WISP_SOL_SOCKET, WISP_SO_BROADCAST, &v, &vl), 0);
    assert_int_equal(v, 1);
    assert_int_equal(wisp_sendto(u, "b", 1, 0, SA(&bc), sizeof bc), 1);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

/* ---------------------------------------- backlog, table and pool limits */

/* A counter of the stack, read under its core lock. */
static uint32_t sk_ctr(struct senv *t, unsigned id)
{
    uint32_t v;
    wisp_tcpip_lock(t->ctx);
    v = t->e->s->ctr[id];
    wisp_tcpip_unlock(t->ctx);
    return v;
}

/* Six connects against a listener with backlog 2 that nobody accepts: the
 * listener holds two, the other four wait (their SYN or final ACK dropped,
 * counted in tcp.listen.full), none is reset; each client sends a byte as
 * soon as it is connected (its retransmissions complete a connection made
 * with a SYN cookie), and once the application accepts, all six arrive. */
static void test_sockets_accept_backlog_full_delays_the_excess(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 5060);
    struct wisp_netconn_stats st;
    int lfd, c[6], acc[6], i, n = 0, sent = 0, nb = 1;
    bool done[6] = {false, false, false, false, false, false};
    uint8_t b;
    (void)state;
    lfd = tcp_listener(5060, 2);
    for (i = 0; i < 6; i++) {
        c[i] = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM | WISP_SOCK_NONBLOCK, 0);
        assert_int_equal(wisp_connect(c[i], SA(&a), sizeof a), -1);
        assert_int_equal(errno, WISP_EINPROGRESS);
    }
    {
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        while (sk_ctr(&t, WISP_CTR_TCP_LISTEN_FULL) == 0) {
            TU_POLL(&tp, "the excess connections were not held back");
        }
    }
    wisp_netconn_api_stats(t.api, &st);
    assert_int_equal(st.accept_drops, 0);
    assert_int_equal(sk_ctr(&t, WISP_CTR_TCP_RST_TX), 0);
    assert_int_equal(wisp_ioctl(lfd, WISP_FIONBIO, &nb), 0);
    {
        struct tu_poll tp = tu_poll_start(40000u);
        while (n < 6 || sent < 6) {
            for (i = 0; i < 6; i++) {
                if (!done[i] && wisp_send(c[i], "x", 1, 0) == 1) {
                    done[i] = true;
                    sent++;
                }
            }
            if (n < 6) {
                acc[n] = wisp_accept(lfd, NULL, NULL);
                if (acc[n] >= 0) {
                    n++;
                    continue;
                }
                assert_int_equal(errno, WISP_EAGAIN);
            }
            TU_POLL(&tp, "the held-back connections did not complete");
        }
    }
    for (i = 0; i < 6; i++) {
        struct wisp_pollfd pfd;
        pfd.fd = acc[i];
        pfd.events = WISP_POLLIN;
        assert_int_equal(wisp_poll(&pfd, 1, 30000), 1);
        assert_int_equal(wisp_recv(acc[i], &b, 1, 0), 1);
        assert_int_equal(b, 'x');
    }
    wisp_netconn_api_stats(t.api, &st);
    assert_int_equal(st.accept_drops, 0);
    assert_int_equal(sk_ctr(&t, WISP_CTR_TCP_RST_TX), 0);
    for (i = 0; i < n; i++) {
        assert_int_equal(wisp_close(acc[i]), 0);
    }
    for (i = 0; i < 6; i++) {
        assert_int_equal(wisp_close(c[i]), 0);
    }
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

static void test_sockets_table_full_gives_emfile_and_recovers(void **state)
{
    struct senv t = senv_start();
    static int fds[WISP_SOCKET_COUNT];
    int i, n = 0, lfd, cli, srv, c2, fd;
    struct wisp_sockaddr_in a = sin_of(LO, 5070);
    struct wisp_netconn_api *api2 = calloc(1, sizeof(*api2));
    (void)state;
    /* The table is filled with sockets of a second netconn layer on the
     * same stack, so that the first one still has netconns for incoming
     * connections: the table, not the netconn pool, is what runs out. */
    assert_non_null(api2);
    assert_int_equal(wisp_netconn_api_init(api2, t.ctx), WISP_OK);
    lfd = tcp_listener(5070, 4);
    tcp_pair(lfd, 5070, &cli, &srv);
    for (;;) {
        fd = wisp_socket_on(api2, WISP_AF_INET, WISP_SOCK_STREAM, 0);
        if (fd < 0) {
            assert_int_equal(errno, WISP_EMFILE);
            break;
        }
        fds[n++] = fd;
    }
    assert_int_equal(n, WISP_SOCKET_COUNT - 3);
    assert_int_equal(wisp_sockets_in_use(), WISP_SOCKET_COUNT);
    /* a connection arriving now: accept says EMFILE and resets it; the
     * client sees the reset */
    c2 = fds[--n];
    assert_int_equal(wisp_connect(c2, SA(&a), sizeof a), 0);
    {
        int x = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0); /* table full again */
        assert_int_equal(x, -1);
        assert_int_equal(errno, WISP_EMFILE);
    }
    assert_int_equal(wisp_accept(lfd, NULL, NULL), -1);
    assert_int_equal(errno, WISP_EMFILE);
    {
        uint8_t b;
        assert_int_equal(wisp_recv(c2, &b, 1, 0), -1);
        assert_int_equal(errno, WISP_ECONNRESET);
    }
    /* recovery: free some, everything works again */
    assert_int_equal(wisp_close(c2), 0);
    for (i = 0; i < 8; i++) {
        assert_int_equal(wisp_close(fds[--n]), 0);
    }
    {
        int c3, s3;
        uint8_t b;
        tcp_pair(lfd, 5070, &c3, &s3);
        assert_int_equal(wisp_send(c3, "r", 1, 0), 1);
        assert_int_equal(wisp_recv(s3, &b, 1, 0), 1);
        assert_int_equal(wisp_close(c3), 0);
        assert_int_equal(wisp_close(s3), 0);
    }
    while (n > 0) {
        assert_int_equal(wisp_close(fds[--n]), 0);
    }
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    wait_tcp_idle(&t);
    assert_int_equal(wisp_netconn_api_deinit(api2), WISP_OK);
    free(api2);
    senv_stop(&t);
}

static void test_sockets_stack_pool_exhausted_gives_enobufs_and_recovers(void **state)
{
    struct senv t = senv_start();
    static int fds[WISP_UDP_PCB_COUNT + 1];
    int n = 0, fd;
    struct wisp_netconn_stats st;
    (void)state;
    /* UDP PCBs (WISP_UDP_PCB_COUNT) run out before the socket table */
    for (;;) {
        fd = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
        if (fd < 0) {
            assert_int_equal(errno, WISP_ENOBUFS);
            break;
        }
        assert_true(n < WISP_UDP_PCB_COUNT);
        fds[n++] = fd;
    }
    assert_int_equal(n, WISP_UDP_PCB_COUNT);
    assert_int_equal(wisp_sockets_in_use(), n); /* the failed one left nothing */
    wisp_netconn_api_stats(t.api, &st);
    assert_int_equal(st.conns_used, n);
    assert_int_equal(wisp_close(fds[--n]), 0);
    fd = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    fds[n++] = fd;
    while (n > 0) {
        assert_int_equal(wisp_close(fds[--n]), 0);
    }
    senv_stop(&t);
}

/* ------------------------------------------------------- added: apiperf */

/* Rule: recv that empties a full receive mailbox gets the data the mailbox
 * refused at once: right after one blocking recv, a non-blocking recv has
 * the rest (no 20 ms retry of the stack in between). */
static void test_sockets_recv_making_room_takes_refused_data_at_once(void **state)
{
    struct senv t = senv_start();
    static uint8_t buf[(WISP_NETCONN_RECVMBOX_SIZE + 8u) * WISP_TCP_MSS];
    static uint8_t got[sizeof buf];
    size_t total = sizeof buf, n;
    struct wisp_netconn_stats st;
    int lfd, cli, srv;
    wisp_ssize_t r;
    (void)state;
    assert_true(total <= (size_t)WISP_TCP_WND && total <= (size_t)WISP_TCP_SND_BUF);
    for (n = 0; n < total; n++) {
        buf[n] = pat(n);
    }
    lfd = tcp_listener(5060, 1);
    tcp_pair(lfd, 5060, &cli, &srv);
    assert_int_equal(wisp_send(cli, buf, total, 0), (wisp_ssize_t)total);
    {
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        for (;;) { /* until the mailbox refused data */
            wisp_netconn_api_stats(t.api, &st);
            if (st.tcp_refused > 0) {
                break;
            }
            TU_POLL(&tp, "the mailbox refused nothing");
        }
    }
    wait_all_acked(cli); /* the rest arrived: held for the mailbox */
    r = wisp_recv(srv, got, sizeof got, 0);
    assert_true(r > 0);
    n = (size_t)r;
    while (n < total && (r = wisp_recv(srv, got + n, sizeof got - n, WISP_MSG_DONTWAIT)) > 0) {
        n += (size_t)r;
    }
    assert_int_equal(n, total);
    assert_memory_equal(got, buf, total);
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* Rule: shutdown(SHUT_WR) does not wake a thread blocked in recv on the
 * same socket: it keeps receiving what the peer sends after our FIN. */
static void test_sockets_shutdown_wr_keeps_a_blocked_reader_receiving(void **state)
{
    struct senv t = senv_start();
    struct blocked b;
    wisp_sys_thread_t th;
    int lfd, cli, srv;
    uint8_t c;
    (void)state;
    lfd = tcp_listener(5061, 1);
    tcp_pair(lfd, 5061, &cli, &srv);
    memset(&b, 0, sizeof b);
    b.fd = cli;
    b.kind = 0; /* recv of one byte */
    start_thread(&th, blocked_thread, &b);
    WAIT_IN_RECV(&th, cli);
    assert_int_equal(wisp_shutdown(cli, WISP_SHUT_WR), 0);
    assert_int_equal(wisp_recv(srv, &c, 1, 0), 0); /* our FIN */
    /* our FIN did not wake the reader: still blocked on its mailbox */
    assert_ptr_equal(wisp_sys_debug_blocked_on(&th, NULL), &sock_conn(cli)->mbox);
    assert_int_equal(wisp_send(srv, "z", 1, 0), 1);
    wisp_sys_thread_join(&th);
    assert_int_equal(b.r, 1); /* the byte sent after our FIN */
    assert_int_equal(wisp_close(cli), 0);
    assert_int_equal(wisp_close(srv), 0);
    assert_int_equal(wisp_close(lfd), 0);
    senv_stop(&t);
}

/* Rule: shutdown(SHUT_RD) of a UDP socket wakes a thread blocked in its
 * recvfrom, which returns 0 (end of input), as on Linux. */
static void test_sockets_udp_shutdown_rd_wakes_blocked_recvfrom(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 6010), peer = sin_of(LO, 6011);
    struct blocked b;
    wisp_sys_thread_t th;
    int u;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_bind(u, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_connect(u, SA(&peer), sizeof peer), 0);
    memset(&b, 0, sizeof b);
    b.fd = u;
    b.kind = 3; /* recvfrom */
    start_thread(&th, blocked_thread, &b);
    WAIT_IN_RECV(&th, u);
    assert_int_equal(wisp_shutdown(u, WISP_SHUT_RD), 0);
    wisp_sys_thread_join(&th);
    assert_int_equal(b.r, 0);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sockets_socket_rejects_bad_arguments, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_err_to_errno_matches_lwip_mapping, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_inet_pton_ntop_dotted_quad, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_tcp_connect_accept_transfer_and_names, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_readv_writev_sendmsg_recvmsg_scatter_gather, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_msg_waitall_waits_for_every_byte, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_bind_and_listen_errors, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_so_rcvtimeo_recv_and_accept_time_out_with_eagain, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_so_sndtimeo_send_returns_partial_then_eagain, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_so_sndtimeo_inherited_by_accept, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_nonblocking_recv_accept_eagain_fcntl_ioctl, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_nonblocking_connect_einprogress_select_so_error, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_connect_refused_blocking_and_nonblocking, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_peer_reset_gives_econnreset_then_eof_and_epipe, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_shutdown_wr_gives_peer_eof_and_local_epipe, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_reset_next_send_gets_econnreset_then_epipe, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_reset_recv_gives_queued_data_then_econnreset_then_eof, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_reset_so_error_once_and_poll_flags, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_reset_during_partial_send_goes_to_the_next_call, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_reset_wakes_blocked_sender_and_receiver_with_econnreset,
                                  senv_teardown),
        cmocka_unit_test_teardown(test_sockets_udp_sendto_recvfrom_peek_trunc_connect, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_udp_recv_timeout_and_ip_tos_goes_to_emergency_queue, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_tcp_options_reach_the_connection, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_select_and_poll_over_64_connections, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_close_wakes_threads_blocked_in_the_socket, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_one_reader_and_one_writer_per_socket_at_once, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_two_readers_take_turns_and_close_wakes_both, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_udp_broadcast_needs_so_broadcast, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_accept_backlog_full_delays_the_excess, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_table_full_gives_emfile_and_recovers, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_stack_pool_exhausted_gives_enobufs_and_recovers, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_recv_making_room_takes_refused_data_at_once, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_shutdown_wr_keeps_a_blocked_reader_receiving, senv_teardown),
        cmocka_unit_test_teardown(test_sockets_udp_shutdown_rd_wakes_blocked_recvfrom, senv_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
