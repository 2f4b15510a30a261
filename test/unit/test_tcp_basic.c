/**
 * @file test_tcp_basic.c
 * Segment-level tests of the TCP core, phase 1: RST rules, handshakes
 * (passive, active, simultaneous), MSS, data transfer in order with
 * zero-copy delivery, delayed ACK, Nagle and coalescing, the receive
 * window, retransmission with RTO backoff, close / half-close /
 * TIME-WAIT, abort, and the raw API around them. Each test is named after
 * the rule it checks.
 */
#include "tcp_testlib.h"

static uint8_t g_data[WISP_TCP_SND_BUF + 65536];

static void t_fresh(struct tt *t)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
}

/* A fresh connection in SYN-SENT: a new PCB with the test callbacks
 * (bound to t->port when bind, else the ephemeral port is taken from the
 * SYN), connecting to the peer; the SYN is popped into syn. */
static void t_syn_sent(struct tt *t, struct tt_seg *syn, bool bind)
{
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    t_fresh(t);
    t->pcb = wisp_tcp_new(t->e->s);
    assert_non_null(t->pcb);
    tt_callbacks(t, t->pcb);
    if (bind) {
        assert_int_equal(wisp_tcp_bind(t->pcb, NULL, t->port), WISP_OK);
    }
    assert_int_equal(wisp_tcp_connect(t->pcb, &dst, t->pport, tt_rec_connected), WISP_OK);
    tt_expect(t, syn);
    assert_true(syn->flags & TT_SYN);
    if (!bind) {
        t->port = syn->sport;
    }
}

/* ----------------------------------------------------- RST rules */

/* RFC 9293 §3.10.7.1: a SYN to a closed port gets <SEQ=0><ACK=SEG.SEQ+1>
 * <CTL=RST,ACK>. */
static void test_rfc9293_3_10_7_1_rst_to_closed_port_syn(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_inject(&t, 40000, 81, 1000, 0, TT_SYN, 1000, NULL, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST | TT_ACK);
    assert_int_equal(g.seq, 0);
    assert_int_equal(g.ack, 1001);
    assert_int_equal(g.sport, 81);
    assert_int_equal(g.dport, 40000);
    assert_int_equal(TU_CTR(t.e, TCP_NOPORT), 1);
    assert_int_equal(TU_CTR(t.e, TCP_RST_TX), 1);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.1: an ACK to a closed port gets <SEQ=SEG.ACK><CTL=RST>. */
static void test_rfc9293_3_10_7_1_rst_to_closed_port_ack(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_inject(&t, 40000, 81, 1000, 0xabcdef01u, TT_ACK, 1000, NULL, g_data, 10);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST);
    assert_int_equal(g.seq, 0xabcdef01u);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.1: SEG.LEN counts data, SYN and FIN. */
static void test_rfc9293_3_10_7_1_rst_ack_counts_data_and_fin(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_inject(&t, 40000, 81, 5000, 0, TT_FIN | TT_PSH, 1000, NULL, g_data, 100);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST | TT_ACK);
    assert_int_equal(g.ack, 5000 + 100 + 1);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.1: never a RST in reply to a RST. */
static void test_rfc9293_3_10_7_1_no_rst_for_rst(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_inject(&t, 40000, 81, 5000, 0, TT_RST, 0, NULL, NULL, 0);
    tt_inject(&t, 40000, 81, 5000, 7, TT_RST | TT_ACK, 0, NULL, NULL, 0);
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_NOPORT), 2);
    tt_done(&t);
}

/* ---------------------------------------------------- validation */

static void test_rfc9293_3_1_bad_checksum_dropped(void **state)
{
    struct tt t;
    uint8_t f[80];
    (void)state;
    t_fresh(&t);
    tt_inject(&t, 40000, 81, 1000, 0, TT_SYN, 1000, NULL, NULL, 0);
    tu_clear(t.e);
    memcpy(f, tt_frame_buf, 54);
    f[TT_ETH + TT_IPH + 4] ^= 0x01; /* flip a bit of the sequence number */
    assert_true(tu_inject(t.e, f, 54));
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_CHKSUM), 1);
    tt_done(&t);
}

static void test_rfc9293_3_1_short_and_bad_offset_dropped(void **state)
{
    struct tt t;
    uint8_t f[80];
    uint8_t *h = f + TT_ETH + TT_IPH;
    uint16_t sum;
    (void)state;
    t_fresh(&t);
    /* 10 bytes of TCP */
    tu_eth(f, tu_mac_self, tu_mac_peer, WISP_ETHTYPE_IP4);
    tu_ip4(f + TT_ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, 10, 1, 0, 64);
    memset(h, 0, 20);
    assert_true(tu_inject(t.e, f, TT_ETH + TT_IPH + 10));
    assert_int_equal(TU_CTR(t.e, TCP_DROP_SHORT), 1);
    /* data offset 15 words in a 20-byte segment, and offset 4 */
    tu_ip4(f + TT_ETH, tu_ip_peer(), tu_ip_self(), WISP_IP4_PROTO_TCP, 20, 1, 0, 64);
    wisp_wr16(h, 40000);
    wisp_wr16(h + 2, 81);
    h[12] = 0xf0;
    h[13] = TT_SYN;
    sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), 6, 20), wisp_chksum_sum(h, 20));
    wisp_wr16(h + 16, (uint16_t)~sum);
    assert_true(tu_inject(t.e, f, TT_ETH + TT_IPH + 20));
    h[12] = 0x40;
    wisp_wr16(h + 16, 0);
    sum = wisp_chksum_add(wisp_chksum_pseudo4(tu_ip_peer(), tu_ip_self(), 6, 20), wisp_chksum_sum(h, 20));
    wisp_wr16(h + 16, (uint16_t)~sum);
    assert_true(tu_inject(t.e, f, TT_ETH + TT_IPH + 20));
    assert_int_equal(TU_CTR(t.e, TCP_DROP_BADOFF), 2);
    tt_expect_none(&t);
    tt_done(&t);
}

