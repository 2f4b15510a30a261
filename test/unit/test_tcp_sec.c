/**
 * @file test_tcp_sec.c
 * Segment-level TCP tests, phase 3: blind-attack mitigations (RFC 5961),
 * the SYN queue with SYN-ACK retransmission and SYN cookies (RFC 4987),
 * initial sequence numbers (RFC 6528) and their keyed hash (SipHash-2-4),
 * ephemeral ports (RFC 6056) and the compact TIME-WAIT records (RFC 9293
 * §3.6.1, RFC 6191, RFC 1337).
 */
#include "tcp_testlib.h"

/* internal (src/core/tcp.c), tested against the reference vector */
uint64_t tcp_siphash24(const uint32_t key[4], const uint8_t *m, size_t len);

static uint8_t g_data[4096];

#define TCP_CHALLENGE_PER_S_TEST 10u /* RFC 5961 §7 budget (tcp_priv.h) */

static void t_fresh(struct tt *t)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
}

/* ----------------------------------------------------------- RFC 5961 */

/* RFC 5961 §3.2: a RST inside the window but not at RCV.NXT draws a
 * challenge ACK and changes nothing; the exact one resets. */
static void test_rfc5961_3_2_in_window_rst_challenge_ack(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_RST, t.snd + 100, 0, NULL, 0);
    tt_expect_ack(&t, t.snd);
    assert_false(t.err_called);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_ACK), 1);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_RST);
    tt_done(&t);
}

/* RFC 5961 §3.2: a RST outside the window is dropped silently. */
static void test_rfc5961_3_2_out_of_window_rst_ignored(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_RST, t.snd + 0x40000000u, 0, NULL, 0);
    tt_send(&t, TT_RST, t.snd - 1u, 0, NULL, 0);
    tt_expect_none(&t);
    assert_false(t.err_called);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_ACK), 0);
    tt_done(&t);
}

/* RFC 5961 §4.2: a SYN in a synchronized state, in or out of the window,
 * draws a challenge ACK and no reset. */
static void test_rfc5961_4_2_syn_in_established_challenge_ack(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_SYN, t.snd + 10, 0, NULL, 0);
    tt_expect_ack(&t, t.snd);
    tt_send(&t, TT_SYN, t.snd + 0x10000000u, 0, NULL, 0);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_SYN) + TU_CTR(t.e, TCP_DROP_OOW), 2);
    assert_false(t.err_called);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_done(&t);
}

/* RFC 5961 §5.2: SEG.ACK must lie in [SND.UNA - MAX.SND.WND, SND.NXT];
 * otherwise the segment (with its data) is dropped and an ACK sent. */
static void test_rfc5961_5_2_ack_outside_range_dropped(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_ACK, t.snd, t.rcv + 5000u, g_data, 10); /* acks unsent data */
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.rx_len, 0);
    tt_send(&t, TT_ACK, t.snd, t.rcv - 0x20000000u, g_data, 10); /* far below SND.UNA */
    tt_expect_ack(&t, t.snd);
    assert_int_equal(t.rx_len, 0);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_BADACK), 2);
    tt_data(&t, g_data, 10);
    assert_int_equal(t.rx_len, 10);
    tt_done(&t);
}

/* RFC 5961 §7: challenge ACKs are limited per stack (10 per second). */
static void test_rfc5961_7_challenge_ack_rate_limit(void **state)
{
    struct tt t;
    unsigned i, n = 0;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    for (i = 0; i < 15; i++) {
        tt_send(&t, TT_RST, t.snd + 1 + i, 0, NULL, 0);
    }
    while (tt_pop(&t, &g)) {
        n++;
    }
    assert_int_equal(n, 10);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_ACK), 10);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_RATELIMIT), 5);
    tu_advance(t.e, 1000);
    tt_send(&t, TT_RST, t.snd + 1, 0, NULL, 0);
    tt_expect_ack(&t, t.snd);
    assert_false(t.err_called);
    tt_done(&t);
}

/* -------------------------------------------------- SYN queue, cookies */

/* The SYN-ACK of an embryonic connection is retransmitted with the timer
 * doubled (RFC 6298 §5.5); after WISP_TCP_SYNMAXRTX the entry is dropped
 * and a late ACK gets a RST. */
static void test_synq_synack_retransmit_then_timeout(void **state)
{
    struct tt t;
    struct tt_seg g, first;
    uint32_t rto = WISP_TCP_RTO_INIT_MS;
    unsigned i;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &first);
    for (i = 0; i < WISP_TCP_SYNMAXRTX; i++) {
        tu_advance(t.e, rto - 1);
        tt_expect_none(&t);
        tu_advance(t.e, 1);
        tt_expect(&t, &g);
        assert_int_equal(g.flags, TT_SYN | TT_ACK);
        assert_int_equal(g.seq, first.seq);
        rto *= 2;
    }
    tu_advance(t.e, rto);
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_SYNQ_TIMEOUT), 1);
    tt_send(&t, TT_ACK, t.snd + 1, first.seq + 1, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_RST);
    assert_int_equal(t.accepts, 0);
    tt_done(&t);
}

