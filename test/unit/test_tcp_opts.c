/**
 * @file test_tcp_opts.c
 * Segment-level TCP tests, phase 2 (options and receive side): the option
 * parser's robustness, window scaling (RFC 7323 §2), timestamps and PAWS
 * (RFC 7323 §3-5), SACK generation (RFC 2018) and the out-of-order queue
 * (trimming, bounds, merging, immediate ACKs of RFC 5681 §4.2).
 */
#include "tcp_testlib.h"

static uint8_t g_data[65536];

static void t_fresh(struct tt *t)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
}

/* ------------------------------------------------------ option parser */

/* RFC 9293 §3.2: an option length below 2 ends parsing (counted) instead
 * of looping forever (the picoTCP bug); the SYN is still answered. */
static void test_rfc9293_3_2_zero_length_option_does_not_loop(void **state)
{
    static const uint8_t zero[] = { 1, 30, 0, 2, 4, 5, 180 };  /* NOP, kind 30 len 0, MSS */
    static const uint8_t one[] = { 30, 1, 0, 0 };              /* kind 30 len 1 */
    static const uint8_t over[] = { 2, 4, 5, 180, 99, 40 };    /* MSS ok, then a length past the end */
    static const uint8_t trunc[] = { 1, 1, 1, 2 };             /* MSS kind in the last byte */
    struct tt t;
    struct tt_seg g;
    struct tt_opts o;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 8);
    memset(&o, 0, sizeof(o));
    o.ws = 0xff;
    o.raw = zero;
    o.rawlen = sizeof(zero);
    tt_inject(&t, 40001, t.port, 100, 0, TT_SYN, 1000, &o, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(TU_CTR(t.e, TCP_BADOPT), 1);
    o.raw = one;
    o.rawlen = sizeof(one);
    tt_inject(&t, 40002, t.port, 100, 0, TT_SYN, 1000, &o, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(TU_CTR(t.e, TCP_BADOPT), 2);
    o.raw = over;
    o.rawlen = sizeof(over);
    tt_inject(&t, 40003, t.port, 100, 0, TT_SYN, 1000, &o, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(TU_CTR(t.e, TCP_BADOPT), 3);
    o.raw = trunc;
    o.rawlen = sizeof(trunc);
    tt_inject(&t, 40004, t.port, 100, 0, TT_SYN, 1000, &o, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(TU_CTR(t.e, TCP_BADOPT), 4);
    tt_done(&t);
}

/* RFC 9293 §3.2: unknown options are skipped by their length; the MSS
 * after them is still taken. */
static void test_rfc9293_3_2_unknown_option_skipped(void **state)
{
    static const uint8_t opts[] = { 99, 6, 1, 2, 3, 4, 2, 4, 3, 232 }; /* kind 99 len 6, MSS 1000 */
    struct tt t;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.raw = opts;
    t.o.rawlen = sizeof(opts);
    tt_open_passive(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 1000);
    assert_int_equal(TU_CTR(t.e, TCP_BADOPT), 0);
    tt_done(&t);
}

/* ------------------------------------------------------ window scaling */

#if WISP_TCP_WND_SCALE
static uint8_t our_shift(void)
{
    uint8_t sh = 0;
    while (sh < 14 && ((uint32_t)WISP_TCP_WND >> sh) > 65535u) {
        sh++;
    }
    return sh;
}
#endif

#if WISP_TCP_WND_SCALE
/* RFC 7323 §2.2/§2.3: with both SYNs carrying the option, the peer's
 * window fields are shifted by its count and ours by the smallest shift
 * that fits WISP_TCP_WND. */
static void test_rfc7323_2_window_scale_applied_both_ways(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.ws = 3;
    g = tt_open_passive(&t);
    assert_int_equal(g.ws, our_shift());
    /* the SYN-ACK's window is not scaled (RFC 7323 §2.2) */
    assert_int_equal(g.wnd, WISP_TCP_WND > 65535 ? 65535 : WISP_TCP_WND);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wscale, 3);
    assert_int_equal(info.rcv_wscale, our_shift());
    /* the final ACK said 65535 -> 524280 bytes */
    assert_int_equal(info.snd_wnd, 65535u << 3);
    t.wnd = 1000;
    tt_ack(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wnd, 8000);
    /* our window field is scaled */
    tt_data(&t, g_data, 10);
    tu_advance(t.e, WISP_TCP_DELACK_MS);
    tt_expect(&t, &g);
    assert_int_equal((uint32_t)g.wnd << our_shift(), (uint32_t)WISP_TCP_WND);
    tt_done(&t);
}
#endif

#if WISP_TCP_WND_SCALE
/* RFC 7323 §2.2: in SYN-SENT the window of the SYN-ACK is taken as is. */
static void test_rfc7323_2_2_synack_window_not_scaled(void **state)
{
    struct tt t;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.ws = 4;
    t.wnd = 1000;
    tt_open_active(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wscale, 4);
    assert_int_equal(info.snd_wnd, 1000);
    tt_ack(&t); /* now scaled */
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wnd, 16000);
    tt_done(&t);
}
#endif

/* RFC 7323 §2.2: no option from the peer: no scaling either way, our
 * window field is capped at 65535. */
static void test_rfc7323_2_2_no_scaling_unless_both_offer(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wscale, 0);
    assert_int_equal(info.rcv_wscale, 0);
    tt_data(&t, g_data, 10);
    tu_advance(t.e, WISP_TCP_DELACK_MS);
    tt_expect(&t, &g);
    /* the buffer is free again: the whole (capped) window is offered */
    assert_int_equal(g.wnd, WISP_TCP_WND > 65535 ? 65535u : WISP_TCP_WND);
    tt_done(&t);
}