/* ------------------------------------------------------- handshakes */

/* RFC 9293 §3.5 + RFC 7323 / RFC 2018: a passive open answers with
 * SYN-ACK carrying MSS, and window scale / SACK-permitted / timestamps only
 * because the SYN offered them; the accept callback gets an ESTABLISHED
 * PCB. */
static void test_rfc9293_3_5_passive_open_synack_options(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1000;
    t.o.ws = 7;
    t.o.sackp = true;
    t.o.ts = true;
    g = tt_open_passive(&t);
    assert_int_equal(g.mss, 1460);
    /* an option compiled out (opt.h) is never answered */
    assert_int_equal(g.ws != 0xff, WISP_TCP_WND_SCALE != 0);
    assert_int_equal(g.sackp, WISP_TCP_SACK != 0);
    assert_int_equal(g.ts, WISP_TCP_TIMESTAMPS != 0);
    if (WISP_TCP_TIMESTAMPS) {
        assert_int_equal(g.tsecr, 5000);
    }
    assert_int_equal(t.accepts, 1);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 1000);
    assert_int_equal(info.snd_wscale, WISP_TCP_WND_SCALE ? 7 : 0);
    assert_int_equal(info.ts_ok, WISP_TCP_TIMESTAMPS != 0);
    assert_int_equal(info.sack_ok, WISP_TCP_SACK != 0);
    assert_int_equal(TU_CTR(t.e, TCP_ACCEPT), 1);
    tt_done(&t);
}

/* RFC 7323 §2.2, RFC 2018 §2, RFC 7323 §3.2: nothing offered, nothing
 * answered; RFC 9293 §3.7.1: no MSS option means 536. */
static void test_rfc7323_2_2_synack_without_offers(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    g = tt_open_passive(&t);
    assert_int_equal(g.mss, 1460);
    assert_int_equal(g.ws, 0xff);
    assert_false(g.sackp);
    assert_false(g.ts);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 536);
    assert_false(info.ts_ok);
    assert_false(info.sack_ok);
    tt_done(&t);
}

/* RFC 9293 §3.5: active open: SYN with our options, SYN-ACK -> ACK and the
 * connected callback; RFC 6691: send MSS = min(peer MSS, MTU - 40). */
static void test_rfc9293_3_5_active_open(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.mss = 9000;
    t.o.ts = true;
    t.o.sackp = true;
    t.o.ws = 2;
    g = tt_open_active(&t);
    assert_int_equal(g.mss, 1460);
    /* an option compiled out (opt.h) is never offered */
    assert_int_equal(g.sackp, WISP_TCP_SACK != 0);
    assert_int_equal(g.ts, WISP_TCP_TIMESTAMPS != 0);
    assert_int_equal(g.tsecr, 0);
    assert_int_equal(g.ws != 0xff, WISP_TCP_WND_SCALE != 0);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 1460);
    assert_int_equal(info.snd_wscale, WISP_TCP_WND_SCALE ? 2 : 0);
    assert_int_equal(TU_CTR(t.e, TCP_CONNECT), 1);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.3 (SYN-SENT) with RFC 5961 §3.2: one segment from the
 * peer per case, in a fresh SYN-SENT connection whose SYN had sequence
 * number S. An unacceptable ACK (<= ISS or > SND.NXT) gets
 * <SEQ=SEG.ACK><CTL=RST> unless the segment is a RST (then it is
 * dropped); a RST counts only with an acceptable ACK (the connection is
 * refused, the error callback says WISP_ERR_RST), without ACK it is
 * ignored; a segment with neither SYN nor RST is dropped. */
static void test_rfc9293_3_10_7_3_syn_sent_input(void **state)
{
    static const struct {
        const char *what;
        uint8_t flags;
        uint32_t seq;             /* the peer's sequence number */
        int32_t ack;              /* its acknowledgment, relative to S */
        bool rst_back;            /* answered <SEQ=SEG.ACK><CTL=RST>, else nothing */
        bool refused;             /* the error callback with WISP_ERR_RST, else still SYN-SENT */
        uint8_t badack, rst_rx, drop_rst, drop_state;
    } cases[] = {
        { "SYN-ACK acking beyond SND.NXT", TT_SYN | TT_ACK, 777, 5, true, false, 1, 0, 0, 0 },
        { "ACK of ISS", TT_ACK, 777, 0, true, false, 1, 0, 0, 0 },
        { "RST with an unacceptable ACK", TT_RST | TT_ACK, 0, 5, false, false, 1, 0, 0, 0 },
        { "RST without ACK", TT_RST, 0, 0, false, false, 0, 1, 1, 0 },
        { "RST with an acceptable ACK", TT_RST | TT_ACK, 0, 1, false, true, 0, 1, 0, 0 },
        { "acceptable ACK, no SYN", TT_ACK, 777, 1, false, false, 0, 0, 0, 1 },
    };
    unsigned i;
    (void)state;
    for (i = 0; i < WISP_ARRAY_SIZE(cases); i++) {
        struct tt t;
        struct tt_seg syn, g;
        uint32_t ack;
        print_message("case %u: %s\n", i, cases[i].what);
        t_syn_sent(&t, &syn, false);
        ack = syn.seq + (uint32_t)cases[i].ack;
        tt_send(&t, cases[i].flags, cases[i].seq, ack, NULL, 0);
        if (cases[i].rst_back) {
            tt_expect(&t, &g);
            assert_int_equal(g.flags, TT_RST);
            assert_int_equal(g.seq, ack);
        }
        tt_expect_none(&t);
        assert_int_equal(t.err_called, cases[i].refused);
        if (cases[i].refused) {
            assert_int_equal(t.err, WISP_ERR_RST);
        } else {
            assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_SYN_SENT);
        }
        assert_int_equal(TU_CTR(t.e, TCP_DROP_BADACK), cases[i].badack);
        assert_int_equal(TU_CTR(t.e, TCP_RST_RX), cases[i].rst_rx);
        assert_int_equal(TU_CTR(t.e, TCP_DROP_RST), cases[i].drop_rst);
        assert_int_equal(TU_CTR(t.e, TCP_DROP_STATE), cases[i].drop_state);
        tt_done(&t);
    }
}

