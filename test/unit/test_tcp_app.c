/**
 * @file test_tcp_app.c
 * Segment-level tests of the TCP raw API seen from the application: calls
 * made from inside callbacks (output, write, close from the sent callback
 * see the window of the ACK being processed), write lengths that can
 * never fit, refused data beyond 64 KB, SYN and SYN-ACK segments the stack
 * could not send, the transmit reserve, and the core-ownership check at
 * the top of every raw API function. Each test is named after the rule it
 * checks.
 */
#include "tcp_testlib.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wisp/sys.h"
#include "wisp/tcpip.h"

static uint8_t g_data[WISP_TCP_SND_BUF + 65536];

/* Give back the pbufs the test held. */
static void release_tx(struct wisp_pbuf **hold, unsigned n)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        wisp_pbuf_free(hold[i]);
    }
}

/* a after b in sequence space (RFC 9293 §3.4) */
#define TCP_SEQ_GT_T(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) > 0)

static void t_fresh(struct tt *t)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
}

/* --------------------------------------- application calls in callbacks */

/* What the sent callback does (the test's application). */
enum sent_action { SENT_OUTPUT, SENT_WRITE_OUTPUT, SENT_CLOSE };

struct sent_app {
    struct tt *t;
    enum sent_action action;
    unsigned calls;
    uint32_t written;
};

static wisp_err_t sent_app_cb(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct sent_app *a = (struct sent_app *)arg;
    a->calls++;
    a->t->sent_total += len;
    switch (a->action) {
    case SENT_OUTPUT:
        assert_int_equal(wisp_tcp_output(pcb), WISP_OK);
        break;
    case SENT_WRITE_OUTPUT:
        assert_int_equal(wisp_tcp_write(pcb, g_data + a->written, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
        a->written += 3000;
        assert_int_equal(wisp_tcp_output(pcb), WISP_OK);
        break;
    case SENT_CLOSE:
        assert_int_equal(wisp_tcp_close(pcb), WISP_OK);
        a->t->pcb = NULL; /* the stack's now */
        break;
    }
    return WISP_OK;
}

/* Passive open (peer MSS 1000, no options), 40000 bytes written: the
 * initial window (RFC 6928: 10 segments) goes out, [0, 10000) relative. The
 * peer then acknowledges 5000 bytes with a window of 5000: its right edge
 * stays at 10000. Whatever the sent callback does (output, write + output,
 * close), no segment may reach beyond that edge: the ACK's window is taken
 * before the callback runs, and output asked for inside it waits for the
 * end of the segment's processing. */
static void sent_callback_sees_new_window(enum sent_action action)
{
    struct tt t;
    struct tt_seg g;
    struct sent_app app;
    uint32_t right, base;
    unsigned beyond = 0, data_segs = 0;
    t_fresh(&t);
    t.o.mss = 1000;
    t.wnd = 20000;
    tt_open_passive(&t);
    base = t.rcv;
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 40000, WISP_TCP_WRITE_COPY), WISP_OK);
    app.written = 40000;
    tu_advance(t.e, 0);
    while (tt_pop(&t, &g)) {
        assert_true(g.seq + g.len - base <= 20000u);
    }
    /* ACK 5000 with window 5000: right edge 10000 */
    memset(&app, 0, sizeof(app));
    app.t = &t;
    app.action = action;
    app.written = 40000;
    wisp_tcp_arg(t.pcb, &app);
    wisp_tcp_sent(t.pcb, sent_app_cb);
    t.rcv = base + 5000u;
    t.wnd = 5000;
    right = t.rcv + t.wnd;
    tt_ack(&t);
    assert_int_equal(app.calls, 1);
    assert_int_equal(t.sent_total, 5000);
    while (tt_pop(&t, &g)) {
        if (g.len > 0) {
            data_segs++;
            if (TCP_SEQ_GT_T(g.seq + g.len, right)) {
                beyond++;
            }
        }
    }
    assert_int_equal(beyond, 0);
    assert_int_equal(data_segs, 0); /* 10000 sent, edge 10000: nothing new fits */
    /* the window opens: data flows again up to the new edge only */
    t.wnd = 8000;
    right = t.rcv + t.wnd;
    if (action != SENT_CLOSE) {
        wisp_tcp_arg(t.pcb, &t);
        wisp_tcp_sent(t.pcb, tt_rec_sent);
    }
    tt_ack(&t);
    while (tt_pop(&t, &g)) {
        if (g.len > 0) {
            data_segs++;
            assert_false(TCP_SEQ_GT_T(g.seq + g.len, right));
        }
    }
    assert_true(data_segs > 0);
    if (t.pcb == NULL) {
        /* closed from the callback: the peer resets the orphan */
        tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    }
    tt_done(&t);
}