/* A retransmitted SYN gets the same SYN-ACK again; a RST at IRS+1 removes
 * the embryo (RFC 9293 §3.10.7.4 SYN-RECEIVED). */
static void test_synq_duplicate_syn_and_rst(void **state)
{
    struct tt t;
    struct tt_seg g, h;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &h);
    assert_int_equal(h.seq, g.seq);
    assert_int_equal(h.flags, TT_SYN | TT_ACK);
    tt_send(&t, TT_RST, t.snd + 1, 0, NULL, 0);
    tt_send(&t, TT_ACK, t.snd + 1, g.seq + 1, NULL, 0);
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_RST);
    assert_int_equal(t.accepts, 0);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.4 SYN-RECEIVED: an unacceptable ACK gets a RST. */
static void test_synq_bad_ack_gets_rst(void **state)
{
    struct tt t;
    struct tt_seg g, h;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    tt_send(&t, TT_ACK, t.snd + 1, g.seq + 77, NULL, 0);
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_RST);
    assert_int_equal(h.seq, g.seq + 77);
    tt_done(&t);
}

/* RFC 5961 §3.2 / RFC 9293 §3.10.7.4 SYN-RECEIVED of a passive open: a
 * RST in the window the SYN-ACK offered but not at RCV.NXT draws a
 * challenge ACK <SEQ=ISS+1><ACK=IRS+1> (with the timestamp option when
 * negotiated) and leaves the embryo; a RST outside the window draws
 * nothing; the handshake then completes. */
static void test_synq_in_window_rst_challenge_ack(void **state)
{
    struct tt t;
    struct tt_seg g, h;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    t.o.ws = 7;
    tt_listen(&t, 4);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_true(g.wnd > 200);
    assert_int_equal(g.ws != 0xff, WISP_TCP_WND_SCALE != 0); /* never answered when compiled out */
    tt_send(&t, TT_RST, t.snd + 1u + 100u, 0, NULL, 0);
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_ACK);
    assert_int_equal(h.seq, g.seq + 1u);
    assert_int_equal(h.ack, t.snd + 1u);
    assert_int_equal(h.len, 0);
    assert_int_equal(h.ts, WISP_TCP_TIMESTAMPS != 0);
    if (WISP_TCP_TIMESTAMPS) {
        assert_int_equal(h.tsecr, t.clock);
    }
    /* RFC 7323 §2.2: scaled, unlike the SYN-ACK's */
    assert_int_equal(h.wnd, g.wnd >> (g.ws != 0xff ? g.ws : 0u));
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_ACK), 1);
    /* outside the window (beyond it, below RCV.NXT): silently dropped */
    tt_send(&t, TT_RST, t.snd + 1u + 0x40000000u, 0, NULL, 0);
    tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    tt_send(&t, TT_RST | TT_ACK, t.snd - 5u, g.seq + 1u, NULL, 0);
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_ACK), 1);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_RST), 4);
    /* the embryo is still there: the final ACK completes the open */
    t.snd += 1u;
    t.iss = g.seq;
    t.rcv = g.seq + 1u;
    t.clock += 1;
    tt_ack(&t);
    assert_non_null(t.pcb);
    assert_int_equal(t.accepts, 1);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_done(&t);
}

/* The embryo's challenge ACKs share the stack's RFC 5961 §7 budget; the
 * exact RST still removes the embryo (its final ACK then gets a RST). */
static void test_synq_challenge_ack_throttled_exact_rst_removes(void **state)
{
    struct tt t;
    struct tt_seg g, h;
    unsigned i, n = 0;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    for (i = 0; i < 15u; i++) {
        tt_send(&t, TT_RST, t.snd + 2u + i, 0, NULL, 0);
    }
    while (tt_pop(&t, &h)) {
        assert_int_equal(h.flags, TT_ACK);
        assert_false(h.ts);
        n++;
    }
    assert_int_equal(n, TCP_CHALLENGE_PER_S_TEST);
    assert_int_equal(TU_CTR(t.e, TCP_CHALLENGE_RATELIMIT), 15u - TCP_CHALLENGE_PER_S_TEST);
    tt_send(&t, TT_RST, t.snd + 1u, 0, NULL, 0);
    tt_expect_none(&t);
    tt_send(&t, TT_ACK, t.snd + 1u, g.seq + 1u, NULL, 0);
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_RST);
    assert_int_equal(t.accepts, 0);
    tt_done(&t);
}