/* RFC 9293 §3.5 figure 8: simultaneous open, SYN-SENT -> SYN-RECEIVED ->
 * ESTABLISHED. */
static void test_rfc9293_3_5_simultaneous_open(void **state)
{
    struct tt t;
    struct tt_seg g, sa;
    (void)state;
    t_syn_sent(&t, &g, true);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_SYN_RCVD);
    tt_expect(&t, &sa);
    assert_int_equal(sa.flags, TT_SYN | TT_ACK);
    assert_int_equal(sa.seq, g.seq);
    assert_int_equal(sa.ack, t.snd + 1u);
    /* the peer's SYN-ACK (its SYN again, acking ours) */
    tt_send(&t, TT_SYN | TT_ACK, t.snd, g.seq + 1u, NULL, 0);
    t.snd++;
    t.rcv = g.seq + 1u;
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    assert_int_equal(t.connects, 1);
    /* data flows */
    tt_data(&t, g_data, 100);
    assert_int_equal(t.rx_len, 100);
    tt_done(&t);
}

/* RFC 9293 §3.10.4 CLOSE in SYN-RECEIVED (here after a simultaneous open):
 * "queue for processing after entering ESTABLISHED state" -- nothing
 * leaves before the peer acknowledges our SYN, then the written data and
 * the FIN do. (Found by fuzzing, test/fuzz/corpus/tcp/crash-tcp-synrcvd-
 * close.bin: the PCB went to FIN-WAIT-1 at once, skipped the ESTABLISHED
 * setup -- congestion window 0 -- and never sent, nor freed, anything.) */
static void test_rfc9293_3_10_4_close_in_syn_received(void **state)
{
    struct tt t;
    struct tt_seg g, sa, d;
    (void)state;
    t_syn_sent(&t, &g, true);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_SYN_RCVD);
    tt_expect(&t, &sa);
    assert_int_equal(sa.flags, TT_SYN | TT_ACK);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    t.pcb = NULL;
    tu_advance(t.e, 10);
    tt_expect_none(&t);
    /* the peer acknowledges our SYN */
    t.snd++;
    tt_send(&t, TT_ACK, t.snd, g.seq + 1u, NULL, 0);
    tu_advance(t.e, 10);
    tt_expect(&t, &d);
    assert_int_equal(d.seq, g.seq + 1u);
    assert_int_equal(d.len, 100);
    assert_true((d.flags & TT_FIN) != 0);
    assert_memory_equal(d.data, g_data, 100);
    /* it acknowledges data and FIN and closes too: our last ACK, TIME-WAIT */
    tt_send(&t, TT_ACK | TT_FIN, t.snd, g.seq + 102u, NULL, 0);
    tt_expect_ack(&t, t.snd + 1u);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, TT_TW_PCB);
    tt_done(&t);
}

/* RFC 6298 §5.5 + RFC 1122 §4.2.3.5: the SYN is retransmitted with the
 * timer doubled each time; after WISP_TCP_SYNMAXRTX the connect fails with
 * WISP_ERR_TIMEOUT. */
static void test_rfc6298_5_5_syn_retransmit_backoff_then_timeout(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t rto = WISP_TCP_RTO_INIT_MS;
    unsigned i;
    (void)state;
    t_syn_sent(&t, &g, false);
    for (i = 0; i < WISP_TCP_SYNMAXRTX; i++) {
        tu_advance(t.e, rto - 1);
        tt_expect_none(&t);
        tu_advance(t.e, 1);
        tt_expect(&t, &g);
        assert_int_equal(g.flags, TT_SYN);
        rto *= 2;
    }
    tu_advance(t.e, rto);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_TIMEOUT);
    assert_int_equal(TU_CTR(t.e, TCP_SYN_RETRANSMIT), WISP_TCP_SYNMAXRTX);
    tt_done(&t);
}

/* ------------------------------------------------------ data in */

/* RFC 9293 §3.10.7.4 seventh step: in-order data goes to the application
 * as the received buffers (zero-copy); RFC 5681 §4.2 / RFC 1122 §4.2.3.2:
 * a single segment is acknowledged after the delayed-ACK time. */
static void test_rfc5681_4_2_delayed_ack_for_one_segment(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_data(&t, g_data, 300);
    assert_int_equal(t.rx_len, 300);
    assert_memory_equal(t.rx, g_data, 300);
    tt_expect_none(&t);
    tu_advance(t.e, WISP_TCP_DELACK_MS - 1);
    tt_expect_none(&t);
    tu_advance(t.e, 1);
    tt_expect_ack(&t, t.snd);
    tt_done(&t);
}

/* RFC 5681 §4.2: an ACK at least for every second full-size segment. */
static void test_rfc5681_4_2_ack_every_second_full_segment(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    tt_data(&t, g_data, 1460);
    tt_expect_none(&t);
    tt_data(&t, g_data + 1460, 1460);
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.rx_len, 2920);
    assert_memory_equal(t.rx, g_data, 2920);
    tt_done(&t);
}

