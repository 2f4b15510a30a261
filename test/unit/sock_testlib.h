/**
 * @file sock_testlib.h
 * The fixture of the threaded socket tests (header-only, static):
 * test_sockets.c, test_sockets_opts.c, test_sockets_posix.c and
 * test_icmp_sockets.c. One stack (tu_env: 198.18.0.2 with a recording
 * device towards the "peer" 198.18.0.1, plus loopback 127.0.0.1) runs on
 * its stack thread in real time with the netconn API and the socket table
 * on top; helpers for addresses and loopback TCP pairs.
 *
 * Include it before wisp/sockets_posix_names.h (it uses wisp's names).
 */
#ifndef WISP_SOCK_TESTLIB_H
#define WISP_SOCK_TESTLIB_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"

#define LO wisp_ip4(127, 0, 0, 1)
#define SA(p) ((struct wisp_sockaddr *)(void *)(p))

struct senv {
    struct tu_env *e;
    struct wisp_tcpip *ctx;
    struct wisp_netconn_api *api;
    struct wisp_sockets *tbl;
};

static inline uint32_t senv_real_clock(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

/* The environment of the running test, for the teardown after a failed
 * assertion (which skips senv_stop): so the next test starts clean. */
static struct senv *g_cur;
static struct senv g_cur_copy;

/* The stack (tu_env_new(seed); the peer's ARP entry when arp_peer) on its
 * stack thread, the netconn API and the socket table. */
static inline struct senv sock_env_start(unsigned seed, bool arp_peer)
{
    struct senv t;
    assert_int_equal(wisp_sys_init(), WISP_OK);
    t.e = tu_env_new(seed);
    if (arp_peer) {
        tu_arp_peer(t.e);
    }
    t.e->s->cfg.now_ms = senv_real_clock;
    t.e->s->cfg.clock_ctx = NULL;
    (void)wisp_now(t.e->s);
    t.ctx = calloc(1, sizeof(*t.ctx));
    t.api = calloc(1, sizeof(*t.api));
    t.tbl = calloc(1, sizeof(*t.tbl));
    assert_non_null(t.ctx);
    assert_non_null(t.api);
    assert_non_null(t.tbl);
    assert_int_equal(wisp_tcpip_start(t.ctx, t.e->s, NULL), WISP_OK);
    assert_int_equal(wisp_netconn_api_init(t.api, t.ctx), WISP_OK);
    assert_int_equal(wisp_sockets_init(t.tbl, t.api), WISP_OK);
    g_cur_copy = t;
    g_cur = &g_cur_copy;
    return t;
}

/* cmocka teardown: only acts when the test failed before senv_stop. */
static inline int senv_teardown(void **state)
{
    (void)state;
    if (g_cur != NULL) {
        (void)wisp_sockets_deinit();
        wisp_tcpip_stop(g_cur->ctx);
        g_cur = NULL;
    }
    return 0;
}

/* Wait until no TCP connection PCB is in use any more but those in
 * TIME-WAIT (closing handshakes over loopback finish quickly; at most 5 s). */
static inline void wait_tcp_idle(struct senv *t)
{
    struct tu_poll tp = tu_poll_start(5000);
    for (;;) {
        unsigned used;
        wisp_tcpip_lock(t->ctx);
        used = t->e->s->pool[WISP_POOL_TCP_PCB].used + t->e->s->pool[WISP_POOL_TCP_LISTEN].used;
#if !WISP_TCP_TW_COMPACT
        /* Without compact TIME-WAIT a closed connection keeps its whole
         * PCB for 2 MSL (RFC 9293 §3.10.7.4); the stack's stop frees it,
         * and the leak check that follows counts it then. */
        for (const struct wisp_tcp_pcb *w = t->e->s->tcp.tw_pcbs; w != NULL; w = w->next) {
            used--;
        }
#endif
        wisp_tcpip_unlock(t->ctx);
        if (used == 0 || !tu_poll_more(&tp)) {
            break; /* a leftover fails the leak check that follows */
        }
    }
}

/* The netconn under socket fd of the running test (white box: for the
 * blocked-thread probe; the entry does not change while fd is open). */
static inline struct wisp_netconn *sock_conn(int fd)
{
    struct wisp_netconn *c;
    assert_non_null(g_cur);
    assert_true(fd >= WISP_SOCKET_OFFSET && fd < WISP_SOCKET_OFFSET + WISP_SOCKET_COUNT);
    wisp_sys_mutex_lock(&g_cur->tbl->lock);
    c = g_cur->tbl->sock[fd - WISP_SOCKET_OFFSET].conn;
    wisp_sys_mutex_unlock(&g_cur->tbl->lock);
    assert_non_null(c);
    return c;
}

/* Thread th (wisp_sys_thread_t *) is blocked in a receive (recv, recvfrom,
 * accept: the netconn's mailbox) / a send waiting for room (its send
 * semaphore) on fd. Fails the test after TU_WAIT_MS otherwise. */
#define WAIT_IN_RECV(th, fd) TU_WAIT_BLOCKED((th), &sock_conn(fd)->mbox)
#define WAIT_IN_SEND(th, fd) TU_WAIT_BLOCKED((th), &sock_conn(fd)->sem)

/* Wait until every byte written on TCP socket fd is acknowledged (its
 * send buffer is empty): the peer's stack holds it. */
static inline void wait_all_acked(int fd)
{
    struct wisp_netconn *c = sock_conn(fd);
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    for (;;) {
        bool done;
        wisp_tcpip_lock(g_cur->ctx);
        done = c->pcb.tcp == NULL || wisp_tcp_sndbuf(c->pcb.tcp) >= wisp_tcp_sndbuf_size(c->pcb.tcp);
        wisp_tcpip_unlock(g_cur->ctx);
        if (done) {
            return;
        }
        TU_POLL(&tp, "data not acknowledged");
    }
}

/* Thread th is blocked in select / poll, or waits for its turn on a
 * socket another thread reads or writes: both sleep on a semaphore of the
 * socket table's waiter list (private to sockets.c), so: registered as a
 * waiter and blocked on a semaphore that is no netconn's. */
static inline void wait_in_select(const wisp_sys_thread_t *th)
{
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    for (;;) {
        enum wisp_sys_wait_kind k = WISP_SYS_WAIT_NONE;
        bool listed;
        wisp_sys_mutex_lock(&g_cur->tbl->lock);
        listed = g_cur->tbl->waiters != NULL;
        wisp_sys_mutex_unlock(&g_cur->tbl->lock);
        if (listed && wisp_sys_debug_blocked_on(th, &k) != NULL && k == WISP_SYS_WAIT_SEM) {
            return;
        }
        TU_POLL(&tp, "the thread did not block in select/poll or for its turn");
    }
}

/* Everything down again, then the pool leak check of tu_env_free.
 * check_in_use: first assert that the test closed all its sockets. */
static inline void sock_env_stop(struct senv *t, bool check_in_use)
{
    g_cur = NULL;
    if (check_in_use) {
        assert_int_equal(wisp_sockets_in_use(), 0);
    }
    assert_int_equal(wisp_sockets_deinit(), 0);
    wait_tcp_idle(t);
    assert_int_equal(wisp_netconn_api_deinit(t->api), WISP_OK);
    wisp_tcpip_stop(t->ctx);
    free(t->tbl);
    free(t->api);
    free(t->ctx);
    tu_env_free(t->e); /* leak check */
}

static inline struct wisp_sockaddr_in sin_of(wisp_ip4_t ip, uint16_t port)
{
    struct wisp_sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = WISP_AF_INET;
    a.sin_port = wisp_htons(port);
    a.sin_addr.s_addr = ip;
    return a;
}

/* A TCP socket listening on port (any address) with backlog. */
static inline int tcp_listener(uint16_t port, int backlog)
{
    struct wisp_sockaddr_in a = sin_of(WISP_IP4_ANY, port);
    int fd = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_true(fd >= WISP_SOCKET_OFFSET);
    assert_int_equal(wisp_bind(fd, SA(&a), sizeof a), 0);
    assert_int_equal(wisp_listen(fd, backlog), 0);
    return fd;
}

/* A connected pair over loopback through listener lfd on port. */
static inline void tcp_pair(int lfd, uint16_t port, int *cli, int *srv)
{
    struct wisp_sockaddr_in a = sin_of(LO, port);
    *cli = wisp_socket(WISP_AF_INET, WISP_SOCK_STREAM, 0);
    assert_true(*cli >= 0);
    assert_int_equal(wisp_connect(*cli, SA(&a), sizeof a), 0);
    *srv = wisp_accept(lfd, NULL, NULL);
    assert_true(*srv >= 0);
}

#endif /* WISP_SOCK_TESTLIB_H */