#if WISP_TCP_WND_SCALE
/* RFC 7323 §2.3: a shift above 14 is used as 14. */
static void test_rfc7323_2_3_shift_above_14_clamped(void **state)
{
    struct tt t;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.ws = 20;
    tt_open_passive(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_wscale, 14);
    tt_done(&t);
}
#endif

/* --------------------------------------------------------- timestamps */

#if WISP_TCP_TIMESTAMPS
/* RFC 7323 §3.2: once negotiated, every segment carries TSopt; TSecr
 * echoes the peer's TSval (TS.Recent). */
static void test_rfc7323_3_2_timestamps_on_every_segment(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    t.clock = 77777;
    tt_data(&t, g_data, 10);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 20, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    assert_true(g.ts);
    assert_int_equal(g.tsecr, 77777);
    assert_int_equal(g.len, 20);
    tu_advance(t.e, 100);
    t.rcv += 20;
    tt_ack(&t);
    wisp_tcp_abort(t.pcb);
    tt_expect(&t, &g); /* a RST may go without TSopt */
    assert_true(g.flags & TT_RST);
    tt_done(&t);
}
#endif

#if WISP_TCP_TIMESTAMPS
/* RFC 7323 §5.3 (R1): a segment whose TSval is older than TS.Recent is a
 * duplicate: dropped (counted) and answered with an ACK; its data is not
 * delivered. */
static void test_rfc7323_5_3_paws_drops_old_timestamp(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    t.clock = 10000;
    tt_data(&t, g_data, 10);
    t.clock = 9000; /* older */
    tt_data(&t, g_data + 10, 10);
    assert_int_equal(t.rx_len, 10);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_PAWS), 1);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, t.snd - 10u);
    assert_int_equal(g.tsecr, 10000);
    tt_done(&t);
}
#endif

/* RFC 7323 §5.3: RSTs are exempt from PAWS. */
static void test_rfc7323_5_3_paws_exempts_rst(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    t.clock = 10000;
    tt_data(&t, g_data, 10);
    t.clock = 1;
    tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_RST);
    tt_done(&t);
}

#if WISP_TCP_TIMESTAMPS
/* RFC 7323 §3.2: once negotiated, a non-RST segment without TSopt is
 * dropped. */
static void test_rfc7323_3_2_segment_without_timestamp_dropped(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    t.o.ts = false;
    tt_data(&t, g_data, 10);
    assert_int_equal(t.rx_len, 0);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_NOTS), 1);
    tt_done(&t);
}
#endif

#if WISP_TCP_TIMESTAMPS
/* RFC 7323 §4.3: TS.Recent is taken only from a segment at or below
 * Last.ACK.sent -- not from an out-of-order one. */