/* RFC 9293 §3.8.6.2.2: the window shrinks by what the application holds
 * and reopens on wisp_tcp_recved, announced at once only when the
 * announced window fell to half the buffer and the edge moves by at least
 * min(RCV.BUFF/2, MSS); a smaller reopening waits (receiver SWS). */
static void test_rfc9293_3_8_6_2_2_receive_window_and_update(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    uint32_t got = 0, sh, half;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    t.o.ws = 0;
    tt_open_passive(&t);
    wisp_tcp_get_info(t.pcb, &info);
    sh = info.rcv_wscale;
    half = WISP_TCP_WND / 2u;
    t.no_recved = true;
    while (got <= half) {
        tt_data(&t, g_data, 1460);
        got += 1460;
    }
    tu_advance(t.e, WISP_TCP_DELACK_MS);
    g.wnd = 0;
    while (tt_pop(&t, &g)) {
    }
    assert_int_equal(g.ack, t.snd);
    assert_int_equal((uint32_t)g.wnd << sh, WISP_TCP_WND - got);
    /* a small recved: no update (SWS) */
    wisp_tcp_recved(t.pcb, 100);
    tt_expect_none(&t);
    /* the rest: the edge moves by far more than an MSS -> update now */
    wisp_tcp_recved(t.pcb, got - 100);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_ACK);
    assert_int_equal((uint32_t)g.wnd << sh, WISP_TCP_WND);
    tt_done(&t);
}

/* Fill the window announced in the SYN-ACK up to `room` bytes (full-size
 * segments, then a remainder), with the application holding the data;
 * the ACKs are drained after the delayed-ACK time. Returns the bytes held. */
static uint32_t t_fill_to(struct tt *t, uint32_t wnd, uint32_t room, uint32_t mss)
{
    struct tt_seg g;
    uint32_t got = 0;
    t->no_recved = true;
    while (got < wnd - room) {
        uint32_t n = WISP_MIN(mss, wnd - room - got);
        tt_data(t, g_data, (uint16_t)n);
        got += n;
    }
    tu_advance(t->e, WISP_TCP_DELACK_MS);
    g.wnd = 0;
    while (tt_pop(t, &g)) {
    }
    assert_int_equal(g.ack, t->snd);
    assert_int_equal(g.wnd, room);
    return got;
}

/* A passive open with MSS 1460 and no window scaling (windows to the
 * byte), RCV.BUFF set to the window announced (*wnd, at least 4 MSS). */
static void t_open_bytewin(struct tt *t, uint32_t *wnd, uint32_t *mss)
{
    struct tt_seg syn;
    struct wisp_tcp_info info;
    t_fresh(t);
    t->o.mss = 1460;
    t->o.ws = 0xff;
    syn = tt_open_passive(t);
    wisp_tcp_get_info(t->pcb, &info);
    *wnd = syn.wnd;
    *mss = info.mss;
    assert_true(*wnd >= 4u * *mss);
    wisp_tcp_set_bufs(t->pcb, 0, *wnd);
}

/* RFC 1122 §4.2.3.3 / RFC 9293 §3.8.6.2.2: with the peer's window at
 * room = min(RCV.BUFF/2, 2*MSS), reads that move the right edge by less
 * than that send no pure update (the update must at least double the
 * peer's window); the read reaching it sends exactly one. */
static void test_rfc1122_4_2_3_3_window_update_threshold(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t wnd, mss, thresh, room, i;
    (void)state;
    t_open_bytewin(&t, &wnd, &mss);
    thresh = WISP_MIN(wnd / 2u, 2u * mss);
    room = thresh;
    (void)t_fill_to(&t, wnd, room, mss);
    /* three quarter-threshold reads: no pure ACK each */
    for (i = 0; i < 3u; i++) {
        wisp_tcp_recved(t.pcb, thresh / 4u);
        tt_expect_none(&t);
    }
    /* the read that moves the edge by the threshold: exactly one update */
    wisp_tcp_recved(t.pcb, thresh - 3u * (thresh / 4u));
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_ACK);
    assert_int_equal(g.len, 0);
    assert_int_equal(g.ack, t.snd);
    assert_int_equal(g.wnd, room + thresh);
    tt_expect_none(&t);
    /* a further small read: nothing */
    wisp_tcp_recved(t.pcb, mss / 2u);
    tt_expect_none(&t);
    tt_done(&t);
}

/* A window the peer sees as zero is announced as soon as it opens by an
 * MSS (the sender may be blocked on it: RFC 9293 §3.8.6.2.2); later
 * updates wait until they at least double the peer's window. */
static void test_rfc9293_3_8_6_2_2_zero_window_reopens_at_once(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t wnd, mss;
    (void)state;
    t_open_bytewin(&t, &wnd, &mss);
    (void)t_fill_to(&t, wnd, 0, mss);
    wisp_tcp_recved(t.pcb, mss / 2u); /* below an MSS: receiver SWS, nothing */
    tt_expect_none(&t);
    wisp_tcp_recved(t.pcb, mss - mss / 2u);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_ACK);
    assert_int_equal(g.len, 0);
    assert_int_equal(g.wnd, mss);
    tt_expect_none(&t);
    /* half an MSS more: below the SWS threshold, nothing */
    wisp_tcp_recved(t.pcb, mss / 2u);
    tt_expect_none(&t);
    /* an MSS more doubles the peer's window: one update */
    wisp_tcp_recved(t.pcb, mss - mss / 2u);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_ACK);
    assert_int_equal(g.wnd, 2u * mss);
    tt_expect_none(&t);
    /* an MSS more would not double it: nothing; two more do */
    wisp_tcp_recved(t.pcb, mss);
    tt_expect_none(&t);
    wisp_tcp_recved(t.pcb, mss);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_ACK);
    assert_int_equal(g.wnd, 4u * mss);
    tt_expect_none(&t);
    tt_done(&t);
}

