/**
 * @file test_netconn_zero_window.c
 * A netconn receiver that never calls netconn_recv must close its window
 * and keep it closed (RFC 9293 §3.8.6, §3.10.7.4; RFC 1122 §4.2.2.17):
 * the netconn layer reopens the window when the application takes data
 * out of the mailbox, never when data enters it.
 *
 * Two wisp stacks in this process, each run by its own stack thread
 * (wisp/tcpip.h), joined by an in-process wire (a transmitted frame is
 * copied and handed to the other stack's thread). Each stack reads a clock
 * that is the real clock plus an offset the test moves forward (under the
 * stack's core lock), so 60 s pass in about a second.
 *
 * Node A (198.18.0.1) writes 1 MB to node B (198.18.0.2), whose
 * application accepts the connection and then does not read. Once A sees a
 * zero window, 60 s of clock pass in 150 ms steps: the bytes A got
 * acknowledged must not grow (they are exactly WISP_TCP_WND, the window B
 * offered), every segment B sends must carry window 0, A's persist probes
 * must be answered, and B's receive blocks must not grow. Then B's
 * application reads everything (byte-exact) and the transfer completes;
 * teardown checks the netconn and stack pools.
 */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"

#define ZW_BYTES (1024u * 1024u)
#define ZW_PORT 5301u
#define ZW_STALL_MS 60000u
#define ZW_STEP_MS 150u

/* ================================================================ wire */

struct zframe {
    struct zframe *next;
    uint16_t len;
    uint8_t data[];
};

struct znode {
    struct wisp_stack *s;
    struct wisp_netif nif;
    struct wisp_dev dev;
    struct wisp_tcpip ctx;
    struct wisp_netconn_api api;
    struct znode *peer;
    uint8_t mac[6];
    wisp_ip4_t ip;
    uint32_t offset_ms;          /* added to the real clock (core lock) */
    wisp_sys_mutex_t qlock;      /* the fields below */
    struct zframe *qhead, *qtail;
    unsigned qlen;
    bool posted, cut;
    unsigned long qtotal;        /* frames ever queued to this node */
    bool watch;                  /* count this node's TCP segments */
    unsigned seg_tx, seg_open, seg_data;
};

static uint32_t zclock(void *ctx)
{
    const struct znode *n = (const struct znode *)ctx;
    return wisp_sys_now_ms() + n->offset_ms;
}

/* Receiving node's core context: feed the queued frames. */
static wisp_err_t zdeliver(struct wisp_stack *s, void *arg)
{
    struct znode *n = (struct znode *)arg;
    struct zframe *f;
    wisp_sys_mutex_lock(&n->qlock);
    f = n->qhead;
    n->qhead = n->qtail = NULL;
    n->qlen = 0;
    n->posted = false;
    wisp_sys_mutex_unlock(&n->qlock);
    while (f != NULL) {
        struct zframe *next = f->next;
        struct wisp_pbuf *p = wisp_pbuf_alloc_rx(s, f->len);
        if (p != NULL) {
            (void)wisp_pbuf_copy_in(p, f->data, f->len, 0);
            wisp_dev_input(&n->dev, p);
        }
        free(f);
        f = next;
    }
    return WISP_OK;
}

/* Sender's core context. Ethernet + IPv4 + TCP: note the window field. */
static wisp_err_t ztransmit(struct wisp_dev *dev, struct wisp_pbuf *frame)
{
    struct znode *n = (struct znode *)dev->ctx;
    struct znode *to = n->peer;
    struct zframe *f = malloc(sizeof(*f) + frame->tot_len);
    if (f == NULL) {
        return WISP_OK;
    }
    f->next = NULL;
    f->len = wisp_pbuf_copy_out(frame, f->data, frame->tot_len, 0);
    if (n->watch && f->len >= 14u + 20u + 20u && wisp_rd16(f->data + 12) == 0x0800u && f->data[14 + 9] == 6u) {
        unsigned ihl = (f->data[14] & 0x0fu) * 4u;
        unsigned iplen = wisp_rd16(f->data + 16);
        if (14u + ihl + 20u <= f->len) {
            const uint8_t *t = f->data + 14 + ihl;
            unsigned thl = (t[12] >> 4) * 4u;
            n->seg_tx++;
            if (wisp_rd16(t + 14) != 0) {
                n->seg_open++;
            }
            if (iplen > ihl + thl) {
                n->seg_data++;
            }
        }
    }
    wisp_sys_mutex_lock(&to->qlock);
    if (to->cut) {
        wisp_sys_mutex_unlock(&to->qlock);
        free(f);
        return WISP_OK;
    }
    if (to->qtail == NULL) {
        to->qhead = f;
    } else {
        to->qtail->next = f;
    }
    to->qtail = f;
    to->qlen++;
    to->qtotal++;
    if (!to->posted) {
        to->posted = wisp_tcpip_callback(&to->ctx, zdeliver, to) == WISP_OK;
    }
    wisp_sys_mutex_unlock(&to->qlock);
    return WISP_OK;
}