static void test_rfc7323_4_3_ts_recent_from_in_order_segment_only(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    t.clock = 20000;
    tt_send(&t, TT_ACK, t.snd + 100u, t.rcv, g_data + 100, 100); /* out of order */
    tt_expect(&t, &g);
    assert_int_equal(g.tsecr, 5001); /* the final ACK of the handshake */
    t.clock = 20001;
    tt_data(&t, g_data, 100); /* fills the gap */
    tt_expect(&t, &g);
    assert_int_equal(g.ack, t.snd + 100u);
    assert_int_equal(g.tsecr, 20001);
    assert_int_equal(t.rx_len, 200);
    assert_memory_equal(t.rx, g_data, 200);
    tt_done(&t);
}
#endif

/* ------------------------------------------------ SACK and out-of-order */

#if WISP_TCP_SACK
/* RFC 2018 §4 + RFC 5681 §4.2: out-of-order data is queued and answered
 * at once with a duplicate ACK whose first SACK block holds the latest
 * arrival; the segment filling the gap is ACKed at once and everything is
 * delivered in order. */
static void test_rfc2018_4_sack_blocks_most_recent_first(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    t.o.sackp = true;
    tt_open_passive(&t);
    base = t.snd;
    tt_send(&t, TT_ACK, base + 200, t.rcv, g_data + 200, 100); /* [200,300) */
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base);
    assert_int_equal(g.nsack, 1);
    assert_int_equal(g.sack[0][0], base + 200);
    assert_int_equal(g.sack[0][1], base + 300);
    tt_send(&t, TT_ACK, base + 400, t.rcv, g_data + 400, 100); /* [400,500) */
    tt_expect(&t, &g);
    assert_int_equal(g.nsack, 2);
    assert_int_equal(g.sack[0][0], base + 400);
    assert_int_equal(g.sack[1][0], base + 200);
    tt_send(&t, TT_ACK, base + 300, t.rcv, g_data + 300, 100); /* joins both */
    tt_expect(&t, &g);
    assert_int_equal(g.nsack, 1);
    assert_int_equal(g.sack[0][0], base + 200);
    assert_int_equal(g.sack[0][1], base + 500);
    assert_int_equal(t.rx_len, 0);
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 200); /* fills the gap */
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 500);
    assert_int_equal(g.nsack, 0);
    assert_int_equal(t.rx_len, 500);
    assert_memory_equal(t.rx, g_data, 500);
    assert_int_equal(TU_CTR(t.e, TCP_OOSEQ), 3);
    tt_done(&t);
}
#endif

#if WISP_TCP_SACK
/* RFC 2018 §3: at most 3 blocks with timestamps, 4 without. */
static void test_rfc2018_3_block_limits(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base, i;
    (void)state;
    t_fresh(&t);
    t.o.sackp = true;
    t.o.ts = true;
    tt_open_passive(&t);
    base = t.snd;
    for (i = 1; i <= 5; i++) {
        tt_send(&t, TT_ACK, base + 200 * i, t.rcv, g_data, 100);
        tt_expect(&t, &g);
    }
    assert_int_equal(g.nsack, 3);
    assert_int_equal(g.sack[0][0], base + 1000);
    tt_done(&t);
    t_fresh(&t);
    t.o.sackp = true;
    tt_open_passive(&t);
    base = t.snd;
    for (i = 1; i <= 5; i++) {
        tt_send(&t, TT_ACK, base + 200 * i, t.rcv, g_data, 100);
        tt_expect(&t, &g);
    }
    assert_int_equal(g.nsack, 4);
    tt_done(&t);
}
#endif

/* Overlapping out-of-order segments keep one copy of every byte; the
 * result is byte-exact. */
static void test_ooseq_overlaps_trimmed(void **state)
{
    struct tt t;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    base = t.snd;
    tt_send(&t, TT_ACK, base + 100, t.rcv, g_data + 100, 100); /* [100,200) */
    tt_send(&t, TT_ACK, base + 150, t.rcv, g_data + 150, 100); /* [150,250) overlaps the tail */
    tt_send(&t, TT_ACK, base + 50, t.rcv, g_data + 50, 100);   /* [50,150) overlaps the head */
    tt_send(&t, TT_ACK, base + 40, t.rcv, g_data + 40, 300);   /* [40,340) covers everything */
    tt_send(&t, TT_ACK, base + 120, t.rcv, g_data + 120, 20);  /* inside: nothing new */
    assert_int_equal(t.rx_len, 0);
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 60); /* [0,60) */
    assert_int_equal(t.rx_len, 340);
    assert_memory_equal(t.rx, g_data, 340);
    assert_int_equal(t.e->s->pool[WISP_POOL_PBUF_RX].used, 0);
    tt_done(&t);
}