/* Refused data (recv returns != OK) is kept, offered again later, and the
 * window stays closed by it meanwhile; nothing is lost. */
static void test_refused_data_is_retried(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    t.refuse = true;
    tt_data(&t, g_data, 200);
    tt_data(&t, g_data + 200, 300);
    assert_int_equal(t.rx_len, 0);
    assert_int_equal(t.recv_calls, 1);
    tu_advance(t.e, 100);
    assert_true(t.recv_calls > 1);
    t.refuse = false;
    tu_advance(t.e, 100);
    assert_int_equal(t.rx_len, 500);
    assert_memory_equal(t.rx, g_data, 500);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.4 first step: an unacceptable segment gets an ACK
 * <SEQ=SND.NXT><ACK=RCV.NXT> and is dropped. */
static void test_rfc9293_3_10_7_4_out_of_window_gets_ack(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_ACK, t.snd + 1000000u, t.rcv, g_data, 10);
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.rx_len, 0);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_OOW), 1);
    /* an old duplicate too */
    tt_data(&t, g_data, 10);
    tt_send(&t, TT_ACK, t.snd - 10u, t.rcv, g_data, 10);
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.rx_len, 10);
    tt_done(&t);
}

/* ------------------------------------------------------ data out */

/* Written data is cut into segments of the send MSS (minus the timestamp
 * option, RFC 6691), sent within the initial window (RFC 6928), with PSH on
 * the last segment; the sent callback reports acknowledged bytes and the
 * send buffer frees up. */
static void test_rfc6928_write_segments_within_initial_window(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t off = 0, n = 5000;
    unsigned segs = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    t.o.ts = true;
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, n, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), WISP_TCP_SND_BUF - n);
    tu_advance(t.e, 0);
    while (tt_pop(&t, &g)) {
        assert_int_equal(g.seq, t.rcv + off);
        assert_memory_equal(g.data, g_data + off, g.len);
        off += g.len;
        segs++;
        assert_true(g.len <= (WISP_TCP_TIMESTAMPS ? 1448u : 1460u));
        assert_int_equal((g.flags & TT_PSH) != 0, off == n);
    }
    assert_int_equal(off, n);
    assert_int_equal(segs, 4);
    t.rcv += n;
    tt_ack(&t);
    assert_int_equal(t.sent_total, n);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), WISP_TCP_SND_BUF);
    tt_done(&t);
}

/* Small writes are coalesced into full-size segments (80 writes of 64
 * bytes -> 4 segments), even with Nagle off. */
static void test_small_writes_coalesced(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t off = 0;
    unsigned i, segs = 0;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460;
    tt_open_passive(&t);
    wisp_tcp_nodelay(t.pcb, true);
    for (i = 0; i < 80; i++) {
        assert_int_equal(wisp_tcp_write(t.pcb, g_data + 64u * i, 64, WISP_TCP_WRITE_COPY), WISP_OK);
    }
    tu_advance(t.e, 0);
    while (tt_pop(&t, &g)) {
        assert_memory_equal(g.data, g_data + off, g.len);
        off += g.len;
        segs++;
    }
    assert_int_equal(off, 5120);
    assert_int_equal(segs, 4);
    tt_done(&t);
}

/* RFC 896 / RFC 1122 §4.2.3.4: with Nagle on, a short segment waits while
 * data is unacknowledged and goes out with the ACK; with Nagle off it goes
 * at once. */
static void test_rfc896_nagle_holds_short_segment(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 10, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.len, 10);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data + 10, 10, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect_none(&t);
    t.rcv += 10;
    tt_ack(&t);
    tt_expect(&t, &g);
    assert_int_equal(g.len, 10);
    assert_int_equal(g.seq, t.rcv);
    assert_memory_equal(g.data, g_data + 10, 10);
    t.rcv += 10;
    tt_ack(&t);
    /* Nagle off */
    wisp_tcp_nodelay(t.pcb, true);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 10, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 10, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    tt_expect(&t, &g);
    assert_int_equal(g.seq, t.rcv + 10);
    tt_done(&t);
}

/* Zero-copy writes reference the caller's memory (no transmit buffers
 * used for the data). */
static void test_write_nocopy_references_data(void **state)
{
    struct tt t;
    struct tt_seg g;
    unsigned before;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    before = t.e->s->pool[WISP_POOL_PBUF_TX].used;
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 500, 0), WISP_OK);
    assert_int_equal(t.e->s->pool[WISP_POOL_PBUF_TX].used, before);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.len, 500);
    assert_memory_equal(g.data, g_data, 500);
    t.rcv += 500;
    tt_ack(&t);
    assert_int_equal(t.sent_total, 500);
    tt_done(&t);
}

/* WISP_ERR_MEM when the send buffer cannot take the write now (it may
 * later); WISP_ERR_VAL for a write that can never fit; nothing is queued
 * either way. */
static void test_write_mem_when_send_buffer_full(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    t.o.mss = 1460; /* full-size segments: a whole send buffer of copies fits the transmit blocks */
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, WISP_TCP_SND_BUF + 1u, WISP_TCP_WRITE_COPY), WISP_ERR_VAL);
    assert_int_equal(wisp_tcp_sndbuf(t.pcb), WISP_TCP_SND_BUF);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, WISP_TCP_SND_BUF, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 1, WISP_TCP_WRITE_COPY), WISP_ERR_MEM);
    tt_done(&t);
}

/* RFC 6298 §5: an unacknowledged segment is retransmitted after the RTO,
 * the timer doubles each time (§5.5), and after WISP_TCP_MAXRTX the
 * connection is aborted with WISP_ERR_TIMEOUT and a RST. */