#if WISP_TCP_SYNCOOKIES && WISP_TCP_TIMESTAMPS
/* RFC 4987 §3.6: when the listener's share of the SYN queue is used, the
 * SYN is answered with a cookie; its ACK creates the connection with the
 * MSS from the cookie and window scale / SACK from the cookie's TSval. */
static void test_rfc4987_syn_cookie_with_timestamps(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 1);
    tt_inject(&t, 39999, t.port, 5, 0, TT_SYN, 1000, NULL, NULL, 0); /* fills the share */
    tt_expect(&t, &g);
    t.o.mss = 1300;
    t.o.ws = 5;
    t.o.sackp = true;
    t.o.ts = true;
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(TU_CTR(t.e, TCP_SYNQ_FULL), 1);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_SENT), 1);
    assert_true(g.ts);
    assert_true(g.sackp);
    assert_int_not_equal(g.ws, 0xff);
    assert_int_equal(g.tsval & 0x3fu, 0x10u | 5u);
    t.snd++;
    t.rcv = g.seq + 1;
    tt_ack(&t);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_OK), 1);
    assert_int_equal(t.accepts, 1);
    assert_non_null(t.pcb);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 1200); /* the table entry at or below 1300 */
    assert_int_equal(info.snd_wscale, 5);
    assert_true(info.sack_ok);
    assert_true(info.ts_ok);
    tt_data(&t, g_data, 100);
    assert_int_equal(t.rx_len, 100);
    tt_done(&t);
}
#endif

#if WISP_TCP_SYNCOOKIES
/* Without timestamps the cookie cannot carry window scaling or SACK: the
 * SYN-ACK offers neither and the connection has neither. */
static void test_rfc4987_syn_cookie_without_timestamps(void **state)
{
    struct tt t;
    struct tt_seg g;
    struct wisp_tcp_info info;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 1);
    tt_inject(&t, 39999, t.port, 5, 0, TT_SYN, 1000, NULL, NULL, 0);
    tt_expect(&t, &g);
    t.o.mss = 1460;
    t.o.ws = 5;
    t.o.sackp = true;
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.ws, 0xff);
    assert_false(g.sackp);
    assert_false(g.ts);
    assert_int_equal(g.mss, 1460);
    t.snd++;
    t.rcv = g.seq + 1;
    tt_ack(&t);
    assert_int_equal(t.accepts, 1);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.mss, 1460);
    assert_int_equal(info.snd_wscale, 0);
    assert_false(info.sack_ok);
    tt_done(&t);
}
#endif

#if WISP_TCP_SYNCOOKIES
/* A wrong cookie, or one older than two periods, gets a RST (counted). */
static void test_rfc4987_bad_or_stale_cookie_rst(void **state)
{
    struct tt t;
    struct tt_seg g, h;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 1);
    tt_inject(&t, 39999, t.port, 5, 0, TT_SYN, 1000, NULL, NULL, 0);
    tt_expect(&t, &g);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g); /* cookie */
    tt_send(&t, TT_ACK, t.snd + 1, g.seq + 2, NULL, 0); /* wrong */
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_RST);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_BAD), 1);
    tu_advance(t.e, 3 * 64000);
    tu_clear(t.e); /* the other embryo's SYN-ACK retransmissions */
    tt_send(&t, TT_ACK, t.snd + 1, g.seq + 1, NULL, 0); /* right but stale */
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_RST);
    assert_int_equal(t.accepts, 0);
    tt_done(&t);
}
#endif

/* Take every free connection PCB of the stack; returns how many. */
static unsigned t_hold_pcbs(struct tt *t, struct wisp_tcp_pcb **hold)
{
    unsigned n = 0;
    while (n < WISP_TCP_PCB_COUNT && (hold[n] = wisp_tcp_new(t->e->s)) != NULL) {
        n++;
    }
    return n;
}

/* No PCB left at the final ACK of a SYN-queue entry (RFC 9293 §3.10.7.4
 * SYN-RECEIVED): the ACK is dropped (counted), no RST, the entry stays
 * and retransmits its SYN-ACK; once a PCB is free, the client's next data
 * segment completes the handshake and its data is delivered. */