/* The out-of-order queue holds at most WISP_TCP_OOSEQ_MAX_PBUFS receive
 * buffers per connection; beyond that segments are dropped (counted). */
static void test_ooseq_bounded_by_option(void **state)
{
    struct tt t;
    uint32_t base, i;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    base = t.snd;
    for (i = 1; i <= WISP_TCP_OOSEQ_MAX_PBUFS + 3u; i++) {
        tt_send(&t, TT_ACK, base + 20 * i, t.rcv, g_data + 20 * i, 10);
    }
    assert_int_equal(TU_CTR(t.e, TCP_OOSEQ_DROP), 3);
    assert_int_equal(t.e->s->pool[WISP_POOL_PBUF_RX].used, WISP_TCP_OOSEQ_MAX_PBUFS);
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 20);
    assert_int_equal(t.rx_len, 30);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.4: a FIN queued out of order takes effect when the gap
 * fills. */
static void test_ooseq_fin_after_gap(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    base = t.snd;
    tt_send(&t, TT_ACK | TT_FIN, base + 100, t.rcv, g_data + 100, 50);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base);
    assert_int_equal(t.eof, 0);
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 100);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 151);
    assert_int_equal(t.eof, 1);
    assert_int_equal(t.rx_len, 150);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_CLOSE_WAIT);
    tt_done(&t);
}

/* A segment straddling RCV.NXT: only the new part is delivered (RFC 9293
 * §3.10.7.4); data beyond the window is cut. */
static void test_rfc9293_3_10_7_4_trim_to_window(void **state)
{
    struct tt t;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    base = t.snd;
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 100);
    tt_send(&t, TT_ACK, base + 50, t.rcv, g_data + 50, 100);
    assert_int_equal(t.rx_len, 150);
    assert_memory_equal(t.rx, g_data, 150);
    tt_done(&t);
}

/* All connections together never take the last receive blocks for
 * out-of-order data (a quarter of the pool, at least 2), so the segments
 * that fill the gaps can still be received. */
static void test_ooseq_leaves_receive_reserve(void **state)
{
    enum { NC = (WISP_PBUF_RX_COUNT / WISP_TCP_OOSEQ_MAX_PBUFS) + 2 };
    struct tt t;
    struct wisp_tcp_pcb *pcb[NC];
    uint32_t base[NC], ack[NC];
    unsigned c, i, reserve = WISP_PBUF_RX_COUNT / 4 > 2 ? WISP_PBUF_RX_COUNT / 4 : 2;
    struct wisp_pool *rx;
    (void)state;
    t_fresh(&t);
    rx = &t.e->s->pool[WISP_POOL_PBUF_RX];
    for (c = 0; c < NC; c++) {
        t.pport = (uint16_t)(41000 + c);
        t.pcb = NULL;
        tt_open_passive(&t);
        pcb[c] = t.pcb;
        base[c] = t.snd;
        ack[c] = t.rcv;
    }
    for (c = 0; c < NC; c++) {
        t.pport = (uint16_t)(41000 + c);
        for (i = 1; i <= WISP_TCP_OOSEQ_MAX_PBUFS; i++) {
            tt_send(&t, TT_ACK, base[c] + 20 * i, ack[c], g_data, 10);
        }
        tu_clear(t.e);
        assert_true((unsigned)(rx->count - rx->used) >= reserve);
    }
    assert_true(TU_CTR(t.e, TCP_OOSEQ_DROP) > 0);
    /* a gap-filling segment still gets in */
    t.pport = 41000;
    tt_send(&t, TT_ACK, base[0], ack[0], g_data, 20);
    assert_true(t.rx_len >= 20);
    for (c = 0; c < NC; c++) {
        wisp_tcp_abort(pcb[c]);
    }
    t.pcb = NULL;
    tu_clear(t.e);
    tt_done(&t);
}