/* RFC 9293 §3.10.7.4 fifth step (SND.WND from the ACK) before the sent
 * callback: wisp_tcp_output called from it respects the peer's new right
 * edge. */
static void test_rfc9293_3_10_7_4_output_from_sent_callback_respects_new_window(void **state)
{
    (void)state;
    sent_callback_sees_new_window(SENT_OUTPUT);
}

/* The same with write + output from the sent callback. */
static void test_rfc9293_3_10_7_4_write_output_from_sent_callback_respects_new_window(void **state)
{
    (void)state;
    sent_callback_sees_new_window(SENT_WRITE_OUTPUT);
}

/* The same with close from the sent callback (the FIN queues behind the
 * data; nothing beyond the edge). */
static void test_rfc9293_3_10_7_4_close_from_sent_callback_respects_new_window(void **state)
{
    (void)state;
    sent_callback_sees_new_window(SENT_CLOSE);
}

/* RFC 9293 §3.10.7.4 first step: a receiver with a zero window accepts
 * only SEG.SEQ = RCV.NXT. After a zero-window probe (one octet beyond the
 * peer's RCV.NXT), our ACKs carry SEG.SEQ = SND.UNA + SND.WND (the peer's
 * right edge), not SND.NXT, or the peer would drop them (and with them a
 * window update of ours). */
static void test_rfc9293_3_10_7_4_ack_after_zero_window_probe_is_acceptable(void **state)
{
    struct tt t;
    struct tt_seg g;
    bool probed = false;
    unsigned i;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    t.wnd = 0;
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect_none(&t); /* zero window: nothing goes */
    for (i = 0; i < 3000 && !probed; i += 10) {
        tu_advance(t.e, 10);
        while (tt_pop(&t, &g)) {
            if (g.len == 1) {
                probed = true;
                assert_int_equal(g.seq, t.rcv); /* the probe octet at our RCV.NXT */
            }
        }
    }
    assert_true(probed);
    /* we keep our window at zero: the probe octet is not taken; our data
     * makes the stack ACK at once (two full segments) */
    tt_data(&t, g_data, 1460);
    tt_data(&t, g_data + 1460, 1460);
    tt_expect(&t, &g);
    assert_int_equal(g.len, 0);
    assert_int_equal(g.ack, t.snd);
    assert_int_equal(g.seq, t.rcv); /* acceptable to a zero window, not SND.NXT = RCV.NXT + 1 */
    tt_done(&t);
}

/* ---------------------------------------------------------- write limits */

/* A write longer than WISP_TCP_SND_BUF can never be taken: WISP_ERR_VAL
 * (not WISP_ERR_MEM, which means "retry later"), nothing queued; one that
 * fits the free buffer later gets WISP_ERR_MEM until then. */
static void test_write_val_for_length_that_never_fits(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, WISP_TCP_SND_BUF + 1u, WISP_TCP_WRITE_COPY), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, WISP_TCP_SND_BUF + 1u, 0), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 0xffffffffu, 0), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), WISP_TCP_SND_BUF);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 1000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, WISP_TCP_SND_BUF, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    tt_done(&t);
}

/* Copies never take the last transmit blocks (TCP's transmit reserve):
 * with the pool drained to the reserve a copying write gets WISP_ERR_MEM,
 * and a pure ACK and a RST can still be built. */