static void test_pcb_pool_exhausted_at_final_ack_dropped(void **state)
{
    static struct wisp_tcp_pcb *hold[WISP_TCP_PCB_COUNT];
    struct tt t;
    struct tt_seg g, h;
    unsigned n, i;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 4);
    n = t_hold_pcbs(&t, hold);
    assert_true(n > 0);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    t.snd++;
    t.rcv = g.seq + 1u;
    tt_ack(&t);
    tt_expect_none(&t); /* no RST */
    assert_int_equal(TU_CTR(t.e, TCP_DROP_PCBMEM), 1);
    assert_int_equal(TU_CTR(t.e, TCP_RST_TX), 0);
    assert_int_equal(t.accepts, 0);
    /* the entry is kept: its SYN-ACK is retransmitted on its timer */
    tu_advance(t.e, WISP_TCP_RTO_INIT_MS);
    tt_expect(&t, &h);
    assert_int_equal(h.flags, TT_SYN | TT_ACK);
    assert_int_equal(h.seq, g.seq);
    assert_int_equal(TU_CTR(t.e, TCP_SYN_RETRANSMIT), 1);
    /* memory back: the client's first data segment completes it */
    wisp_tcp_close(hold[--n]);
    tt_data(&t, g_data, 100);
    assert_int_equal(t.accepts, 1);
    assert_non_null(t.pcb);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    assert_int_equal(t.rx_len, 100);
    assert_memory_equal(t.rx, g_data, 100);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_PCBMEM), 1);
    assert_int_equal(TU_CTR(t.e, TCP_RST_TX), 0);
    for (i = 0; i < n; i++) {
        wisp_tcp_close(hold[i]);
    }
    tt_done(&t);
}

#if WISP_TCP_SYNCOOKIES
/* The same for a SYN cookie's ACK (no entry exists): dropped silently and
 * counted, no RST; the client's retransmission, once a PCB is free, still
 * carries a valid cookie (RFC 4987 §3.6) and makes the connection. */
static void test_pcb_pool_exhausted_at_cookie_ack_dropped(void **state)
{
    static struct wisp_tcp_pcb *hold[WISP_TCP_PCB_COUNT];
    struct tt t;
    struct tt_seg g;
    unsigned n, i;
    (void)state;
    t_fresh(&t);
    tt_listen(&t, 1);
    tt_inject(&t, 39999, t.port, 5, 0, TT_SYN, 1000, NULL, NULL, 0); /* fills the backlog */
    tt_expect(&t, &g);
    n = t_hold_pcbs(&t, hold);
    assert_true(n > 0);
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g); /* the cookie */
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_SENT), 1);
    t.snd++;
    t.rcv = g.seq + 1u;
    tt_send(&t, TT_ACK | TT_PSH, t.snd, t.rcv, g_data, 100);
    tt_expect_none(&t); /* no RST */
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_OK), 1);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_PCBMEM), 1);
    assert_int_equal(TU_CTR(t.e, TCP_RST_TX), 0);
    assert_int_equal(t.accepts, 0);
    /* memory back: the client's retransmission makes the connection */
    wisp_tcp_close(hold[--n]);
    tu_advance(t.e, 1000);
    tu_clear(t.e); /* the other embryo's SYN-ACK retransmission */
    tt_data(&t, g_data, 100);
    assert_int_equal(TU_CTR(t.e, TCP_COOKIE_OK), 2);
    assert_int_equal(t.accepts, 1);
    assert_non_null(t.pcb);
    assert_int_equal(t.rx_len, 100);
    assert_memory_equal(t.rx, g_data, 100);
    assert_int_equal(TU_CTR(t.e, TCP_RST_TX), 0);
    for (i = 0; i < n; i++) {
        wisp_tcp_close(hold[i]);
    }
    tt_done(&t);
}
#endif

/* ------------------------------------------------------- ISN and ports */

/* RFC 6528 §3: ISN = M + F(4-tuple, key) with M ticking every 4 us: the
 * same 4-tuple one second later gets exactly 250000 more; another 4-tuple
 * at the same time gets an unrelated value. */
static void test_rfc6528_isn_clock_plus_keyed_hash(void **state)
{
    struct tt t;
    struct tt_seg a, b, c;
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    struct wisp_tcp_pcb *p;
    (void)state;
    t_fresh(&t);
    p = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(p, NULL, 5555), WISP_OK);
    assert_int_equal(wisp_tcp_connect(p, &dst, 80, NULL), WISP_OK);
    tt_expect(&t, &a);
    wisp_tcp_abort(p);
    p = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(p, NULL, 5556), WISP_OK);
    assert_int_equal(wisp_tcp_connect(p, &dst, 80, NULL), WISP_OK);
    tt_expect(&t, &b);
    wisp_tcp_abort(p);
    tu_advance(t.e, 1000);
    p = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(p, NULL, 5555), WISP_OK);
    assert_int_equal(wisp_tcp_connect(p, &dst, 80, NULL), WISP_OK);
    tt_expect(&t, &c);
    wisp_tcp_abort(p);
    assert_int_equal(c.seq - a.seq, 250000u);
    assert_true(b.seq - a.seq > 1000000u && a.seq - b.seq > 1000000u);
    tu_clear(t.e);
    tt_done(&t);
}

