/**
 * @file test_tcp_zero_window.c
 * A receiver whose application stops consuming must close its window and
 * keep it closed (RFC 9293 §3.8.6, §3.10.7.4; RFC 1122 §4.2.2.17), on the
 * simulated wire (harness: tcp_simlib).
 *
 * The sender writes 1 MB. The receiver either takes the data but never
 * calls wisp_tcp_recved (hold), or refuses it in its recv callback
 * (WISP_ERR_MEM: the stack keeps it and re-offers it every 20 ms). Once
 * the sender sees a zero window, 60 s of virtual time pass; during them
 * the bytes the sender got acknowledged must not grow (they are exactly
 * the window that was offered: WISP_TCP_WND), every segment of the
 * receiver must carry window 0, the sender's zero-window probes must be
 * answered (RFC 9293 §3.8.6.1), and the receiver's pools must not grow.
 * On the wire a probe octet is also injected: the answer must be an ACK of
 * window 0 that does not take it. With hold, 500 bytes given back (less
 * than min(RCV.BUFF / 2, MSS)) must not reopen the window (receiver SWS
 * avoidance, RFC 9293 §3.8.6.2.2). Then the application reads everything
 * and the transfer completes byte-exact with the pools back at baseline.
 * Cases: two stacks on the wire (hold, refuse), one stack talking to
 * itself over its own address (hold, refuse: the loopback path, no wire),
 * and odd-sized segments on a lossy, reordering wire (hold, refuse).
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define MB (1024u * 1024u)
#define SEC 1000000ull
#define STALL_S 60u
#define SAMPLE_MS 150u
#define ZW_SMALL 500u /* below min(RCV.BUFF / 2, MSS) */

enum zw_mode { ZW_HOLD, ZW_REFUSE };

/* The sender (side A) sees a zero window after data was acknowledged. */
static bool sender_window_closed(void *arg)
{
    struct tsl_conn *c = arg;
    struct wisp_tcp_info in;
    if (c->ep[0].pcb == NULL || c->ep[1].pcb == NULL || c->failed) {
        return c->failed;
    }
    wisp_tcp_get_info(c->ep[0].pcb, &in);
    return in.bytes_acked > 0 && in.snd_wnd == 0 && in.unacked <= 1u;
}

static uint64_t ctr(struct sim_node *n, unsigned id)
{
    return sim_stack(n)->ctr[id];
}

/* Segments of the log from index mark on: from the sender (probes), from
 * the receiver (answers), and receiver segments with a non-zero window. */
struct zw_wire {
    unsigned from_a, from_b, b_open, a_data;
};

static void zw_count(const struct tsl_log *log, size_t mark, const struct sim_node *a, struct zw_wire *z)
{
    size_t i;
    memset(z, 0, sizeof(*z));
    for (i = mark; i < log->n; i++) {
        const struct tsl_logent *e = &log->e[i];
        if (e->from == a) {
            z->from_a++;
            if (e->seg.plen > 0) {
                z->a_data++;
            }
        } else {
            z->from_b++;
            if (e->seg.wnd != 0) {
                z->b_open++;
            }
        }
    }
}

/* Inject a zero-window probe of one (wrong) octet from the sender, a copy
 * of its last probe with a newer timestamp: the receiver must answer with
 * an ACK of window 0 that does not take the octet (RFC 9293 §3.10.7.4:
 * with RCV.WND = 0 no data is acceptable; the ACK is processed, the text
 * trimmed). Returns the receiver's answers. */
static unsigned zw_forced_probe(struct sim_world *w, struct tsl_log *log, struct sim_node *a, unsigned *bad)
{
    struct tsl_seg sg;
    uint8_t frame[200], opts[12], octet = 0xA5u;
    size_t i, len, mark;
    unsigned answers = 0;
    bool found = false;
    for (i = log->n; i > 0; i--) {
        if (log->e[i - 1u].from == a && log->e[i - 1u].seg.plen > 0) {
            sg = log->e[i - 1u].seg;
            found = true;
            break;
        }
    }
    assert_true(found);
    opts[0] = 1;
    opts[1] = 1;
    opts[2] = 8;
    opts[3] = 10;
    wisp_wr32(opts + 4, sg.tsval + 1u);
    wisp_wr32(opts + 8, sg.tsecr);
    len = tsl_build(frame, sizeof(frame), &sg, opts, sg.ts ? 12u : 0u, &octet, 1);
    assert_true(len > 0);
    mark = log->n;
    assert_true(tsl_inject(a, frame, len));
    assert_true(sim_run_for(w, 50000));
    *bad = 0;
    for (i = mark; i < log->n; i++) {
        const struct tsl_logent *e = &log->e[i];
        if (e->from != a) {
            answers++;
            if (e->seg.wnd != 0 || e->seg.ack != sg.seq || e->seg.plen != 0) {
                (*bad)++;
            }
        }
    }
    if (answers == 0 || *bad > 0) {
        tsl_log_print(log, mark, stdout);
    }
    return answers;
}

