/**
 * @file test_tcp_rxwin.c
 * Simulator tests of the receive window / memory rule (issue 12): the
 * window a connection announces never promises more than its receive
 * blocks can hold for the segments that actually arrive, and no data the
 * window admitted is dropped for want of memory.
 *
 * A wisp sender with Nagle off writes 1..64-byte chunks (one segment
 * each) and keeps the receiver's whole window full while the receiving
 * application does not read for a while and then reads slowly, in the two
 * ways an application holds received data:
 *  - refusing it (the recv callback returns WISP_ERR_MEM: the stack keeps
 *    it, as it does for a netconn whose mailbox is full);
 *  - a netconn-like mailbox: the application keeps up to MBOX pbufs as
 *    they came and refuses beyond that, and refuses short ones (a small
 *    segment alone in its block, wisp_tcp_rx_short) once it holds
 *    SHORT_MAX items, as src/api/netconn.c does; a reader takes a few of
 *    them out now and then.
 * Each small segment arrives in a receive block of its own. The receiver
 * must drop nothing it admitted (tcp.drop.rxbudget, tcp.ooseq.drop,
 * tcp.drop.refused and netif.rx.nomem stay 0), so over a loss-free wire
 * the sender retransmits nothing but zero-window probes, every byte arrives in
 * order (the harness checks each against the stream) and the pools return
 * to their baseline. With 1 % loss, out-of-order data must be kept too.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define KB 1024u
#define SEC 1000000ull
#define MBOX 64u /* the host build's WISP_NETCONN_RECVMBOX_SIZE */
#define SHORT_MAX 4u /* netconn.c NC_RX_SHORT_MAX */

static void print_ctrs(const char *name, const struct wisp_stack *s)
{
    static const char *const want[] = { "netif.rx.nomem",  "tcp.drop.rxbudget", "tcp.ooseq.drop",
                                        "tcp.drop.refused", "tcp.wnd.budgetlimited", "tcp.retransmit",
                                        "tcp.rx.coalesce" };
    tsl_print_ctrs(name, s, want, (unsigned)WISP_ARRAY_SIZE(want));
}

/* ------------------------------------------- a netconn-like mailbox */

struct mbox {
    struct tsl_ep *ep;
    wisp_tcp_recv_fn deliver; /* the harness's callback: checks, frees, recved */
    struct wisp_pbuf *q[MBOX];
    unsigned n;
    bool on;
    bool fin; /* the peer's FIN came behind the queued data */
};

static struct mbox g_mbox[8];

static wisp_err_t mbox_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct mbox *m = NULL;
    unsigned i;
    for (i = 0; i < WISP_ARRAY_SIZE(g_mbox); i++) {
        if (g_mbox[i].ep == arg) {
            m = &g_mbox[i];
        }
    }
    assert_non_null(m);
    if (p == NULL && m->n > 0) {
        m->fin = true; /* after the data */
        return WISP_OK;
    }
    if (p == NULL || !m->on) {
        return m->deliver(arg, pcb, p, err); /* FIN, or mailbox off: pass on */
    }
    if (m->n == MBOX || (m->n >= SHORT_MAX && wisp_tcp_rx_short(pcb, p))) {
        return WISP_ERR_MEM; /* full (for short ones: netconn's rule): the stack keeps it */
    }
    m->q[m->n++] = p;
    return WISP_OK;
}

/* the reader takes k items out (in order) and hands them to the harness */
static void mbox_read(struct mbox *m, unsigned k)
{
    unsigned i;
    k = WISP_MIN(k, m->n);
    for (i = 0; i < k && m->ep->pcb != NULL; i++) {
        (void)m->deliver(m->ep, m->ep->pcb, m->q[i], WISP_OK);
    }
    memmove(&m->q[0], &m->q[k], (m->n - k) * sizeof(m->q[0]));
    m->n -= k;
    if (m->n == 0 && m->fin && m->ep->pcb != NULL) {
        m->fin = false;
        (void)m->deliver(m->ep, m->ep->pcb, NULL, WISP_OK);
    }
    if (k > 0 && m->ep->pcb != NULL) {
        wisp_tcp_recv_retry(m->ep->pcb); /* a slot is free: take refused data (netconn's do_recved) */
    }
}