/* SipHash-2-4 reference vector (Aumasson & Bernstein, appendix A). */
static void test_siphash24_reference_vector(void **state)
{
    static const uint32_t key[4] = { 0x03020100u, 0x07060504u, 0x0b0a0908u, 0x0f0e0d0cu };
    uint8_t m[15];
    unsigned i;
    (void)state;
    for (i = 0; i < sizeof(m); i++) {
        m[i] = (uint8_t)i;
    }
    assert_true(tcp_siphash24(key, m, sizeof(m)) == 0xa129ca6149be45e5ull);
    assert_true(tcp_siphash24(key, m, 0) == 0x726fdb47dd0e0e31ull);
}

/* RFC 6056 §3.3.1: ephemeral ports come from the dynamic range, in no
 * predictable order, never twice. */
static void test_rfc6056_ephemeral_ports(void **state)
{
    enum { N = 40 };
    struct tt t;
    struct wisp_tcp_pcb *p[N];
    uint16_t port[N];
    unsigned i, j, seqs = 0;
    (void)state;
    t_fresh(&t);
    for (i = 0; i < N; i++) {
        wisp_ipaddr_t ip;
        p[i] = wisp_tcp_new(t.e->s);
        assert_non_null(p[i]);
        assert_int_equal(wisp_tcp_bind(p[i], NULL, 0), WISP_OK);
        wisp_tcp_local(p[i], &ip, &port[i]);
        assert_true(port[i] >= WISP_EPHEMERAL_MIN && port[i] <= WISP_EPHEMERAL_MAX);
        for (j = 0; j < i; j++) {
            assert_int_not_equal(port[i], port[j]);
        }
        if (i > 0 && port[i] == port[i - 1] + 1) {
            seqs++;
        }
    }
    assert_true(seqs < N / 2);
    for (i = 0; i < N; i++) {
        wisp_tcp_close(p[i]);
    }
    tt_done(&t);
}

/* ------------------------------------------------------------ TIME-WAIT */

/* Close actively from peer port pp; the PCB goes into a TIME-WAIT record. */
static void close_to_time_wait(struct tt *t, uint16_t pp)
{
    struct tt_seg g;
    t->pport = pp;
    t->pcb = NULL;
    tt_open_passive(t);
    assert_int_equal(wisp_tcp_close(t->pcb), WISP_OK);
    t->pcb = NULL;
    tt_expect(t, &g);
    t->rcv++;
    tt_send(t, TT_FIN | TT_ACK, t->snd, t->rcv, NULL, 0);
    t->snd++;
    tt_expect_ack(t, t->snd);
}

/* The records are a fixed pool: when full, the oldest is recycled
 * (counted); no PCB stays in use. Without compact records
 * (WISP_TCP_TW_COMPACT 0) TIME-WAIT holds PCBs: when the pool is full of
 * them, a new connection takes the oldest (counted, as lwIP). */
static void test_time_wait_records_recycle_oldest(void **state)
{
    const unsigned n = WISP_TCP_TW_COMPACT ? WISP_TCP_TW_COUNT : WISP_TCP_PCB_COUNT;
    struct tt t;
    unsigned i;
    (void)state;
    t_fresh(&t);
    for (i = 0; i < n + 1u; i++) {
        close_to_time_wait(&t, (uint16_t)(20000 + i));
    }
    assert_int_equal(TU_CTR(t.e, TCP_TW_RECYCLED), 1);
    assert_int_equal(t.e->s->pool[WISP_POOL_TCP_PCB].used, WISP_TCP_TW_COMPACT ? 0u : n);
    /* the oldest is gone (a FIN for it reaches the listener: RST), the
     * newest answers */
    t.pport = 20000;
    tt_send(&t, TT_FIN | TT_ACK, 1, 1, NULL, 0);
    {
        struct tt_seg g;
        tt_expect(&t, &g);
        assert_true(g.flags & TT_RST);
    }
    tt_done(&t);
}

/* RFC 1337 §3: TIME-WAIT ignores RST; the record still answers the FIN. */
static void test_rfc1337_time_wait_ignores_rst(void **state)
{
    struct tt t;
    (void)state;
    t_fresh(&t);
    close_to_time_wait(&t, 30000);
    tt_send(&t, TT_RST, t.snd, 0, NULL, 0);
    tt_expect_none(&t);
    tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd);
    tt_done(&t);
}

/* RFC 9293 §3.10.7.4 fifth ("if the ACK bit is off drop the segment") in
 * TIME-WAIT: a FIN, data or a bare segment without ACK draws nothing, in
 * or out of the window, and does not restart the 2 MSL timer; the
 * retransmitted FIN with ACK is acknowledged and restarts it. */