static const struct wisp_dev_ops zwire_ops = { ztransmit, NULL, NULL };

static struct znode *znode_new(uint8_t id)
{
    struct znode *n = calloc(1, sizeof(*n));
    struct wisp_config cfg;
    assert_non_null(n);
    n->s = malloc(sizeof(*n->s));
    assert_non_null(n->s);
    memset(&cfg, 0, sizeof(cfg));
    cfg.now_ms = zclock;
    cfg.clock_ctx = n;
    cfg.seed = 300u + id;
    assert_int_equal(wisp_stack_init(n->s, &cfg), WISP_OK);
    n->dev.ops = &zwire_ops;
    n->dev.ctx = n;
    n->mac[0] = 0x02;
    n->mac[5] = id;
    n->ip = wisp_ip4(198, 18, 0, id);
    assert_int_equal(wisp_netif_add_eth(n->s, &n->nif, "wire0", &n->dev, n->mac, 1500), WISP_OK);
    wisp_netif_set_ip4(&n->nif, n->ip, wisp_ip4_prefix_mask(24), 0);
    assert_int_equal(wisp_sys_mutex_new(&n->qlock), WISP_OK);
    return n;
}

struct zenv {
    struct znode *a, *b;
};

static struct zenv zenv_new(void)
{
    struct zenv e;
    struct wisp_tcpip_cfg cfg;
    assert_int_equal(wisp_sys_init(), WISP_OK);
    e.a = znode_new(1);
    e.b = znode_new(2);
    e.a->peer = e.b;
    e.b->peer = e.a;
    memset(&cfg, 0, sizeof(cfg));
    cfg.name = "tcpip-a";
    assert_int_equal(wisp_tcpip_start(&e.a->ctx, e.a->s, &cfg), WISP_OK);
    cfg.name = "tcpip-b";
    assert_int_equal(wisp_tcpip_start(&e.b->ctx, e.b->s, &cfg), WISP_OK);
    assert_int_equal(wisp_netconn_api_init(&e.a->api, &e.a->ctx), WISP_OK);
    assert_int_equal(wisp_netconn_api_init(&e.b->api, &e.b->ctx), WISP_OK);
    wisp_tcpip_lock(&e.a->ctx);
    wisp_netif_set_up(&e.a->nif, true);
    wisp_netif_set_link(&e.a->nif, true);
    wisp_tcpip_unlock(&e.a->ctx);
    wisp_tcpip_lock(&e.b->ctx);
    wisp_netif_set_up(&e.b->nif, true);
    wisp_netif_set_link(&e.b->nif, true);
    wisp_tcpip_unlock(&e.b->ctx);
    return e;
}

static void znode_free(struct znode *n)
{
    struct zframe *f = n->qhead;
    unsigned i;
    while (f != NULL) {
        struct zframe *next = f->next;
        free(f);
        f = next;
    }
    wisp_sys_mutex_free(&n->qlock);
    wisp_stack_deinit(n->s);
    for (i = 0; i < WISP_POOL_COUNT; i++) {
        if (n->s->pool[i].used != 0) {
            print_error("leak: pool %s has %u elements in use after teardown\n", n->s->pool[i].name,
                        (unsigned)n->s->pool[i].used);
        }
    }
    assert_int_equal(wisp_stack_pools_in_use(n->s), 0);
    free(n->s);
    free(n);
}

static void zenv_free(struct zenv *e)
{
    struct wisp_netconn_stats st;
    wisp_netconn_api_stats(&e->a->api, &st);
    assert_int_equal(st.conns_used, 0);
    assert_int_equal(st.bufs_used, 0);
    wisp_netconn_api_stats(&e->b->api, &st);
    assert_int_equal(st.conns_used, 0);
    assert_int_equal(st.bufs_used, 0);
    assert_int_equal(wisp_netconn_api_deinit(&e->a->api), WISP_OK);
    assert_int_equal(wisp_netconn_api_deinit(&e->b->api), WISP_OK);
    wisp_sys_mutex_lock(&e->a->qlock);
    e->a->cut = true;
    wisp_sys_mutex_unlock(&e->a->qlock);
    wisp_sys_mutex_lock(&e->b->qlock);
    e->b->cut = true;
    wisp_sys_mutex_unlock(&e->b->qlock);
    wisp_tcpip_stop(&e->a->ctx);
    wisp_tcpip_stop(&e->b->ctx);
    znode_free(e->a);
    znode_free(e->b);
}