/* ------------------------------------------------------------ D-SACK */

#if WISP_TCP_SACK && WISP_TCP_DSACK
/* RFC 2883 §4 (rules 1-3) and §4.1.1: a segment received again (its ACK
 * was lost) is answered at once with an ACK whose first SACK block is the
 * duplicate range; the block is reported once; a duplicate straddling
 * RCV.NXT reports only its old part (the new part is taken). */
static void test_rfc2883_4_dsack_for_duplicate_below_rcv_nxt(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    t.o.sackp = true;
    tt_open_passive(&t);
    base = t.snd;
    tt_data(&t, g_data, 100); /* [0,100) */
    tu_advance(t.e, 500);     /* the delayed ACK goes out */
    tt_expect_ack(&t, base + 100);
    tu_clear(t.e);
    /* the same segment again */
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 100);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 100);
    assert_int_equal(g.nsack, 1);
    assert_int_equal(g.sack[0][0], base);
    assert_int_equal(g.sack[0][1], base + 100);
    assert_int_equal(TU_CTR(t.e, TCP_DSACK), 1);
    tt_expect_none(&t);
    /* rule 2: not repeated on the next ACK */
    tt_data(&t, g_data + 100, 100);
    tu_advance(t.e, 500);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 200);
    assert_int_equal(g.nsack, 0);
    /* straddling: [150, 300) -> D-SACK [150, 200), [200, 300) taken */
    tt_send(&t, TT_ACK, base + 150, t.rcv, g_data + 150, 150);
    t.snd = base + 300;
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 300);
    assert_int_equal(g.nsack, 1);
    assert_int_equal(g.sack[0][0], base + 150);
    assert_int_equal(g.sack[0][1], base + 200);
    assert_int_equal(t.rx_len, 300);
    assert_memory_equal(t.rx, g_data, 300);
    tt_done(&t);
}
#endif

#if WISP_TCP_SACK && WISP_TCP_DSACK
/* RFC 2883 §4 rule 4 / §4.1.3: a duplicate of out-of-order data: the
 * D-SACK block first, then the SACK block that holds it; with timestamps
 * the D-SACK still fits (RFC 2018 §3: 3 blocks). */
static void test_rfc2883_4_dsack_for_duplicate_out_of_order_data(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    t.o.sackp = true;
    t.o.ts = true;
    tt_open_passive(&t);
    base = t.snd;
    tt_send(&t, TT_ACK, base + 300, t.rcv, g_data + 300, 100); /* [300,400) */
    tt_expect(&t, &g);
    assert_int_equal(g.nsack, 1);
    tt_send(&t, TT_ACK, base + 500, t.rcv, g_data + 500, 100); /* [500,600) */
    tt_expect(&t, &g);
    assert_int_equal(g.nsack, 2);
    tt_send(&t, TT_ACK, base + 300, t.rcv, g_data + 300, 50); /* part of [300,400) again */
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base);
    assert_true(g.ts);
    assert_int_equal(g.nsack, 3);
    assert_int_equal(g.sack[0][0], base + 300); /* D-SACK */
    assert_int_equal(g.sack[0][1], base + 350);
    assert_int_equal(g.sack[1][0], base + 300); /* the block holding it */
    assert_int_equal(g.sack[1][1], base + 400);
    assert_int_equal(g.sack[2][0], base + 500);
    assert_int_equal(g.sack[2][1], base + 600);
    /* overlapping the queued block: [350, 450) -> D-SACK [350, 400) */
    tt_send(&t, TT_ACK, base + 350, t.rcv, g_data + 350, 100);
    tt_expect(&t, &g);
    assert_int_equal(g.sack[0][0], base + 350);
    assert_int_equal(g.sack[0][1], base + 400);
    assert_int_equal(g.sack[1][0], base + 300);
    assert_int_equal(g.sack[1][1], base + 450);
    /* the gap filled: everything in order, no SACK blocks left */
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 300);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 450);
    tt_send(&t, TT_ACK, base + 450, t.rcv, g_data + 450, 50);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 600);
    assert_int_equal(g.nsack, 0);
    assert_int_equal(t.rx_len, 600);
    assert_memory_equal(t.rx, g_data, 600);
    tt_done(&t);
}
#endif