static void test_time_wait_fin_without_ack_dropped(void **state)
{
    struct tt t;
    uint32_t noack;
    (void)state;
    t_fresh(&t);
    close_to_time_wait(&t, 30002);
    noack = TU_CTR(t.e, TCP_DROP_NOACK);
    tt_send(&t, TT_FIN, t.snd - 1u, 0, NULL, 0);          /* the retransmitted FIN, no ACK */
    tt_send(&t, TT_FIN, t.snd, 0, NULL, 0);               /* a new FIN, no ACK */
    tt_send(&t, TT_FIN | TT_PSH, t.snd, 0, g_data, 10);   /* data + FIN, no ACK */
    tt_send(&t, 0, t.snd + 5000u, 0, g_data, 10);         /* data, no flags at all */
    tt_send(&t, TT_FIN, t.snd + 0x20000000u, 0, NULL, 0); /* far out of the window */
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_NOACK) - noack, 5);
    /* the record did not restart its 2 MSL for those: it expires on time */
    tu_advance(t.e, 2u * WISP_TCP_MSL_MS - 10u);
    tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd); /* still there; this one restarts 2 MSL */
    tu_advance(t.e, 2u * WISP_TCP_MSL_MS - 10u);
    tt_send(&t, TT_ACK, t.snd + 7u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd); /* out of window: ACK, record alive */
    tu_advance(t.e, 20u);
    {
        struct tt_seg g;
        tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
        tt_expect(&t, &g); /* the record expired: the listener resets */
        assert_int_equal(g.flags, TT_RST);
    }
    tt_done(&t);
}

/* The same rule on connections, in every synchronized state: a FIN (or
 * data) without ACK is dropped, with no ACK even when it is outside the
 * window or fails PAWS, and changes no state. */
static void test_synced_states_segment_without_ack_dropped(void **state)
{
    struct tt t;
    struct tt_seg g;
    uint32_t noack;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    tt_open_passive(&t);
    noack = TU_CTR(t.e, TCP_DROP_NOACK);
    /* ESTABLISHED */
    tt_send(&t, TT_FIN, t.snd, 0, NULL, 0);
    tt_send(&t, TT_PSH, t.snd, 0, g_data, 10);
    tt_send(&t, TT_FIN, t.snd + 0x30000000u, 0, NULL, 0); /* out of window */
    t.clock -= 1000u;
    tt_send(&t, TT_FIN, t.snd, 0, NULL, 0); /* fails PAWS */
    t.clock += 1000u;
    tt_expect_none(&t);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_NOACK) - noack, 4);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    assert_int_equal(t.rx_len, 0);
    assert_int_equal(t.eof, 0);
    /* FIN-WAIT-1 / FIN-WAIT-2 (the application closed its side; shut down
     * only, so the PCB stays ours) */
    assert_int_equal(wisp_tcp_shutdown(t.pcb, 0, 1), WISP_OK);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_FIN);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_1);
    tt_send(&t, TT_FIN, t.snd, 0, NULL, 0);
    tt_expect_none(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_1);
    t.rcv++;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_2);
    tt_send(&t, TT_FIN, t.snd, 0, NULL, 0);
    tt_expect_none(&t);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_FIN_WAIT_2);
    assert_int_equal(TU_CTR(t.e, TCP_DROP_NOACK) - noack, 6);
    /* the FIN with ACK is taken */
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    tt_expect_ack(&t, t.snd);
    t.pcb = NULL; /* TIME-WAIT record; the application saw ERR_CLSD */
    tt_done(&t);
}

/* CLOSE-WAIT and LAST-ACK drop a FIN without ACK too (no duplicate ACK). */
static void test_close_wait_last_ack_fin_without_ack_dropped(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    tt_open_passive(&t);
    tt_send(&t, TT_FIN | TT_ACK, t.snd, t.rcv, NULL, 0);
    t.snd++;
    tt_expect_ack(&t, t.snd);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_CLOSE_WAIT);
    tt_send(&t, TT_FIN, t.snd - 1u, 0, NULL, 0);
    tt_expect_none(&t);
    tt_send(&t, TT_FIN | TT_ACK, t.snd - 1u, t.rcv, NULL, 0);
    tt_expect_ack(&t, t.snd); /* the duplicate FIN with ACK is acknowledged */
    assert_int_equal(wisp_tcp_close(t.pcb), WISP_OK);
    tt_expect(&t, &g);
    assert_true(g.flags & TT_FIN);
    tt_send(&t, TT_FIN, t.snd - 1u, 0, NULL, 0);
    tt_expect_none(&t);
    t.rcv++;
    tt_ack(&t); /* LAST-ACK -> CLOSED */
    t.pcb = NULL;
    tt_done(&t);
}

#if WISP_TCP_TIMESTAMPS
/* RFC 6191: a SYN with a higher timestamp reopens a 4-tuple in TIME-WAIT;
 * one with a lower timestamp only gets an ACK. */