/* One case: the receiver's mode, the path, and how the sender writes and
 * the wire behaves while the window fills. */
struct zw_case {
    enum zw_mode mode;
    bool loopback;           /* one stack, connecting to its own address */
    double loss, reorder;    /* wire impairments (two stacks only) */
    uint32_t wsize;          /* write size (the maximum with wrandom) */
    bool wrandom, nodelay;
};

static void zero_window_stall(uint64_t seed, const struct zw_case *zc)
{
    enum zw_mode mode = zc->mode;
    bool loopback = zc->loopback;
    struct sim_world *w = sim_world_new(seed);
    struct sim_node *a, *b;
    struct tsl_run run;
    struct tsl_conn *c;
    struct tsl_cfg cfg;
    struct tsl_log log;
    struct sim_link_cfg l;
    struct wisp_tcp_info ia, ib;
    unsigned base[2], pools_b0, pools_b1, k, grew = 0;
    uint64_t acked0, rcvd0, persist0, tx_b0, rx_b0, t0, t_release;
    uint64_t max_acked = 0;
    struct zw_wire z;
    size_t mark;

    memset(&log, 0, sizeof(log));
    log.payload_too = true;
    sim_link_defaults(&l);
    l.bandwidth_bps = 100000000u;
    l.latency_us = 1000;
    l.loss = zc->loss;
    l.reorder = zc->reorder;
    sim_set_link(w, &l);
    a = st_node(w, "a", 1);
    b = st_node(w, "b", 2);
    tsl_init(&run, w);
    assert_int_equal(tsl_listen(&run, b, 5001, 4), WISP_OK);
    assert_true(sim_run_for(w, 1000));
    tsl_baseline(w, base);
    memset(&cfg, 0, sizeof(cfg));
    cfg.a2b.bytes = 1 * MB;
    cfg.a2b.wsize = zc->wsize != 0 ? zc->wsize : 1460u;
    cfg.a2b.wrandom = zc->wrandom;
    cfg.nodelay = zc->nodelay;
    cfg.seed = seed;
    c = tsl_connect(&run, loopback ? b : a, &cfg);
    assert_non_null(c);
    /* set before the accept: the receiver never consumes from the start */
    if (mode == ZW_HOLD) {
        c->ep[1].hold = true;
    } else {
        c->ep[1].refuse = true;
    }
    assert_true(sim_run_until(w, sender_window_closed, c, 20 * SEC));
    assert_false(c->failed);
    /* let the last ACKs and the first probe settle */
    assert_true(sim_run_for(w, 2 * SEC));
    assert_false(c->failed);
    assert_non_null(c->ep[0].pcb);
    assert_non_null(c->ep[1].pcb);
    wisp_tcp_get_info(c->ep[0].pcb, &ia);
    wisp_tcp_get_info(c->ep[1].pcb, &ib);
    acked0 = ia.bytes_acked;
    rcvd0 = ib.bytes_received;
    t0 = sim_now_us(w);
    pools_b0 = tsl_pools_used(w, 1);
    persist0 = ctr(loopback ? b : a, WISP_CTR_TCP_PERSIST);
    tx_b0 = ctr(b, WISP_CTR_TCP_TX);
    rx_b0 = ctr(b, WISP_CTR_TCP_RX);
    printf("  %s %s (loss %.2f, reorder %.2f, writes %s%u%s): window closed at %.3f s: %llu bytes acknowledged, %llu received, %llu taken by the app, "
           "sender snd_wnd %lu, receiver rcv_wnd %lu\n",
           loopback ? "loopback" : "wire", mode == ZW_HOLD ? "hold" : "refuse", zc->loss, zc->reorder,
           zc->wrandom ? "1.." : "", cfg.a2b.wsize, zc->nodelay ? ", nodelay" : "", (double)t0 / 1e6,
           (unsigned long long)acked0, (unsigned long long)rcvd0, (unsigned long long)c->ep[1].rx_got,
           (unsigned long)ia.snd_wnd, (unsigned long)ib.rcv_wnd);

    sim_set_tap(w, tsl_log_tap, &log);
    mark = log.n;
    /* 60 s of an application that never consumes, sampled every 150 ms */
    for (k = 0; k < STALL_S * 1000u / SAMPLE_MS; k++) {
        assert_true(sim_run_for(w, (uint64_t)SAMPLE_MS * 1000u));
        if (c->ep[0].pcb == NULL || c->ep[1].pcb == NULL || c->failed) {
            break;
        }
        wisp_tcp_get_info(c->ep[0].pcb, &ia);
        if (ia.bytes_acked > max_acked) {
            max_acked = ia.bytes_acked;
        }
        if (ia.bytes_acked != acked0) {
            grew++;
        }
    }
    assert_false(c->failed);
    assert_non_null(c->ep[0].pcb);
    assert_non_null(c->ep[1].pcb);
    wisp_tcp_get_info(c->ep[0].pcb, &ia);
    wisp_tcp_get_info(c->ep[1].pcb, &ib);
    pools_b1 = tsl_pools_used(w, 1);
    zw_count(&log, mark, a, &z);
    printf("  after %u s: %llu bytes acknowledged (+%lld, %u of %u samples grew), %llu received (+%lld), "
           "app took %llu, receiver pools %u -> %u, persist probes %llu, receiver rx %llu tx %llu, "
           "wire: %u from sender (%u with data), %u from receiver (%u with a window > 0)\n",
           STALL_S, (unsigned long long)ia.bytes_acked, (long long)(ia.bytes_acked - acked0), grew,
           STALL_S * 1000u / SAMPLE_MS, (unsigned long long)ib.bytes_received,
           (long long)(ib.bytes_received - rcvd0), (unsigned long long)c->ep[1].rx_got, pools_b0, pools_b1,
           (unsigned long long)(ctr(loopback ? b : a, WISP_CTR_TCP_PERSIST) - persist0),
           (unsigned long long)(ctr(b, WISP_CTR_TCP_RX) - rx_b0), (unsigned long long)(ctr(b, WISP_CTR_TCP_TX) - tx_b0),
           z.from_a, z.a_data, z.from_b, z.b_open);
    if (z.b_open > 0) {
        tsl_log_print(&log, mark, stdout);
    }
    /* the window stays closed: nothing more acknowledged or taken in */
    assert_int_equal(ia.bytes_acked, acked0);
    assert_int_equal(grew, 0);
    assert_int_equal(ib.bytes_received, rcvd0);
    /* exactly the window that was offered (the application gave nothing
     * back, so RCV.WND went from WISP_TCP_WND to 0) */
    assert_int_equal(acked0, (uint64_t)WISP_TCP_WND);
    assert_int_equal(rcvd0, (uint64_t)WISP_TCP_WND);
    assert_int_equal(ia.snd_wnd, 0);
    assert_int_equal(ib.rcv_wnd, 0);
    assert_int_equal(c->ep[1].rx_got, mode == ZW_HOLD ? (uint64_t)WISP_TCP_WND : 0u);
    /* persist probes were sent and answered, backed off (not a flood) */
    assert_true(ctr(loopback ? b : a, WISP_CTR_TCP_PERSIST) - persist0 >= 3u);
    assert_true(ctr(loopback ? b : a, WISP_CTR_TCP_PERSIST) - persist0 <= 60u);
    /* every segment the receiver got was answered (loopback: the one
     * stack counts probes and answers both ways) */
    assert_true(ctr(b, WISP_CTR_TCP_RX) - rx_b0 >= 3u);
    assert_true(ctr(b, WISP_CTR_TCP_TX) - tx_b0 >= ctr(b, WISP_CTR_TCP_RX) - rx_b0);
    if (!loopback) {
        assert_true(z.from_a >= 3u);
        assert_true(z.from_b >= 3u);
        assert_int_equal(z.b_open, 0); /* every answer carries window 0 */
    }
    /* the receiver holds no more buffers than when the window closed */
    assert_true(pools_b1 <= pools_b0);
    if (!loopback) {
        unsigned bad, ans = zw_forced_probe(w, &log, a, &bad);
        wisp_tcp_get_info(c->ep[1].pcb, &ib);
        printf("  forced probe: %u answers, %u not (ACK = the probe's SEQ, window 0), received %llu\n", ans, bad,
               (unsigned long long)ib.bytes_received);
        assert_true(ans >= 1u);
        assert_int_equal(bad, 0);
        assert_int_equal(ib.bytes_received, rcvd0);
    }

    if (mode == ZW_HOLD) {
        /* RFC 9293 §3.8.6.2.2 receiver SWS avoidance: giving back less
         * than min(RCV.BUFF / 2, MSS) must not reopen the window; a probe
         * forced now (the persist timer is backed off to a minute) is
         * answered with window 0 and its octet is not taken. */
        struct wisp_tcp_pcb *ra = c->ep[1].pcb;
        wisp_tcp_recved(ra, ZW_SMALL);
        c->ep[1].held -= ZW_SMALL;
        mark = log.n;
        assert_true(sim_run_for(w, 5 * SEC));
        zw_count(&log, mark, a, &z);
        wisp_tcp_get_info(c->ep[0].pcb, &ia);
        wisp_tcp_get_info(ra, &ib);
        printf("  %u bytes given back: %u receiver segments (%u with a window > 0), %llu acknowledged, rcv_wnd %lu\n",
               ZW_SMALL, z.from_b, z.b_open, (unsigned long long)ia.bytes_acked, (unsigned long)ib.rcv_wnd);
        assert_int_equal(z.b_open, 0);
        assert_int_equal(ia.bytes_acked, acked0);
        assert_int_equal(ib.rcv_wnd, ZW_SMALL);
        if (!loopback) {
            unsigned bad, ans = zw_forced_probe(w, &log, a, &bad);
            wisp_tcp_get_info(ra, &ib);
            printf("  forced probe after %u bytes given back: %u answers, %u not with window 0\n", ZW_SMALL, ans,
                   bad);
            assert_true(ans >= 1u);
            assert_int_equal(bad, 0);
            assert_int_equal(ib.bytes_received, rcvd0);
        }
    }

    /* the application now reads everything */
    sim_set_tap(w, NULL, NULL);
    t_release = sim_now_us(w);
    if (mode == ZW_HOLD) {
        tsl_ep_release(&c->ep[1]);
    } else {
        c->ep[1].refuse = false;
        wisp_tcp_recv_retry(c->ep[1].pcb);
    }
    if (!tsl_run_until_done(&run, 120 * SEC)) {
        tsl_run_print_failures(&run, stderr);
        fail_msg("transfer did not complete after the application read");
    }
    printf("  released: 1 MB complete %.3f s later, %llu bytes verified\n",
           (double)(c->done_us - t_release) / 1e6, (unsigned long long)c->ep[1].rx_got);
    assert_int_equal(c->ep[1].rx_got, 1 * MB);
    assert_true(c->done && !c->failed);
    assert_true(c->done_us - t_release < 70 * SEC); /* at most one backed-off probe interval */
    assert_true(tsl_settle(w, base, 200 * SEC, stderr));
    tsl_fini(&run);
    tsl_log_free(&log);
    ST_FREE(w);
}