/* No SACK negotiated: a duplicate is answered with a plain ACK. */
static void test_rfc2883_dsack_needs_sack_permitted(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t base;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    base = t.snd;
    tt_data(&t, g_data, 100);
    tt_send(&t, TT_ACK, base, t.rcv, g_data, 100);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, base + 100);
    assert_int_equal(g.nsack, 0);
    assert_int_equal(TU_CTR(t.e, TCP_DSACK), 0);
    tt_done(&t);
}

/* ------------------------------------------- per-connection bounds */

/* wisp_tcp_set_bufs (SO_RCVBUF) before connect: the SYN offers at most
 * the bound, and the window never reaches beyond it while the
 * application does not consume; consuming reopens it. */
static void test_rcvbuf_bounds_the_advertised_window(void **state)
{
    struct tt t;
    struct tt_seg g, a;
    wisp_ipaddr_t dst;
    uint32_t right0, i;
    (void)state;
    t_fresh(&t);
    t.no_recved = true;
    dst = wisp_ipaddr4(tu_ip_peer());
    t.pcb = wisp_tcp_new(t.e->s);
    assert_non_null(t.pcb);
    tt_callbacks(&t, t.pcb);
    wisp_tcp_set_bufs(t.pcb, 0, 3000);
    assert_int_equal(wisp_tcp_bind(t.pcb, NULL, t.port), WISP_OK);
    assert_int_equal(wisp_tcp_connect(t.pcb, &dst, t.pport, tt_rec_connected), WISP_OK);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN);
    assert_true(g.wnd <= 3000 && g.wnd > 0);
    t.iss = g.seq;
    t.rcv = g.seq + 1u;
    tt_send(&t, TT_SYN | TT_ACK, t.snd, t.rcv, NULL, 0); /* no window scaling */
    t.snd += 1u;
    tt_expect(&t, &a);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    right0 = t.snd + 3000u;
    assert_true(a.ack + a.wnd <= right0);
    for (i = 0; i < 6; i++) { /* 6 x 500 bytes, nothing consumed */
        tt_data(&t, g_data + 500u * i, 500);
        while (tt_pop(&t, &g)) {
            assert_true(g.ack + g.wnd <= right0);
        }
        tu_advance(t.e, 300);
        while (tt_pop(&t, &g)) {
            assert_true(g.ack + g.wnd <= right0);
        }
    }
    assert_int_equal(t.rx_len, 3000);
    tu_advance(t.e, 500);
    while (tt_pop(&t, &g)) {
        assert_int_equal(g.wnd, 0);
    }
    /* beyond the window: not taken */
    tt_send(&t, TT_ACK, t.snd, t.rcv, g_data + 3000, 500);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, t.snd);
    assert_int_equal(g.wnd, 0);
    assert_int_equal(t.rx_len, 3000);
    /* consumed: the window reopens, up to the bound */
    wisp_tcp_recved(t.pcb, 3000);
    tu_advance(t.e, 10);
    tt_expect(&t, &g);
    assert_int_equal(g.ack, t.snd);
    assert_true(g.wnd > 0 && g.wnd <= 3000);
    tt_done(&t);
}

/* wisp_tcp_set_bufs (SO_SNDBUF): the bytes written and not acknowledged
 * stay within the bound: wisp_tcp_sndbuf tells what is left, a write
 * above it is WISP_ERR_MEM (may fit later), above the bound WISP_ERR_VAL
 * (never fits); ACKs make room. Values are clamped to MSS .. the stack's
 * send buffer. */
static void test_sndbuf_bounds_unacknowledged_data(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_set_bufs(t.pcb, 1, 0);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_buf, WISP_TCP_MSS);
    wisp_tcp_set_bufs(t.pcb, 0xffffffffu, 0);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.snd_buf, WISP_TCP_SND_BUF);
    wisp_tcp_set_bufs(t.pcb, 4000, 0);
    assert_int_equal(wisp_tcp_sndbuf_size(t.pcb), 4000);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), 4000);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 4001, WISP_TCP_WRITE_COPY), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), 1000);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data + 3000, 1001, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data + 3000, 1000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), 0);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data + 4000, 1, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    while (tt_pop(&t, &g)) {
        t.rcv = g.seq + g.len;
    }
    assert_int_equal(t.rcv, t.iss + 1u + 4000u);
    tt_ack(&t);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), 4000);
    assert_int_equal(t.sent_total, 4000);
    tt_done(&t);
}