/* ============================================================ helpers */

static uint8_t zpat(size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + 0x5bd1e995u;
    x ^= x >> 13;
    return (uint8_t)(x ^ (x >> 7));
}

/* What the test reads of a stack (core context). */
struct zsnap {
    bool have;
    struct wisp_tcp_info info;
    unsigned rx_used;
    uint32_t persist, tcp_tx, tcp_rx;
};

/* The connection PCB of node n: conn's, or (conn NULL: behind a socket)
 * the one bound to local port ZW_PORT. */
static void zsnap_take(struct znode *n, struct wisp_netconn *conn, struct zsnap *sn)
{
    struct wisp_tcp_pcb *pcb = NULL;
    memset(sn, 0, sizeof(*sn));
    wisp_tcpip_lock(&n->ctx);
    if (conn != NULL) {
        pcb = conn->pcb.tcp;
    } else {
        for (pcb = n->s->tcp.pcbs; pcb != NULL; pcb = pcb->next) {
            if (pcb->c.local_port == ZW_PORT) {
                break;
            }
        }
    }
    if (pcb != NULL) {
        wisp_tcp_get_info(pcb, &sn->info);
        sn->have = true;
    }
    sn->rx_used = n->s->pool[WISP_POOL_PBUF_RX].used;
    sn->persist = n->s->ctr[WISP_CTR_TCP_PERSIST];
    sn->tcp_tx = n->s->ctr[WISP_CTR_TCP_TX];
    sn->tcp_rx = n->s->ctr[WISP_CTR_TCP_RX];
    wisp_tcpip_unlock(&n->ctx);
}

/* Move n's clock forward by ms and run its expired timers. */
static void zadvance(struct znode *n, uint32_t ms)
{
    wisp_tcpip_lock(&n->ctx);
    n->offset_ms += ms;
    wisp_stack_poll(n->s);
    wisp_tcpip_unlock(&n->ctx);
}

/* Node n idle now: its core not running (we hold its lock), nothing queued
 * or posted to it; *total: frames ever queued to it. */
static bool zidle(struct znode *n, unsigned long *total)
{
    bool idle;
    wisp_tcpip_lock(&n->ctx);
    wisp_sys_mutex_lock(&n->qlock);
    idle = n->qhead == NULL && !n->posted;
    *total = n->qtotal;
    wisp_sys_mutex_unlock(&n->qlock);
    wisp_tcpip_unlock(&n->ctx);
    return idle;
}

/* Wait until the wire is quiet: both nodes idle twice in a row with no
 * frame sent in between (every answer to what a clock step triggered has
 * been delivered and processed). */
static void zsettle(struct zenv *e)
{
    struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
    for (;;) {
        unsigned long a1, b1, a2, b2;
        bool idle = zidle(e->a, &a1) && zidle(e->b, &b1);
        if (idle && zidle(e->a, &a2) && zidle(e->b, &b2) && a1 == a2 && b1 == b2) {
            return;
        }
        TU_POLL(&tp, "the wire did not settle");
    }
}

struct zwriter {
    struct wisp_netconn *c;
    uint8_t *buf;
    wisp_err_t r;
};

static void zwriter_fn(void *arg)
{
    struct zwriter *w = (struct zwriter *)arg;
    w->r = wisp_netconn_write(w->c, w->buf, ZW_BYTES, WISP_NETCONN_COPY);
}

/* ============================================================== test */

/* sock: B's application uses the socket API (built on netconn with
 * NETCONN_NOAUTORCVD: the window reopens when recv copies data out). */