static void test_rfc6298_5_rto_retransmit_backoff_abort(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    uint32_t rto;
    unsigned i;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    wisp_tcp_get_info(t.pcb, &info);
    rto = info.rto_ms;
    assert_int_equal(rto, WISP_TCP_RTO_INIT_MS);
    for (i = 0; i < WISP_TCP_MAXRTX; i++) {
        tu_advance(t.e, rto - 1);
        tt_expect_none(&t);
        tu_advance(t.e, 1);
        tt_expect(&t, &g);
        assert_int_equal(g.seq, t.rcv);
        assert_int_equal(g.len, 100);
        rto = rto * 2 > WISP_TCP_RTO_MAX_MS ? WISP_TCP_RTO_MAX_MS : rto * 2;
    }
    assert_int_equal(TU_CTR(t.e, TCP_TIMEOUT), WISP_TCP_MAXRTX);
    tu_advance(t.e, rto);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_TIMEOUT);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_RST);
    tt_done(&t);
}

/* RFC 6298 §2 with RFC 7323 §4 (RTTM): the RTT from the echoed timestamp
 * sets SRTT and the RTO (bounded below by the minimum). */
static void test_rfc6298_2_rtt_from_timestamps(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    tu_advance(t.e, 30);
    t.rcv += 100;
    tt_ack(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.srtt_ms, 30);
    assert_int_equal(info.rttvar_ms, 15);
    assert_int_equal(info.rto_ms, 30 + 60 < WISP_TCP_RTO_MIN_MS ? WISP_TCP_RTO_MIN_MS : 30 + 60);
    tt_done(&t);
}

/* RFC 6298 §3 (Karn) without timestamps: the RTT of a timed segment. */
static void test_rfc6298_3_rtt_karn_without_timestamps(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 100, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    tu_advance(t.e, 400);
    t.rcv += 100;
    tt_ack(&t);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.srtt_ms, 400);
    assert_int_equal(info.rto_ms, 400 + 800);
    tt_done(&t);
}

/* ------------------------------------------------------- closing */

/* RFC 9293 §3.6: active close: FIN-WAIT-1 -> FIN-WAIT-2 -> TIME-WAIT; the
 * TIME-WAIT record acknowledges a retransmitted FIN and disappears after
 * 2 MSL; no callbacks after close. */
static void test_rfc9293_3_6_active_close_time_wait(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    assert_int_equal(g.flags & (TT_FIN | TT_ACK), TT_FIN | TT_ACK);
    assert_int_equal(g.seq, t.rcv);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_1);
    t.rcv++;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_2);
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    tt_expect_ack(&t, t.snd);
    assert_false(t.err_called); /* closed: no callbacks */
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, TT_TW_PCB);
    t.pcb = NULL;
    /* the FIN again: ACK from the TIME-WAIT record */
    tu_advance(t.e, 1000);
    tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd);
    /* 2 MSL after the last FIN the record is gone: a segment gets RST */
    tu_advance(t.e, 2 * WISP_TCP_MSL_MS - 1);
    tt_send(&t, TT_ACK, t.snd, t.rcv, NULL, 0);
    tt_expect_none(&t);
    tu_advance(t.e, 1);
    wisp_tcp_close(t.lpcb);
    t.lpcb = NULL;
    tt_send(&t, TT_ACK, t.snd, t.rcv, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST);
    tt_done(&t);
}

/* RFC 9293 §3.6: passive close: the FIN is reported (recv with NULL),
 * CLOSE-WAIT; close -> LAST-ACK; the ACK of our FIN frees the PCB. */
static void test_rfc9293_3_6_passive_close_last_ack(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_data(&t, g_data, 50);
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.eof, 1);
    assert_int_equal(t.rx_len, 50);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_CLOSE_WAIT);
    /* we may still send */
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 20, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    assert_int_equal(g.len, 20);
    assert_true(g.flags & TT_FIN);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_LAST_ACK);
    t.rcv += 21;
    tt_ack(&t);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    assert_false(t.err_called);
    t.pcb = NULL;
    tt_done(&t);
}

/* RFC 9293 §3.6 simultaneous close: FIN-WAIT-1 + FIN -> CLOSING; the ACK
 * of our FIN -> TIME-WAIT. */
static void test_rfc9293_3_6_simultaneous_close(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_FIN);
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0); /* does not ack our FIN */
    t.snd++;
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_CLOSING);
    tt_expect_ack(&t, t.snd);
    t.rcv++;
    tt_ack(&t);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, TT_TW_PCB);
    t.pcb = NULL;
    /* TIME-WAIT answers the FIN */
    tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd);
    tt_done(&t);
}

/* Half-close (wisp_tcp_shutdown tx): FIN sent, data from the peer still
 * delivered; when the peer closes too the PCB (still held) is freed and
 * the error callback says WISP_ERR_CLSD. */
static void test_rfc9293_3_6_half_close_keeps_receiving(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_shutdown(t.pcb, false, true), WISP_OK);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_FIN);
    t.rcv++;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_2);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 5, WISP_TCP_WRITE_COPY), WISP_ERR_CONN);
    tt_data(&t, g_data, 1000);
    assert_int_equal(t.rx_len, 1000);
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    assert_int_equal(t.eof, 1);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_CLSD);
    tt_done(&t);
}

/* RFC 1122 §4.2.2.13: new data after the application closed gets a RST. */
static void test_rfc1122_4_2_2_13_data_after_close_gets_rst(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    t.pcb = NULL;
    tt_expect(&t, &g);
    t.rcv++;
    tt_data(&t, g_data, 10);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_RST);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_AFTERCLOSE), 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

/* RFC 9293 §3.10.5 ABORT: RST <SEQ=SND.NXT>, the PCB is freed, the error
 * callback says WISP_ERR_ABRT. */
static void test_rfc9293_3_10_5_abort_sends_rst(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_abort(t.pcb);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_ABRT);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST | TT_ACK);
    assert_int_equal(g.seq, t.rcv);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