/* ------------------------------------------------------------- runs */

struct rxwin_case {
    uint64_t wseed;
    unsigned nconns;
    uint32_t bytes;      /* per connection */
    uint32_t wsize;      /* writes of 1..wsize bytes */
    bool mailbox;        /* netconn-like mailbox, else refusing */
    uint32_t stall_ms;   /* the application reads nothing this long */
    double loss;
};

static void rxwin_run(const struct rxwin_case *k)
{
    struct sim_world *w = sim_world_new(k->wseed);
    struct sim_node *a, *b;
    struct sim_link_cfg l;
    struct tsl_run run;
    unsigned base[2], i;
    uint64_t t_end;
    struct wisp_stack *sb;
    bool done = false;

    memset(g_mbox, 0, sizeof(g_mbox));
    assert_true(k->nconns <= WISP_ARRAY_SIZE(g_mbox));
    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 200;
    l.loss = k->loss;
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    sb = sim_stack(b);
    sim_set_max_events(w, 200000000ull);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 16), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    for (i = 0; i < k->nconns; i++) {
        struct tsl_cfg cfg;
        struct tsl_conn *c;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = k->bytes;
        cfg.a2b.wsize = k->wsize;
        cfg.a2b.wrandom = true;
        cfg.nodelay = true;
        cfg.seed = k->wseed * 100u + i;
        cfg.close_mode = TSL_CLOSE_PLAIN;
        cfg.watchdog_ms = 120000;
        c = tsl_connect(&run, a, &cfg);
        assert_non_null(c);
        /* segments of at most wsize bytes even when writes queue up
         * behind a closed window (they would be coalesced into larger
         * ones): the sender's MSS (TCP_MAXSEG) is wsize */
        wisp_tcp_set_user_mss(c->ep[0].pcb, (uint16_t)k->wsize);
    }
    /* until every connection is accepted: the application takes nothing */
    for (i = 0; i < 100 && run.accepted < k->nconns; i++) {
        assert_true(sim_run_for(w, 1000));
    }
    assert_int_equal(run.accepted, k->nconns);
    for (i = 0; i < k->nconns; i++) {
        struct tsl_ep *ep = &run.conns[i]->ep[1];
        assert_non_null(ep->pcb);
        ep->refuse = !k->mailbox;
        g_mbox[i].ep = ep;
        g_mbox[i].deliver = ep->pcb->recv;
        g_mbox[i].on = k->mailbox;
        if (k->mailbox) {
            wisp_tcp_recv(ep->pcb, mbox_recv);
        }
    }
    /* the stall: the sender fills every window with tiny segments */
    assert_true(sim_run_for(w, (uint64_t)k->stall_ms * 1000u));
    printf("  after the %u ms stall:", (unsigned)k->stall_ms);
    print_ctrs("b", sb);
    /* then a slow reader: a little every 10 ms */
    t_end = sim_now_us(w) + 300 * SEC;
    while (!done && sim_now_us(w) < t_end) {
        unsigned busy = 0;
        for (i = 0; i < k->nconns; i++) {
            struct tsl_ep *ep = &run.conns[i]->ep[1];
            if (k->mailbox) {
                mbox_read(&g_mbox[i], 8);
                busy += g_mbox[i].n;
            } else {
                ep->refuse = !ep->refuse; /* reads every other 10 ms */
                if (!ep->refuse && ep->pcb != NULL) {
                    wisp_tcp_recv_retry(ep->pcb); /* the reader asks for what it refused */
                }
            }
        }
        assert_true(sim_run_for(w, 10000));
        done = busy == 0 && run.ndone + run.nfailed >= k->nconns;
        if (run.nfailed > 0) {
            break;
        }
    }
    if (!done || run.nfailed > 0) {
        tsl_run_print_failures(&run, stderr);
        for (i = 0; i < run.nconns; i++) {
            tsl_conn_print(run.conns[i], stderr);
        }
        print_ctrs("a", sim_stack(a));
        print_ctrs("b", sb);
        fail_msg("%u transfers of %u bytes in 1..%u-byte segments did not complete", k->nconns,
                 (unsigned)k->bytes, (unsigned)k->wsize);
    }
    printf("  %u x %u bytes in 1..%u-byte segments done at %.3f s\n", k->nconns, (unsigned)k->bytes,
           (unsigned)k->wsize, (double)sim_now_us(w) / 1e6);
    print_ctrs("a (sender)", sim_stack(a));
    print_ctrs("b (receiver)", sb);
    /* nothing the window admitted was dropped for want of memory */
    assert_int_equal(tsl_ctr(sb, "tcp.drop.rxbudget"), 0);
    assert_int_equal(tsl_ctr(sb, "tcp.ooseq.drop"), 0);
    assert_int_equal(tsl_ctr(sb, "tcp.drop.refused"), 0);
    assert_int_equal(tsl_ctr(sb, "netif.rx.nomem"), 0);
    if (k->loss == 0.0) {
        /* so the sender resent nothing but zero-window probes (the one
         * octet beyond a closed window, RFC 9293 §3.8.6.1, not admitted) */
        unsigned long rtx = tsl_ctr(sim_stack(a), "tcp.retransmit");
        unsigned long probes = tsl_ctr(sim_stack(a), "tcp.persist.probe");
        if (rtx > probes) {
            fail_msg("the sender retransmitted %lu segments, %lu of them window probes", rtx, probes);
        }
    }
    for (i = 0; i < run.nconns; i++) {
        assert_true(run.conns[i]->ep[1].rx_got == k->bytes);
    }
    assert_true(tsl_settle(w, base, 300 * SEC, stderr));
    tsl_fini(&run);
    ST_FREE(w);
}