static void zw_run(bool sock)
{
    struct zenv e = zenv_new();
    struct wisp_netconn *lst, *cli = NULL, *srv = NULL;
    wisp_ipaddr_t any = wisp_netconn_addr_any, to = wisp_ipaddr4(e.b->ip);
    struct zwriter wr;
    wisp_sys_thread_t wt;
    struct zsnap sa0, sb0, sa, sb;
    uint8_t *got;
    size_t n = 0, i;
    unsigned k, grew = 0, seg_tx, seg_open, seg_data;
    wisp_err_t r;
    struct wisp_sockets *tbl = NULL;
    int lfd = -1, fd = -1;

    wr.buf = malloc(ZW_BYTES);
    got = malloc(ZW_BYTES);
    assert_non_null(wr.buf);
    assert_non_null(got);
    for (i = 0; i < ZW_BYTES; i++) {
        wr.buf[i] = zpat(i);
    }
    if (!sock) {
        lst = wisp_netconn_new(&e.b->api, WISP_NETCONN_TCP);
        assert_non_null(lst);
        assert_int_equal(wisp_netconn_bind(lst, &any, ZW_PORT), WISP_OK);
        assert_int_equal(wisp_netconn_listen_with_backlog(lst, 1), WISP_OK);
    } else {
        struct wisp_sockaddr_in sin;
        tbl = calloc(1, sizeof(*tbl));
        assert_non_null(tbl);
        assert_int_equal(wisp_sockets_init(tbl, &e.b->api), WISP_OK);
        lfd = wisp_socket_on(&e.b->api, WISP_AF_INET, WISP_SOCK_STREAM, 0);
        assert_true(lfd >= 0);
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = WISP_AF_INET;
        sin.sin_port = wisp_htons(ZW_PORT);
        assert_int_equal(wisp_bind(lfd, (const struct wisp_sockaddr *)(const void *)&sin, sizeof(sin)), 0);
        assert_int_equal(wisp_listen(lfd, 1), 0);
        lst = NULL;
    }
    cli = wisp_netconn_new(&e.a->api, WISP_NETCONN_TCP);
    assert_non_null(cli);
    assert_int_equal(wisp_netconn_connect(cli, &to, ZW_PORT), WISP_OK);
    if (!sock) {
        assert_int_equal(wisp_netconn_accept(lst, &srv), WISP_OK);
        assert_non_null(srv);
    } else {
        fd = wisp_accept(lfd, NULL, NULL);
        assert_true(fd >= 0);
    }

    /* A writes 1 MB; B's application does not read */
    wr.c = cli;
    wr.r = WISP_ERR_VAL;
    assert_int_equal(wisp_sys_thread_new(&wt, "zw-writer", zwriter_fn, &wr, 0, 0), WISP_OK);
    {
        struct tu_poll tp = tu_poll_start(TU_WAIT_MS);
        for (;;) {
            zsnap_take(e.a, cli, &sa);
            if (sa.have && sa.info.bytes_acked > 0 && sa.info.snd_wnd == 0 && sa.info.unacked <= 1u) {
                break;
            }
            TU_POLL(&tp, "the window did not close");
        }
    }
    assert_true(sa.have && sa.info.snd_wnd == 0);
    /* let the last ACKs and the first probe settle (1 s of clock) */
    for (k = 0; k < 10; k++) {
        zadvance(e.a, 100);
        zadvance(e.b, 100);
        zsettle(&e);
    }
    zsnap_take(e.a, cli, &sa0);
    zsnap_take(e.b, srv, &sb0); /* srv NULL: the socket's PCB */
    assert_true(sa0.have && sb0.have);
    printf("  %s: window closed: %lu bytes acknowledged, %lu received, sender snd_wnd %lu, receiver rcv_wnd %lu, "
           "receiver RX blocks %u\n",
           sock ? "socket" : "netconn", (unsigned long)sa0.info.bytes_acked, (unsigned long)sb0.info.bytes_received,
           (unsigned long)sa0.info.snd_wnd, (unsigned long)sb0.info.rcv_wnd, sb0.rx_used);

    /* 60 s of clock in 150 ms steps, the application still not reading */
    wisp_tcpip_lock(&e.b->ctx);
    e.b->watch = true;
    wisp_tcpip_unlock(&e.b->ctx);
    for (k = 0; k < ZW_STALL_MS / ZW_STEP_MS; k++) {
        zadvance(e.a, ZW_STEP_MS);
        zadvance(e.b, ZW_STEP_MS);
        zsettle(&e); /* the probe and its answer went */
        zsnap_take(e.a, cli, &sa);
        if (!sa.have) {
            break;
        }
        if (sa.info.bytes_acked != sa0.info.bytes_acked) {
            grew++;
        }
    }
    zsettle(&e); /* the last answers arrived */
    zsnap_take(e.a, cli, &sa);
    zsnap_take(e.b, srv, &sb);
    wisp_tcpip_lock(&e.b->ctx);
    e.b->watch = false;
    seg_tx = e.b->seg_tx;
    seg_open = e.b->seg_open;
    seg_data = e.b->seg_data;
    wisp_tcpip_unlock(&e.b->ctx);
    printf("  after 60 s: %lu bytes acknowledged (+%ld, %u of %u samples grew), %lu received (+%ld), "
           "receiver RX blocks %u -> %u, persist probes %lu, receiver rx %lu tx %lu segments "
           "(%u with a window > 0, %u with data)\n",
           (unsigned long)sa.info.bytes_acked, (long)(sa.info.bytes_acked - sa0.info.bytes_acked), grew,
           ZW_STALL_MS / ZW_STEP_MS, (unsigned long)sb.info.bytes_received,
           (long)(sb.info.bytes_received - sb0.info.bytes_received), sb0.rx_used, sb.rx_used,
           (unsigned long)(sa.persist - sa0.persist), (unsigned long)(sb.tcp_rx - sb0.tcp_rx),
           (unsigned long)(sb.tcp_tx - sb0.tcp_tx), seg_open, seg_data);
    assert_true(sa.have && sb.have);
    /* nothing more acknowledged or taken in: exactly the window offered */
    assert_int_equal(grew, 0);
    assert_int_equal(sa.info.bytes_acked, sa0.info.bytes_acked);
    assert_int_equal(sb.info.bytes_received, sb0.info.bytes_received);
    assert_int_equal(sa0.info.bytes_acked, (uint32_t)WISP_TCP_WND);
    assert_int_equal(sb0.info.bytes_received, (uint32_t)WISP_TCP_WND);
    assert_int_equal(sa.info.snd_wnd, 0);
    assert_int_equal(sb.info.rcv_wnd, 0);
    /* probes sent (backed off) and every answer says window 0 */
    assert_true(sa.persist - sa0.persist >= 3u);
    assert_true(sa.persist - sa0.persist <= 60u);
    assert_true(sb.tcp_tx - sb0.tcp_tx >= 3u);
    assert_true(seg_tx >= 3u);
    assert_int_equal(seg_open, 0);
    assert_true(sb.rx_used <= sb0.rx_used);

    /* B's application reads everything now */
    while (n < ZW_BYTES && !sock) {
        struct wisp_netbuf *nb;
        r = wisp_netconn_recv(srv, &nb);
        if (r != WISP_OK) {
            fail_msg("recv after %zu bytes: %s", n, wisp_err_str(r));
        }
        do {
            void *data;
            uint16_t len;
            if (wisp_netbuf_data(nb, &data, &len) != WISP_OK) {
                break;
            }
            assert_true(n + len <= ZW_BYTES);
            memcpy(got + n, data, len);
            n += len;
        } while (wisp_netbuf_next(nb) >= 0);
        wisp_netbuf_delete(nb);
    }
    while (n < ZW_BYTES && sock) {
        wisp_ssize_t k2 = wisp_recv(fd, got + n, ZW_BYTES - n, 0);
        if (k2 <= 0) {
            fail_msg("recv after %zu bytes: %ld (errno %d)", n, (long)k2, wisp_errno());
        }
        n += (size_t)k2;
    }
    assert_int_equal(wisp_sys_thread_join(&wt), WISP_OK);
    assert_int_equal(wr.r, WISP_OK);
    for (i = 0; i < ZW_BYTES; i++) {
        if (got[i] != zpat(i)) {
            fail_msg("byte %zu differs: %02x != %02x", i, got[i], zpat(i));
        }
    }
    printf("  read back: %zu bytes, byte-exact\n", n);
    assert_int_equal(wisp_netconn_delete(cli), WISP_OK);
    if (!sock) {
        assert_int_equal(wisp_netconn_delete(srv), WISP_OK);
        assert_int_equal(wisp_netconn_delete(lst), WISP_OK);
    } else {
        assert_int_equal(wisp_close(fd), 0);
        assert_int_equal(wisp_close(lfd), 0);
        assert_int_equal(wisp_sockets_in_use(), 0);
        assert_int_equal(wisp_sockets_deinit(), 0);
        free(tbl);
    }
    free(wr.buf);
    free(got);
    zenv_free(&e);
}

static void test_netconn_unread_receiver_keeps_window_closed(void **state)
{
    (void)state;
    zw_run(false);
}

static void test_socket_unread_receiver_keeps_window_closed(void **state)
{
    (void)state;
    zw_run(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netconn_unread_receiver_keeps_window_closed),
        cmocka_unit_test(test_socket_unread_receiver_keeps_window_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