static void test_write_leaves_transmit_reserve_for_acks(void **state)
{
    struct tt t;
    struct wisp_pbuf *hold[WISP_PBUF_TX_COUNT + WISP_PBUF_SMALL_COUNT];
    const struct wisp_pool *tx;
    unsigned n = 0, i, freeblk;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    tx = &t.e->s->pool[WISP_POOL_PBUF_TX];
    /* the application's own use leaves 4 transmit blocks (and no small one) */
    while ((uint32_t)tx->count - tx->used > 4u || t.e->s->pool[WISP_POOL_PBUF_SMALL].used <
                                                      t.e->s->pool[WISP_POOL_PBUF_SMALL].count) {
        hold[n] = wisp_pbuf_alloc(t.e->s, WISP_LAYER_RAW, 64, WISP_PBUF_RAM);
        assert_non_null(hold[n]);
        n++;
    }
    freeblk = (uint32_t)tx->count - tx->used;
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 4000, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    assert_int_equal((uint32_t)tx->count - tx->used, freeblk); /* nothing taken */
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), WISP_TCP_SND_BUF);
    /* data in: the ACK goes out (header from the reserve) */
    tt_data(&t, g_data, 1460);
    tt_data(&t, g_data + 1460, 1460);
    tt_expect_ack(&t, t.snd);
    for (i = 0; i < n; i++) {
        wisp_pbuf_free(hold[i]);
    }
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 4000, WISP_TCP_WRITE_COPY), WISP_OK);
    tt_done(&t);
}

/* A write refused for want of buffers (not of send buffer) is retried
 * from the poll callback: it comes soon after acknowledged data gave
 * buffers back, not only after the poll interval. */
static void test_poll_soon_after_buffers_given_back(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_pbuf *hold[WISP_PBUF_TX_COUNT + WISP_PBUF_SMALL_COUNT];
    const struct wisp_pool *tx;
    unsigned n = 0;
    uint32_t acked = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    wisp_tcp_poll(t.pcb, tt_rec_poll, 60); /* every 30 s */
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 14000, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    while (tt_pop(&t, &g)) {
        acked = g.seq + g.len;
    }
    assert_int_equal(acked - t.rcv, 14000);
    tx = &t.e->s->pool[WISP_POOL_PBUF_TX];
    while ((uint32_t)tx->count - tx->used > 4u || t.e->s->pool[WISP_POOL_PBUF_SMALL].used <
                                                      t.e->s->pool[WISP_POOL_PBUF_SMALL].count) {
        hold[n] = wisp_pbuf_alloc(t.e->s, WISP_LAYER_RAW, 64, WISP_PBUF_RAM);
        assert_non_null(hold[n]);
        n++;
    }
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 4000, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    release_tx(hold, n);
    tu_advance(t.e, 100);
    assert_int_equal(t.polls, 0); /* no buffer given back by TCP yet */
    t.rcv = acked;
    tt_ack(&t); /* frees the copies of 14000 bytes */
    tu_advance(t.e, 20);
    assert_int_equal(t.polls, 1);
    tt_done(&t);
}

/* ------------------------------------------------------ receive budget */

/* The receive blocks TCP keeps free for ACKs and control segments
 * (tcp_priv.h TCP_RX_RESERVE, restated: 1/16 of the pool, at least 2). */
#define RX_RESERVE (WISP_PBUF_RX_COUNT / 16u > 2u ? WISP_PBUF_RX_COUNT / 16u : 2u)

/* Hold receive blocks until only keep are free. */
static unsigned hold_rx(struct tt *t, struct wisp_pbuf **hold, unsigned keep)
{
    const struct wisp_pool *rx = &t->e->s->pool[WISP_POOL_PBUF_RX];
    unsigned n = 0;
    while ((unsigned)(rx->count - rx->used) > keep) {
        hold[n] = wisp_pbuf_alloc_rx(t->e->s, 60);
        assert_non_null(hold[n]);
        n++;
    }
    return n;
}

/* A window never promises more new space than the free receive blocks
 * (minus the reserve for ACKs) can hold, with full-size segments of the
 * peer: here 8 blocks' worth. When blocks are given back elsewhere (not by
 * this connection), the window is announced larger without any segment
 * from the peer; the right edge never moves back (RFC 9293 §3.8.6). */