static void wire_hold(void **state)
{
    struct zw_case zc = { ZW_HOLD, false, 0.0, 0.0, 1460u, false, false };
    (void)state;
    zero_window_stall(31, &zc);
}

static void wire_refuse(void **state)
{
    struct zw_case zc = { ZW_REFUSE, false, 0.0, 0.0, 1460u, false, false };
    (void)state;
    zero_window_stall(32, &zc);
}

static void loopback_hold(void **state)
{
    struct zw_case zc = { ZW_HOLD, true, 0.0, 0.0, 1460u, false, false };
    (void)state;
    zero_window_stall(33, &zc);
}

static void loopback_refuse(void **state)
{
    struct zw_case zc = { ZW_REFUSE, true, 0.0, 0.0, 1460u, false, false };
    (void)state;
    zero_window_stall(34, &zc);
}

/* Odd-sized segments (random writes 1..3000, Nagle off) on a lossy,
 * reordering wire: the window's right edge is not a multiple of the
 * segment size and data arrives out of order while it closes. */
static void lossy_random_hold(void **state)
{
    struct zw_case zc = { ZW_HOLD, false, 0.03, 0.03, 3000u, true, true };
    (void)state;
    zero_window_stall(35, &zc);
}

static void lossy_random_refuse(void **state)
{
    struct zw_case zc = { ZW_REFUSE, false, 0.03, 0.03, 3000u, true, true };
    (void)state;
    zero_window_stall(36, &zc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wire_hold),
        cmocka_unit_test(wire_refuse),
        cmocka_unit_test(loopback_hold),
        cmocka_unit_test(loopback_refuse),
        cmocka_unit_test(lossy_random_hold),
        cmocka_unit_test(lossy_random_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