static void test_rfc6191_time_wait_reopen_with_newer_timestamp(void **state)
{
    struct tt t;
    struct tt_seg g;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    close_to_time_wait(&t, 30001);
    t.clock -= 100;
    tt_send(&t, TT_SYN, t.snd + 1000, 0, NULL, 0);
    tt_expect_ack(&t, t.snd);
    assert_int_equal(TU_CTR(t.e, TCP_TW_REOPEN), 0);
    t.clock += 1000;
    t.snd += 1000;
    t.pcb = NULL;
    tt_send(&t, TT_SYN, t.snd, 0, NULL, 0);
    tt_expect(&t, &g);
    assert_int_equal(g.flags, TT_SYN | TT_ACK);
    assert_int_equal(TU_CTR(t.e, TCP_TW_REOPEN), 1);
    t.snd++;
    t.rcv = g.seq + 1;
    tt_ack(&t);
    assert_int_equal(t.accepts, 2);
    assert_int_equal(wisp_tcp_state(t.pcb), WISP_TCP_ESTABLISHED);
    tt_done(&t);
}
#endif

/* connect refuses a 4-tuple that is in TIME-WAIT (WISP_ERR_USE); bind to
 * its port is allowed (SO_REUSEADDR-like). */
static void test_connect_refuses_tuple_in_time_wait(void **state)
{
    struct tt t;
    struct wisp_tcp_pcb *p;
    wisp_ipaddr_t dst = wisp_ipaddr4(tu_ip_peer());
    (void)state;
    t_fresh(&t);
    close_to_time_wait(&t, 30002);
    wisp_tcp_close(t.lpcb);
    t.lpcb = NULL;
    p = wisp_tcp_new(t.e->s);
    assert_int_equal(wisp_tcp_bind(p, NULL, t.port), WISP_OK);
    assert_int_equal(wisp_tcp_connect(p, &dst, 30002, NULL), WISP_ERR_USE);
    assert_int_equal(wisp_tcp_connect(p, &dst, 30003, NULL), WISP_OK);
    wisp_tcp_abort(p);
    tt_done(&t);
}

/* ---------------------------------------------------------- robustness */

static uint32_t fz_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x >> 11);
}

/* Random segments -- any flags, sequence and acknowledgment numbers near
 * and far from the connection's, garbage option bytes, any length -- into
 * a listener, a connection and closed ports: every one is processed or
 * dropped without a crash, a sanitizer report or a leak, and the
 * connection still delivers data in order afterwards. */
/* Without SYN cookies, the random SYNs may have filled the listener's
 * share of the SYN queue, and a new SYN would be dropped: let the
 * embryos time out (no connection is open now). */
static void fz_drain_synq(struct tt *t)
{
#if !WISP_TCP_SYNCOOKIES
    unsigned k;
    for (k = 0; k < 300u; k++) {
        tu_advance(t->e, 1000);
        tu_clear(t->e);
    }
#else
    (void)t;
#endif
}