static void test_receive_window_within_free_receive_blocks(void **state)
{
    struct tt t;
    struct tt_seg g, sa;
    struct wisp_pbuf *hold[WISP_PBUF_RX_COUNT];
    struct wisp_tcp_info info;
    unsigned n, i;
    uint32_t per_blk = 1460u - (WISP_TCP_TIMESTAMPS ? 12u : 0u), wnd = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    t.o.ws = 7;
    t.o.ts = true;
    n = hold_rx(&t, hold, RX_RESERVE + 8u);
    sa = tt_open_passive(&t);
    assert_true(sa.wnd > 0);
    assert_true(sa.wnd <= 8u * per_blk);
    wisp_tcp_get_info(t.pcb, &info);
    /* data: the ACKs keep the right edge within the free blocks (the
     * blocks of these two segments are free again: the application took
     * them) */
    tt_data(&t, g_data, per_blk);
    tt_data(&t, g_data + per_blk, per_blk);
    tt_expect(&t, &g);
    wnd = (uint32_t)g.wnd << info.rcv_wscale;
    assert_true(wnd <= 8u * per_blk);
    /* another connection's application gives 100 blocks back */
    for (i = 0; i < 100u; i++) {
        wisp_pbuf_free(hold[--n]);
    }
    tu_advance(t.e, 400);
    wnd = 0;
    while (tt_pop(&t, &g)) {
        wnd = (uint32_t)g.wnd << info.rcv_wscale;
    }
    /* (or most of the buffer, when that is smaller: no window scaling) */
    assert_true(wnd >= WISP_MIN(90u * per_blk, (uint32_t)WISP_TCP_WND * 3u / 4u));
    while (n > 0) {
        wisp_pbuf_free(hold[--n]);
    }
    tt_done(&t);
}

/* In-order data that would take the last half of the reserve (segments
 * smaller than the window's full-size ones, or blocks held elsewhere) is
 * dropped, counted, and answered with an ACK that does not cover it: the
 * blocks stay for the ACKs that free the transmit buffers. */
static void test_inorder_data_dropped_below_half_the_rx_reserve(void **state)
{
    struct tt t;
    struct wisp_pbuf *hold[WISP_PBUF_RX_COUNT];
    unsigned n;
    uint32_t before;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    n = hold_rx(&t, hold, RX_RESERVE / 2u); /* the segment's own block makes it one less */
    before = t.rx_len;
    tt_send(&t, TT_ACK | TT_PSH, t.snd, t.rcv, g_data, 500);
    assert_int_equal(t.rx_len, before);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_RXBUDGET), 1);
    tt_expect_ack(&t, t.snd); /* not t.snd + 500 */
    while (n > 0) {
        wisp_pbuf_free(hold[--n]);
    }
    tt_data(&t, g_data, 500); /* resent: taken */
    assert_int_equal(t.rx_len, before + 500u);
    tt_done(&t);
}

/* ------------------------------------------------------- refused data */

#if WISP_TCP_WND > 100000
/* The application refuses data: everything in the window is kept (as a
 * short queue of chains, each within a pbuf's 65535 bytes), acknowledged,
 * and handed over in order once the application takes it again -- also
 * beyond 64 KB, where a single chain could hold no more. */
static void test_refused_data_beyond_64kb_is_kept_in_order(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t total = 100000u, off = 0, last_ack = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    t.o.ws = 7;
    tt_open_passive(&t);
    t.refuse = true;
    while (off < total) {
        uint16_t n = (uint16_t)WISP_MIN(1460u, total - off);
        tt_data(&t, g_data + off, n);
        off += n;
    }
    tu_advance(t.e, WISP_TCP_DELACK_MS);
    while (tt_pop(&t, &g)) {
        last_ack = g.ack;
    }
    assert_int_equal(last_ack, t.snd); /* all of it acknowledged: nothing dropped */
    assert_int_equal(TU_CTR(t.e, TCP_DROP_REFUSED), 0);
    assert_int_equal(t.rx_len, 0);
    t.refuse = false;
    tu_advance(t.e, 20);
    assert_int_equal(t.rx_len, total);
    assert_memory_equal(t.rx, g_data, total);
    /* and the stream goes on behind it */
    tt_data(&t, g_data + total, 500);
    assert_int_equal(t.rx_len, total + 500u);
    assert_memory_equal(t.rx + total, g_data + total, 500);
    tt_done(&t);
}
#endif

/* ------------------------------------------- control segments not sent */

