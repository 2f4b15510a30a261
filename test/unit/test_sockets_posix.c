/**
 * @file test_sockets_posix.c
 * wisp/sockets_posix_names.h: portable socket code written with the
 * standard names (socket, bind, struct sockaddr_in, AF_INET, EAGAIN,
 * FD_SET, poll, fcntl, ...) compiles against wisp's sockets and behaves as
 * POSIX says. This file includes no system socket header (<sys/socket.h>,
 * <netinet/in.h>, <arpa/inet.h>, <poll.h>, <sys/select.h>, <fcntl.h>) --
 * the situation of a microcontroller -- and the mapping header last.
 * errno is the C library's: wisp stores its (Linux-valued) codes there.
 */
#include <stdlib.h>
#include <errno.h>

#include "testutil.h"
#include "sock_testlib.h" /* the fixture (wisp's names) */
#include "wisp/sockets_posix_names.h" /* last: it maps the standard names */

/* The layout of the standard structs. */
WISP_STATIC_ASSERT(sockaddr_in_size, sizeof(struct sockaddr_in) == 16);
WISP_STATIC_ASSERT(sockaddr_size, sizeof(struct sockaddr) == 16);
WISP_STATIC_ASSERT(sin_port_at_2, offsetof(struct sockaddr_in, sin_port) == 2);
WISP_STATIC_ASSERT(sin_addr_at_4, offsetof(struct sockaddr_in, sin_addr) == 4);
WISP_STATIC_ASSERT(storage_size, sizeof(struct sockaddr_storage) == 128);
WISP_STATIC_ASSERT(pollfd_size, sizeof(struct pollfd) == 8);

static struct senv penv_start(void)
{
    return sock_env_start(9, false);
}

static void penv_stop(struct senv *t)
{
    sock_env_stop(t, false);
}

/* Portable code: an echo over TCP, written as for any BSD system. */
static int echo_once(unsigned short port)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    int lfd, cfd, sfd, one = 1, flags;
    char buf[32];
    ssize_t n;
    fd_set rs;
    struct timeval tv;

    lfd = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (lfd < 0) {
        return 1;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 4) != 0) {
        return 2;
    }
    cfd = socket(AF_INET, SOCK_STREAM, 0);
    flags = fcntl(cfd, F_GETFL, 0);
    fcntl(cfd, F_SETFL, flags | O_NONBLOCK);
    if (inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr) != 1) {
        return 3;
    }
    if (connect(cfd, (struct sockaddr *)&addr, sizeof addr) != -1 || errno != EINPROGRESS) {
        return 4;
    }
    FD_ZERO(&rs);
    FD_SET(lfd, &rs);
    tv.tv_sec = 2;
    tv.tv_usec = 0;
    if (select(lfd + 1, &rs, NULL, NULL, &tv) != 1 || !FD_ISSET(lfd, &rs)) {
        return 5;
    }
    sfd = accept(lfd, (struct sockaddr *)&addr, &len);
    if (sfd < 0 || len != sizeof addr || ntohl(addr.sin_addr.s_addr) != INADDR_LOOPBACK) {
        return 6;
    }
    {
        struct pollfd p;
        int err = -1;
        socklen_t el = sizeof err;
        p.fd = cfd;
        p.events = POLLOUT;
        if (poll(&p, 1, 2000) != 1 || !(p.revents & POLLOUT)) {
            return 7;
        }
        if (getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
            return 8;
        }
    }
    if (recv(sfd, buf, sizeof buf, MSG_DONTWAIT) != -1 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        return 9;
    }
    if (write(cfd, "ping", 4) != 4) {
        return 10;
    }
    n = 0;
    while (n < 4) {
        ssize_t r = read(sfd, buf + n, (size_t)(4 - n));
        if (r <= 0) {
            return 11;
        }
        n += r;
    }
    if (send(sfd, buf, 4, 0) != 4) {
        return 12;
    }
    {
        struct pollfd p;
        int avail = 0, off = 0;
        p.fd = cfd;
        p.events = POLLIN;
        if (poll(&p, 1, 2000) != 1) {
            return 13;
        }
        ioctl(cfd, FIONBIO, &off); /* blocking again */
        while (avail < 4) {
            ioctl(cfd, FIONREAD, &avail);
        }
        if (recv(cfd, buf, sizeof buf, 0) != 4 || memcmp(buf, "ping", 4) != 0) {
            return 14;
        }
    }
    if (shutdown(cfd, SHUT_WR) != 0 || recv(sfd, buf, 1, 0) != 0) {
        return 15;
    }
    close(sfd);
    close(cfd);
    close(lfd);
    if (close(lfd) != -1 || errno != EBADF) {
        return 16;
    }
    return 0;
}

static void test_sockets_posix_names_tcp_echo(void **state)
{
    struct senv t = penv_start();
    (void)state;
    assert_int_equal(echo_once(7007), 0);
    penv_stop(&t);
}

static void test_sockets_posix_names_udp_and_addresses(void **state)
{
    struct senv t = penv_start();
    struct sockaddr_in a, from;
    socklen_t fl = sizeof from;
    char text[INET_ADDRSTRLEN], buf[8];
    int u1, u2;
    (void)state;
    u1 = socket(PF_INET, SOCK_DGRAM, 0);
    u2 = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    assert_true(u1 >= 0 && u2 >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(7008);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(u1, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(sendto(u2, "dgram", 5, 0, (struct sockaddr *)&a, sizeof a), 5);
    assert_int_equal(recvfrom(u1, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl), 5);
    assert_memory_equal(buf, "dgram", 5);
    assert_string_equal(inet_ntop(AF_INET, &from.sin_addr, text, sizeof text), "127.0.0.1");
    fl = sizeof from;
    assert_int_equal(getsockname(u2, (struct sockaddr *)&from, &fl), 0);
    assert_true(ntohs(from.sin_port) != 0);
    assert_int_equal(socket(AF_INET6, SOCK_STREAM, 0), -1);
    assert_int_equal(errno, EAFNOSUPPORT);
    assert_int_equal(sendto(u2, "x", 1, MSG_OOB, (struct sockaddr *)&a, sizeof a), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(close(u1), 0);
    assert_int_equal(close(u2), 0);
    penv_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sockets_posix_names_tcp_echo),
        cmocka_unit_test(test_sockets_posix_names_udp_and_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