/* RFC 5961 §3.2 (first half): a RST with SEG.SEQ = RCV.NXT resets the
 * connection (error callback WISP_ERR_RST). */
static void test_rfc5961_3_2_exact_rst_resets(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_RST);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

/* ------------------------------------------------------- raw API */

/* lwIP's tcp_listen semantics: the PCB passed in is freed, a listener from
 * its own pool is returned; a second bind of the port fails with USE. */
static void test_listen_frees_pcb_and_bind_conflicts(void **state)
{
    struct tt t;
    struct wisp_tcp_pcb *p;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 2);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_LISTEN].used, 1);
    assert_int_equal(wisp_tcp_state(t.lpcb), WISP_TCP_LISTEN);
    p = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(p, NULL, t.port), WISP_ERR_USE);
    assert_int_equal(wisp_tcp_bind(p, NULL, 0), WISP_OK);
    assert_int_equal(wisp_tcp_close(p), WISP_OK);
    tt_done(&t);
}

/* DSCP per connection: IP TOS = DSCP << 2 on its segments. */
static void test_dscp_sets_tos(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_set_dscp(t.pcb, 46);
    wisp_tcp_set_ttl(t.pcb, 9);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 10, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.tos, 46 << 2);
    assert_int_equal(g.ttl, 9);
    tt_done(&t);
}

/* The poll callback runs every interval * WISP_TCP_POLL_UNIT_MS. */
static void test_poll_callback_interval(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_poll(t.pcb, tt_rec_poll, 2);
    tu_advance(t.e, 2 * WISP_TCP_POLL_UNIT_MS - 1);
    assert_int_equal(t.polls, 0);
    tu_advance(t.e, 1);
    assert_int_equal(t.polls, 1);
    tu_advance(t.e, 2 * WISP_TCP_POLL_UNIT_MS * 3);
    assert_int_equal(t.polls, 4);
    tt_done(&t);
}

/* The accept callback may refuse: the connection is reset. */
static void test_accept_refused_resets(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    t.accept_ret = WISP_ERR_MEM;
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    t.snd++;
    t.rcv = g.seq + 1;
    tt_ack(&t);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_RST);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

/* A connection to the stack's own address runs over the loopback queue:
 * both ends in one stack, data both ways, orderly close, nothing left. */
struct lo_end {
    struct wisp_tcp_pcb *pcb;
    uint32_t rx;
    bool eof;
};

static wisp_err_t lo_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct lo_end *e = (struct lo_end *)arg;
    (void)err;
    if (p == NULL) {
        e->eof = true;
        assert_int_equal(wisp_tcp_close(pcb), WISP_OK);
        e->pcb = NULL;
        return WISP_OK;
    }
    e->rx += p->tot_len;
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    return WISP_OK;
}

static wisp_err_t lo_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct lo_end *e = (struct lo_end *)arg;
    (void)err;
    e->pcb = newpcb;
    wisp_tcp_arg(newpcb, e);
    wisp_tcp_recv(newpcb, lo_recv);
    assert_int_equal(wisp_tcp_write(newpcb, g_data, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
    return WISP_OK;
}

static void test_loopback_connection_to_own_address(void **state)
{
    struct tt t;
    struct lo_end srv, cli;
    struct wisp_tcp_pcb *l, *c;
    wisp_ipaddr_t self = wisp_ipaddr4(tu_ip_self());
    wisp_err_t err;
    (void)state;
    t_fresh(&t);
    memset(&srv, 0, sizeof(srv));
    memset(&cli, 0, sizeof(cli));
    l = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(l, NULL, 7000), WISP_OK);
    l = wisp_tcp_listen(l, 2, &err);
    assert_non_null(l);
    wisp_tcp_arg(l, &srv);
    wisp_tcp_accept(l, lo_accept);
    c = wisp_tcp_new(t.e->s);
    cli.pcb = c;
    wisp_tcp_arg(c, &cli);
    wisp_tcp_recv(c, lo_recv);
    assert_int_equal(wisp_tcp_connect(c, &self, 7000, NULL), WISP_OK);
    assert_int_equal(wisp_tcp_write(c, g_data, 5000, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 100);
    assert_int_equal(srv.rx, 5000);
    assert_int_equal(cli.rx, 3000);
    assert_int_equal(wisp_tcp_shutdown(c, false, true), WISP_OK);
    tu_advance(t.e, 100);
    assert_true(srv.eof);
    assert_true(cli.eof);
    assert_int_equal(TU_CTR(t.e, TCP_RETRANSMIT), 0);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, TT_TW_PCB);
    tt_expect_none(&t); /* nothing went to the wire */
    wisp_tcp_close(l);
    tt_done(&t);
}

/* Shutdown for receiving: later data is acknowledged and discarded,
 * nothing more is delivered. */
static void test_shutdown_rx_discards_data(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_data(&t, g_data, 10);
    assert_int_equal(wisp_tcp_shutdown(t.pcb, true, false), WISP_OK);
    tt_data(&t, g_data, 10);
    tt_data(&t, g_data, 10);
    assert_int_equal(t.rx_len, 10);
    assert_int_equal(t.recv_calls, 1);
    tu_advance(t.e, WISP_TCP_DELACK_MS);
    tt_expect_ack(&t, t.snd);
    tt_done(&t);
}

/* An orphaned connection (closed by the application) whose peer never
 * sends its FIN gives up in FIN-WAIT-2 after 2 MSL. */