/* One connection, the application refuses everything for 2 s (the stack
 * holds a whole window of 1..64-byte segments), then reads slowly. */
static void rxwin_refused_tiny_segments(void **state)
{
    static const struct rxwin_case k = { 121, 1, 768 * KB, 64, false, 2000, 0.0 };
    (void)state;
    rxwin_run(&k);
}

/* One connection into a netconn-like mailbox of 64 pbufs. */
static void rxwin_mailbox_tiny_segments(void **state)
{
    static const struct rxwin_case k = { 122, 1, 768 * KB, 64, true, 2000, 0.0 };
    (void)state;
    rxwin_run(&k);
}

/* Four connections at once (the fair shares of the receive blocks). */
static void rxwin_four_connections(void **state)
{
    static const struct rxwin_case k1 = { 123, 4, 384 * KB, 64, false, 1500, 0.0 };
    static const struct rxwin_case k2 = { 124, 4, 384 * KB, 64, true, 1500, 0.0 };
    (void)state;
    rxwin_run(&k1);
    rxwin_run(&k2);
}

/* Eight connections into mailboxes of 64 pbufs: the applications alone
 * hold 8 x 64 blocks, the whole receive pool of the host build. */
static void rxwin_eight_mailboxes(void **state)
{
    static const struct rxwin_case k = { 126, 8, 128 * KB, 64, true, 1500, 0.0 };
    (void)state;
    rxwin_run(&k);
}

/* 1 % loss: the out-of-order queue holds tiny segments too. */
static void rxwin_tiny_segments_with_loss(void **state)
{
    static const struct rxwin_case k = { 125, 1, 512 * KB, 64, false, 1000, 0.01 };
    (void)state;
    rxwin_run(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rxwin_refused_tiny_segments),
        cmocka_unit_test(rxwin_mailbox_tiny_segments),
        cmocka_unit_test(rxwin_four_connections),
        cmocka_unit_test(rxwin_tiny_segments_with_loss),
        cmocka_unit_test(rxwin_eight_mailboxes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
