/**
 * @file test_icmp_sockets.c
 * ICMP errors through the threaded APIs: a connected UDP socket (and
 * netconn) whose datagram went to a closed port hears the port unreachable
 * that the stack's own UDP sends back over loopback (the whole path:
 * udp.c no port -> icmp.c error -> loopback -> icmp.c validation ->
 * udp.c -> netconn -> sockets): ECONNREFUSED once from the next recv or
 * send, a blocked recv is woken by it, an unconnected socket is not told.
 * Leak check at the end of every test.
 */
#include <stdlib.h>

#include "testutil.h"
#include "sock_testlib.h"

static struct senv senv_start(void)
{
    return sock_env_start(9, true);
}

static void senv_stop(struct senv *t)
{
    sock_env_stop(t, true);
}

static uint32_t ctr(struct senv *t, unsigned id)
{
    uint32_t v;
    wisp_tcpip_lock(t->ctx);
    v = t->e->s->ctr[id];
    wisp_tcpip_unlock(t->ctx);
    return v;
}

/* Wait (bounded) until counter id reaches v. */
static void wait_ctr(struct senv *t, unsigned id, uint32_t v)
{
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    while (ctr(t, id) < v) {
        TU_POLL(&tp, "the counter did not reach its value");
    }
}

static void test_udp_socket_connected_gets_econnrefused_once(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 6020), peer = sin_of(LO, 6021);
    char buf[16];
    int u, v;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_true(u >= 0);
    assert_int_equal(wisp_bind(u, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_connect(u, SA(&peer), sizeof peer), 0);

    /* nobody on 6021: the port unreachable comes back over loopback */
    assert_int_equal(wisp_send(u, "hello", 5, 0), 5);
    wait_ctr(&t, WISP_CTR_ICMP_ERR_UDP, 1);
    assert_int_equal(wisp_recv(u, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(wisp_errno(), WISP_ECONNREFUSED);
    /* reported once */
    assert_int_equal(wisp_recv(u, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(wisp_errno(), WISP_EAGAIN);

    /* the next send reports the error of the previous datagram */
    assert_int_equal(wisp_send(u, "again", 5, 0), 5);
    wait_ctr(&t, WISP_CTR_ICMP_ERR_UDP, 2);
    assert_int_equal(wisp_send(u, "third", 5, 0), -1);
    assert_int_equal(wisp_errno(), WISP_ECONNREFUSED);
    assert_int_equal(wisp_recv(u, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(wisp_errno(), WISP_EAGAIN);

    /* an unconnected socket sending to the same closed port hears nothing */
    v = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_true(v >= 0);
    assert_int_equal(wisp_sendto(v, "x", 1, 0, SA(&peer), sizeof peer), 1);
    wait_ctr(&t, WISP_CTR_ICMP_ERR_DROP_NOPCB, 1);
    assert_int_equal(wisp_recv(v, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(wisp_errno(), WISP_EAGAIN);
    assert_int_equal(ctr(&t, WISP_CTR_ICMP_ERR_UDP), 2);

    assert_int_equal(wisp_close(v), 0);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

static void test_udp_icmp_error_poll_select_and_so_error(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 6050), peer = sin_of(LO, 6051);
    struct wisp_pollfd pfd;
    wisp_fd_set rd;
    struct wisp_timeval tv;
    char buf[8];
    int u, err = 0;
    wisp_socklen_t len = sizeof err;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_bind(u, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_connect(u, SA(&peer), sizeof peer), 0);
    pfd.fd = u;
    pfd.events = WISP_POLLIN;
    pfd.revents = 0;
    assert_int_equal(wisp_poll(&pfd, 1, 0), 0);
    assert_int_equal(wisp_send(u, "x", 1, 0), 1);
    /* the error makes the socket readable with POLLERR (as Linux) */
    assert_int_equal(wisp_poll(&pfd, 1, 2000), 1);
    assert_true((pfd.revents & WISP_POLLERR) != 0);
    assert_true((pfd.revents & WISP_POLLIN) != 0);
    WISP_FD_ZERO(&rd);
    WISP_FD_SET(u, &rd);
    tv.tv_sec = 1;
    tv.tv_usec = 0;
    assert_int_equal(wisp_select(u + 1, &rd, NULL, NULL, &tv), 1);
    /* SO_ERROR takes it once */
    assert_int_equal(wisp_getsockopt(u, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &len), 0);
    assert_int_equal(err, WISP_ECONNREFUSED);
    assert_int_equal(wisp_getsockopt(u, WISP_SOL_SOCKET, WISP_SO_ERROR, &err, &len), 0);
    assert_int_equal(err, 0);
    assert_int_equal(wisp_poll(&pfd, 1, 0), 0);
    assert_int_equal(wisp_recv(u, buf, sizeof buf, WISP_MSG_DONTWAIT), -1);
    assert_int_equal(wisp_errno(), WISP_EAGAIN);
    /* taken by recv: poll quiet again */
    assert_int_equal(wisp_send(u, "y", 1, 0), 1);
    assert_int_equal(wisp_poll(&pfd, 1, 2000), 1);
    assert_int_equal(wisp_recv(u, buf, sizeof buf, 0), -1);
    assert_int_equal(wisp_errno(), WISP_ECONNREFUSED);
    assert_int_equal(wisp_poll(&pfd, 1, 0), 0);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

struct blocked {
    int fd;
    int r, e;
};

static void blocked_recv(void *arg)
{
    struct blocked *b = (struct blocked *)arg;
    char buf[16];
    b->r = (int)wisp_recv(b->fd, buf, sizeof buf, 0);
    b->e = wisp_errno();
}

static void test_udp_blocked_recv_is_woken_by_port_unreachable(void **state)
{
    struct senv t = senv_start();
    struct wisp_sockaddr_in a = sin_of(LO, 6030), peer = sin_of(LO, 6031);
    struct blocked b;
    wisp_sys_thread_t th;
    int u;
    (void)state;
    u = wisp_socket(WISP_AF_INET, WISP_SOCK_DGRAM, 0);
    assert_int_equal(wisp_bind(u, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_connect(u, SA(&peer), sizeof peer), 0);
    memset(&b, 0, sizeof b);
    b.fd = u;
    assert_int_equal(wisp_sys_thread_new(&th, "rx", blocked_recv, &b, 0, 0), WISP_OK);
    WAIT_IN_RECV(&th, u); /* blocked: the error must wake it */
    assert_int_equal(wisp_send(u, "ping", 4, 0), 4);
    wisp_sys_thread_join(&th);
    assert_int_equal(b.r, -1);
    assert_int_equal(b.e, WISP_ECONNREFUSED);
    assert_int_equal(wisp_close(u), 0);
    senv_stop(&t);
}

static void test_udp_netconn_recv_gets_err_refused(void **state)
{
    struct senv t = senv_start();
    struct wisp_netconn *c = wisp_netconn_new(t.api, WISP_NETCONN_UDP);
    struct wisp_netbuf *nb = NULL, *out;
    wisp_ipaddr_t lo = wisp_ipaddr4(LO);
    (void)state;
    assert_non_null(c);
    assert_int_equal(wisp_netconn_bind(c, &lo, 6040), WISP_OK);
    assert_int_equal(wisp_netconn_connect(c, &lo, 6041), WISP_OK);
    out = wisp_netbuf_new(t.api);
    assert_non_null(out);
    assert_int_equal(wisp_netbuf_ref(out, "data", 4), WISP_OK);
    assert_int_equal(wisp_netconn_send(c, out), WISP_OK);
    wisp_netbuf_delete(out);
    assert_int_equal(wisp_netconn_recv(c, &nb), WISP_ERR_REFUSED);
    assert_null(nb);
    assert_int_equal(wisp_netconn_delete(c), WISP_OK);
    senv_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp_socket_connected_gets_econnrefused_once),
        cmocka_unit_test(test_udp_blocked_recv_is_woken_by_port_unreachable),
        cmocka_unit_test(test_udp_netconn_recv_gets_err_refused),
        cmocka_unit_test(test_udp_icmp_error_poll_select_and_so_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