/* wisp_tcp_set_user_mss (TCP_MAXSEG) before connect: the SYN announces
 * it and no segment carries more data, though the peer offers more; on an
 * accepted connection with nothing queued it lowers the send MSS. */
static void test_user_mss_caps_syn_option_and_segments(void **state)
{
    struct tt t;
    struct tt_seg g, a;
    wisp_ipaddr_t dst;
    unsigned n = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    dst = wisp_ipaddr4(tu_ip_peer());
    t.pcb = wisp_tcp_new(t.e->s);
    assert_non_null(t.pcb);
    tt_callbacks(&t, t.pcb);
    wisp_tcp_set_user_mss(t.pcb, 700);
    assert_int_equal(wisp_tcp_bind(t.pcb, NULL, t.port), WISP_OK);
    assert_int_equal(wisp_tcp_connect(t.pcb, &dst, t.pport, tt_rec_connected), WISP_OK);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN);
    assert_int_equal(g.mss, 700);
    t.iss = g.seq;
    t.rcv = g.seq + 1u;
    tt_send(&t, TT_SYN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd += 1u;
    tt_expect(&t, &a);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 5000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    while (tt_pop(&t, &g)) {
        assert_true(g.len <= 700);
        n += g.len;
    }
    assert_int_equal(n, 5000);
    wisp_tcp_abort(t.pcb);
    t.pcb = NULL;
    tu_clear(t.e);
    tt_done(&t);

    /* accepted, then capped */
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    wisp_tcp_set_user_mss(t.pcb, 600);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    n = 0;
    while (tt_pop(&t, &g)) {
        assert_true(g.len <= 600);
        n += g.len;
    }
    assert_int_equal(n, 3000);
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc9293_3_2_zero_length_option_does_not_loop),
        cmocka_unit_test(test_rfc9293_3_2_unknown_option_skipped),
#if WISP_TCP_WND_SCALE
        cmocka_unit_test(test_rfc7323_2_window_scale_applied_both_ways),
#endif
#if WISP_TCP_WND_SCALE
        cmocka_unit_test(test_rfc7323_2_2_synack_window_not_scaled),
#endif
        cmocka_unit_test(test_rfc7323_2_2_no_scaling_unless_both_offer),
#if WISP_TCP_WND_SCALE
        cmocka_unit_test(test_rfc7323_2_3_shift_above_14_clamped),
#endif
#if WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc7323_3_2_timestamps_on_every_segment),
#endif
#if WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc7323_5_3_paws_drops_old_timestamp),
#endif
        cmocka_unit_test(test_rfc7323_5_3_paws_exempts_rst),
#if WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc7323_3_2_segment_without_timestamp_dropped),
#endif
#if WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc7323_4_3_ts_recent_from_in_order_segment_only),
#endif
#if WISP_TCP_SACK
        cmocka_unit_test(test_rfc2018_4_sack_blocks_most_recent_first),
#endif
#if WISP_TCP_SACK
        cmocka_unit_test(test_rfc2018_3_block_limits),
#endif
        cmocka_unit_test(test_ooseq_overlaps_trimmed),
        cmocka_unit_test(test_ooseq_bounded_by_option),
        cmocka_unit_test(test_ooseq_fin_after_gap),
        cmocka_unit_test(test_rfc9293_3_10_7_4_trim_to_window),
        cmocka_unit_test(test_ooseq_leaves_receive_reserve),
#if WISP_TCP_SACK && WISP_TCP_DSACK
        cmocka_unit_test(test_rfc2883_4_dsack_for_duplicate_below_rcv_nxt),
#endif
#if WISP_TCP_SACK && WISP_TCP_DSACK
        cmocka_unit_test(test_rfc2883_4_dsack_for_duplicate_out_of_order_data),
#endif
        cmocka_unit_test(test_rfc2883_dsack_needs_sack_permitted),
        cmocka_unit_test(test_rcvbuf_bounds_the_advertised_window),
        cmocka_unit_test(test_sndbuf_bounds_unacknowledged_data),
        cmocka_unit_test(test_user_mss_caps_syn_option_and_segments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