/* Take every transmit block (small and full) for the test. */
static unsigned drain_tx(struct tt *t, struct wisp_pbuf **hold, unsigned cap)
{
    unsigned n = 0;
    struct wisp_pbuf *p;
    while (n < cap && (p = wisp_pbuf_alloc(t->e->s, WISP_LAYER_RAW, 64, WISP_PBUF_RAM)) != NULL) {
        hold[n++] = p;
    }
    return n;
}

/* A SYN the stack itself could not send (no transmit buffer: no loss in
 * the network) goes out as soon as it can, within TCP_OUTPUT_RETRY_MS, not
 * after the retransmission timeout (RFC 6298 §5.5 backoff is for lost
 * segments); it counts as no retransmission. */
static void test_syn_refused_locally_is_retried_soon(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_pbuf *hold[WISP_PBUF_TX_COUNT + WISP_PBUF_SMALL_COUNT];
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    unsigned n;
    (void)state;
    t_fresh(&t);
    t.pcb = wisp_tcp_new(t.e->s);
    tt_callbacks(&t, t.pcb);
    n = drain_tx(&t, hold, WISP_ARRAY_SIZE(hold));
    assert_int_equal(wisp_tcp_connect(t.pcb, &dst, t.pport, tt_rec_connected), WISP_OK);
    tt_expect_none(&t);
    tu_advance(t.e, 5);
    release_tx(hold, n);
    tu_advance(t.e, 10);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN);
    assert_int_equal(TU_CTR(t.e, TCP_SYN_RETRANSMIT), 0);
    /* the handshake completes; the RTO runs from the SYN that left */
    t.port = g.sport;
    t.rcv = g.seq + 1u;
    tt_send(&t, TT_SYN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    tt_expect_ack(&t, t.snd);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_done(&t);
}

/* The same for the SYN-ACK of the SYN queue (passive open). */
static void test_synack_refused_locally_is_retried_soon(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_pbuf *hold[WISP_PBUF_TX_COUNT + WISP_PBUF_SMALL_COUNT];
    unsigned n;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    n = drain_tx(&t, hold, WISP_ARRAY_SIZE(hold));
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect_none(&t);
    tu_advance(t.e, 5);
    release_tx(hold, n);
    tu_advance(t.e, 10);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(g.ack, t.snd + 1u);
    assert_int_equal(TU_CTR(t.e, TCP_SYN_RETRANSMIT), 0);
    t.snd++;
    t.rcv = g.seq + 1u;
    tt_ack(&t);
    assert_non_null(t.pcb);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_done(&t);
}

/* ------------------------------------------------- core ownership check */

#if WISP_DEBUG
struct own_probe {
    struct tt *t;
    struct wisp_tcp_pcb *lpcb;
    unsigned which;
};

static wisp_err_t own_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    (void)arg;
    (void)newpcb;
    return err;
}

static const char *const own_names[] = {
    "wisp_tcp_new",    "wisp_tcp_arg",   "wisp_tcp_bind",  "wisp_tcp_listen",   "wisp_tcp_accept",
    "wisp_tcp_connect", "wisp_tcp_write", "wisp_tcp_output", "wisp_tcp_recv",    "wisp_tcp_recved",
    "wisp_tcp_sent",   "wisp_tcp_err",   "wisp_tcp_poll",  "wisp_tcp_close",    "wisp_tcp_shutdown",
    "wisp_tcp_abort",  "wisp_tcp_nodelay", "wisp_tcp_keepalive", "wisp_tcp_set_dscp", "wisp_tcp_set_ttl",
};