static void test_random_segments_are_harmless(void **state)
{
    struct tt t;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint8_t opt[40];
    unsigned i;
    (void)state;
    t_fresh(&t);
    t.o.ts = true;
    t.o.sackp = true;
    t.o.ws = 2;
    tt_open_passive(&t);
    for (i = 0; i < 20000; i++) {
        struct tt_opts o;
        uint32_t r = fz_next(&x);
        uint32_t seq, ack;
        uint16_t len = (uint16_t)(fz_next(&x) % 1500u);
        uint16_t sport = (r & 3u) == 0 ? (uint16_t)fz_next(&x) : t.pport;
        uint16_t dport = (r & 12u) == 0 ? (uint16_t)fz_next(&x) : t.port;
        uint8_t flags = (uint8_t)fz_next(&x);
        unsigned k;
        memset(&o, 0, sizeof(o));
        o.ws = 0xff;
        switch (fz_next(&x) % 4u) {
        case 0:
            seq = t.snd + fz_next(&x) % 3000u;
            break;
        case 1:
            seq = t.snd - fz_next(&x) % 3000u;
            break;
        default:
            seq = fz_next(&x);
            break;
        }
        ack = (fz_next(&x) & 1u) ? t.rcv - fz_next(&x) % 100u : fz_next(&x);
        if (fz_next(&x) & 1u) {
            o.rawlen = (uint8_t)(fz_next(&x) % 40u);
            for (k = 0; k < o.rawlen; k++) {
                opt[k] = (uint8_t)fz_next(&x);
                if ((fz_next(&x) & 7u) == 0) {
                    opt[k] = (uint8_t)(fz_next(&x) % 9u); /* plausible kinds */
                }
            }
            o.raw = opt;
        } else {
            o.ts = (fz_next(&x) & 1u) != 0;
            o.tsval = (fz_next(&x) & 1u) ? t.clock + fz_next(&x) % 10u : fz_next(&x);
            o.tsecr = fz_next(&x);
            o.nsack = (uint8_t)(fz_next(&x) % 5u);
            for (k = 0; k < o.nsack; k++) {
                o.sack[k][0] = t.rcv + fz_next(&x) % 5000u - 2500u;
                o.sack[k][1] = o.sack[k][0] + fz_next(&x) % 3000u;
            }
            if (o.nsack > 3 && o.ts) {
                o.nsack = 3;
            }
        }
        tt_inject(&t, sport, dport, seq, ack, flags, (uint16_t)fz_next(&x), &o, g_data, len);
        if ((i & 255u) == 0) {
            tu_advance(t.e, fz_next(&x) % 300u);
        }
        tu_clear(t.e);
        if (t.pcb == NULL) {
            /* reset by a lucky RST: open a fresh connection */
            fz_drain_synq(&t);
            t.pport++;
            t.snd += 100000u;
            t.clock += 10;
            tt_open_passive(&t);
            tu_clear(t.e);
        }
    }
    /* the connection still works: random in-window segments may have
     * moved RCV.NXT, TS.Recent or closed the peer's side, so resynchronise
     * from the PCB (or use a fresh connection) */
    tu_advance(t.e, 1000);
    tu_clear(t.e);
    if (t.pcb == NULL || wisp_tcp_state(t.pcb) != WISP_TCP_ESTABLISHED) {
        if (t.pcb != NULL) {
            wisp_tcp_abort(t.pcb);
            tu_clear(t.e);
        }
        fz_drain_synq(&t);
        t.pport++;
        t.snd += 100000u;
        t.clock += 10;
        tt_open_passive(&t);
    } else {
        t.snd = t.pcb->rcv_nxt;
        t.rcv = t.pcb->snd_nxt;
#if WISP_TCP_TIMESTAMPS
        t.clock = t.pcb->ts_recent + 1u;
#else
        t.clock += 10;
#endif
    }
    tu_clear(t.e);
    t.rx_len = 0;
    tt_data(&t, g_data, 500);
    assert_int_equal(t.rx_len, 500);
    assert_memory_equal(t.rx, g_data, 500);
    tu_clear(t.e);
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc5961_3_2_in_window_rst_challenge_ack),
        cmocka_unit_test(test_rfc5961_3_2_out_of_window_rst_ignored),
        cmocka_unit_test(test_rfc5961_4_2_syn_in_established_challenge_ack),
        cmocka_unit_test(test_rfc5961_5_2_ack_outside_range_dropped),
        cmocka_unit_test(test_rfc5961_7_challenge_ack_rate_limit),
        cmocka_unit_test(test_synq_synack_retransmit_then_timeout),
        cmocka_unit_test(test_synq_duplicate_syn_and_rst),
        cmocka_unit_test(test_synq_bad_ack_gets_rst),
        cmocka_unit_test(test_synq_in_window_rst_challenge_ack),
        cmocka_unit_test(test_synq_challenge_ack_throttled_exact_rst_removes),
#if WISP_TCP_SYNCOOKIES && WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc4987_syn_cookie_with_timestamps),
#endif
#if WISP_TCP_SYNCOOKIES
        cmocka_unit_test(test_rfc4987_syn_cookie_without_timestamps),
#endif
#if WISP_TCP_SYNCOOKIES
        cmocka_unit_test(test_rfc4987_bad_or_stale_cookie_rst),
#endif
        cmocka_unit_test(test_pcb_pool_exhausted_at_final_ack_dropped),
#if WISP_TCP_SYNCOOKIES
        cmocka_unit_test(test_pcb_pool_exhausted_at_cookie_ack_dropped),
#endif
        cmocka_unit_test(test_rfc6528_isn_clock_plus_keyed_hash),
        cmocka_unit_test(test_siphash24_reference_vector),
        cmocka_unit_test(test_rfc6056_ephemeral_ports),
        cmocka_unit_test(test_time_wait_records_recycle_oldest),
        cmocka_unit_test(test_rfc1337_time_wait_ignores_rst),
        cmocka_unit_test(test_time_wait_fin_without_ack_dropped),
        cmocka_unit_test(test_synced_states_segment_without_ack_dropped),
        cmocka_unit_test(test_close_wait_last_ack_fin_without_ack_dropped),
#if WISP_TCP_TIMESTAMPS
        cmocka_unit_test(test_rfc6191_time_wait_reopen_with_newer_timestamp),
#endif
        cmocka_unit_test(test_connect_refuses_tuple_in_time_wait),
        cmocka_unit_test(test_random_segments_are_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