static void test_fin_wait_2_orphan_timeout(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    t.rcv++;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_2);
    t.pcb = NULL;
    tu_advance(t.e, 2 * WISP_TCP_MSL_MS - 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 1);
    tu_advance(t.e, 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

/* Data written in SYN-SENT waits for the handshake and is cut to the MSS
 * the peer announces (here 536, smaller than the segments formed at write
 * time). */
static void test_write_before_established_uses_peer_mss(void **state)
{
    struct tt t;
    struct tt_seg g, a;
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    uint32_t off = 0;
    (void)state;
    t_fresh(&t);
    t.pcb = wisp_tcp_new(t.e->s);
    tt_callbacks(&t, t.pcb);
    assert_int_equal(wisp_tcp_bind(t.pcb, NULL, t.port), WISP_OK);
    assert_int_equal(wisp_tcp_connect(t.pcb, &dst, t.pport, tt_rec_connected), WISP_OK);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN);
    tt_expect_none(&t);
    t.o.mss = 536;
    t.rcv = g.seq + 1;
    tt_send(&t, TT_SYN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    while (tt_pop(&t, &a)) {
        assert_true(a.len <= 536);
        assert_int_equal(a.seq, t.rcv + off);
        assert_memory_equal(a.data, g_data + off, a.len);
        off += a.len;
        if (!tu_pending(t.e)) {
            tt_send(&t, TT_ACK, t.snd, t.rcv + off, NULL, 0); /* releases a Nagle-held tail */
        }
    }
    assert_int_equal(off, 3000);
    t.rcv += 3000;
    assert_int_equal(t.sent_total, 3000);
    tt_done(&t);
}

/* A recv callback that aborts its own PCB: the free is deferred until the
 * callback returns; the rest of the segment (its FIN) is not processed on
 * freed memory. */
static wisp_err_t abort_in_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct tt *t = (struct tt *)arg;
    (void)err;
    t->recv_calls++;
    wisp_pbuf_free(p);
    wisp_tcp_abort(pcb);
    return WISP_ERR_ABRT;
}

static void test_abort_inside_recv_callback(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    wisp_tcp_recv(t.pcb, abort_in_recv);
    tt_send(&t, TT_ACK | TT_FIN, t.snd, t.rcv, g_data, 100);
    assert_int_equal(t.recv_calls, 1);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_ABRT);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_RST);
    tt_expect_none(&t);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, 0);
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc9293_3_10_7_1_rst_to_closed_port_syn),
        cmocka_unit_test(test_rfc9293_3_10_7_1_rst_to_closed_port_ack),
        cmocka_unit_test(test_rfc9293_3_10_7_1_rst_ack_counts_data_and_fin),
        cmocka_unit_test(test_rfc9293_3_10_7_1_no_rst_for_rst),
        cmocka_unit_test(test_rfc9293_3_1_bad_checksum_dropped),
        cmocka_unit_test(test_rfc9293_3_1_short_and_bad_offset_dropped),
        cmocka_unit_test(test_rfc9293_3_5_passive_open_synack_options),
        cmocka_unit_test(test_rfc7323_2_2_synack_without_offers),
        cmocka_unit_test(test_rfc9293_3_5_active_open),
        cmocka_unit_test(test_rfc9293_3_10_7_3_syn_sent_input),
        cmocka_unit_test(test_rfc9293_3_5_simultaneous_open),
        cmocka_unit_test(test_rfc9293_3_10_4_close_in_syn_received),
        cmocka_unit_test(test_rfc6298_5_5_syn_retransmit_backoff_then_timeout),
        cmocka_unit_test(test_rfc5681_4_2_delayed_ack_for_one_segment),
        cmocka_unit_test(test_rfc1122_4_2_3_3_window_update_threshold),
        cmocka_unit_test(test_rfc9293_3_8_6_2_2_zero_window_reopens_at_once),
        cmocka_unit_test(test_rfc5681_4_2_ack_every_second_full_segment),
        cmocka_unit_test(test_rfc9293_3_8_6_2_2_receive_window_and_update),
        cmocka_unit_test(test_refused_data_is_retried),
        cmocka_unit_test(test_rfc9293_3_10_7_4_out_of_window_gets_ack),
        cmocka_unit_test(test_rfc6928_write_segments_within_initial_window),
        cmocka_unit_test(test_small_writes_coalesced),
        cmocka_unit_test(test_rfc896_nagle_holds_short_segment),
        cmocka_unit_test(test_write_nocopy_references_data),
        cmocka_unit_test(test_write_mem_when_send_buffer_full),
        cmocka_unit_test(test_rfc6298_5_rto_retransmit_backoff_abort),
        cmocka_unit_test(test_rfc6298_2_rtt_from_timestamps),
        cmocka_unit_test(test_rfc6298_3_rtt_karn_without_timestamps),
        cmocka_unit_test(test_rfc9293_3_6_active_close_time_wait),
        cmocka_unit_test(test_rfc9293_3_6_passive_close_last_ack),
        cmocka_unit_test(test_rfc9293_3_6_simultaneous_close),
        cmocka_unit_test(test_rfc9293_3_6_half_close_keeps_receiving),
        cmocka_unit_test(test_rfc1122_4_2_2_13_data_after_close_gets_rst),
        cmocka_unit_test(test_rfc9293_3_10_5_abort_sends_rst),
        cmocka_unit_test(test_rfc5961_3_2_exact_rst_resets),
        cmocka_unit_test(test_listen_frees_pcb_and_bind_conflicts),
        cmocka_unit_test(test_dscp_sets_tos),
        cmocka_unit_test(test_poll_callback_interval),
        cmocka_unit_test(test_accept_refused_resets),
        cmocka_unit_test(test_loopback_connection_to_own_address),
        cmocka_unit_test(test_shutdown_rx_discards_data),
        cmocka_unit_test(test_fin_wait_2_orphan_timeout),
        cmocka_unit_test(test_write_before_established_uses_peer_mss),
        cmocka_unit_test(test_abort_inside_recv_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