/* In a child: call raw API function number which without owning the core. */
static void own_call(struct own_probe *o)
{
    struct wisp_tcp_pcb *pcb = o->t->pcb;
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    wisp_err_t err;
    switch (o->which) {
    case 0: (void)wisp_tcp_new(o->t->e->s); break;
    case 1: wisp_tcp_arg(pcb, NULL); break;
    case 2: (void)wisp_tcp_bind(pcb, NULL, 7777); break;
    case 3: (void)wisp_tcp_listen(pcb, 1, &err); break;
    case 4: wisp_tcp_accept(o->lpcb, own_accept); break;
    case 5: (void)wisp_tcp_connect(pcb, &dst, 80, NULL); break;
    case 6: (void)wisp_tcp_write(pcb, g_data, 10, WISP_TCP_WRITE_COPY); break;
    case 7: (void)wisp_tcp_output(pcb); break;
    case 8: wisp_tcp_recv(pcb, tt_rec_recv); break;
    case 9: wisp_tcp_recved(pcb, 10); break;
    case 10: wisp_tcp_sent(pcb, tt_rec_sent); break;
    case 11: wisp_tcp_err(pcb, tt_rec_err); break;
    case 12: wisp_tcp_poll(pcb, tt_rec_poll, 1); break;
    case 13: (void)wisp_tcp_close(pcb); break;
    case 14: (void)wisp_tcp_shutdown(pcb, false, true); break;
    case 15: wisp_tcp_abort(pcb); break;
    case 16: wisp_tcp_nodelay(pcb, true); break;
    case 17: wisp_tcp_keepalive(pcb, true, 0, 0, 0); break;
    case 18: wisp_tcp_set_dscp(pcb, 46); break;
    default: wisp_tcp_set_ttl(pcb, 9); break;
    }
}

/* Fork, call, collect stderr; true when the child aborted with the
 * ownership message naming the function. */
static bool own_aborts(struct own_probe *o)
{
    int fds[2], status = 0;
    char out[2048];
    size_t got = 0;
    ssize_t r;
    pid_t pid;
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        own_call(o);
        _exit(0);
    }
    close(fds[1]);
    while (got + 1 < sizeof(out) && (r = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0) {
        got += (size_t)r;
    }
    out[got] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)) {
        return false;
    }
    return strstr(out, own_names[o->which]) != NULL && strstr(out, "outside the core context") != NULL;
}
#endif

/* Every raw API function checks that its caller owns the core of a stack
 * run by a stack thread (WISP_CORE_ASSERT_OWNER, debug builds): with the
 * core lock registered and not held, each of them aborts naming itself;
 * with the lock held they run. */
static void test_raw_api_checks_core_owner(void **state)
{
#if WISP_DEBUG
    struct tt t;
    struct own_probe o;
    wisp_sys_mutex_t lock;
    unsigned i;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    t.pcb = wisp_tcp_new(t.e->s);
    assert_non_null(t.pcb);
    tt_callbacks(&t, t.pcb);
    assert_int_equal(wisp_sys_mutex_new(&lock), WISP_OK);
    wisp_tcpip_set_owner(t.e->s, &lock); /* what wisp_tcpip_start does */
    o.t = &t;
    o.lpcb = t.lpcb;
    for (i = 0; i < WISP_ARRAY_SIZE(own_names); i++) {
        o.which = i;
        if (!own_aborts(&o)) {
            fail_msg("%s did not check the core owner", own_names[i]);
        }
    }
    /* the owner may call */
    wisp_sys_mutex_lock(&lock);
    wisp_tcp_nodelay(t.pcb, true);
    wisp_tcp_set_ttl(t.pcb, 9);
    wisp_sys_mutex_unlock(&lock);
    wisp_tcpip_set_owner(t.e->s, NULL);
    wisp_sys_mutex_free(&lock);
    tt_done(&t);
#else
    (void)state;
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc9293_3_10_7_4_output_from_sent_callback_respects_new_window),
        cmocka_unit_test(test_rfc9293_3_10_7_4_write_output_from_sent_callback_respects_new_window),
        cmocka_unit_test(test_rfc9293_3_10_7_4_close_from_sent_callback_respects_new_window),
        cmocka_unit_test(test_rfc9293_3_10_7_4_ack_after_zero_window_probe_is_acceptable),
        cmocka_unit_test(test_write_val_for_length_that_never_fits),
        cmocka_unit_test(test_write_leaves_transmit_reserve_for_acks),
        cmocka_unit_test(test_poll_soon_after_buffers_given_back),
        cmocka_unit_test(test_receive_window_within_free_receive_blocks),
        cmocka_unit_test(test_inorder_data_dropped_below_half_the_rx_reserve),
#if WISP_TCP_WND > 100000
        cmocka_unit_test(test_refused_data_beyond_64kb_is_kept_in_order),
#endif
        cmocka_unit_test(test_syn_refused_locally_is_retried_soon),
        cmocka_unit_test(test_synack_refused_locally_is_retried_soon),
        cmocka_unit_test(test_raw_api_checks_core_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
