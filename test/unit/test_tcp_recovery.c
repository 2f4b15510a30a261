/**
 * @file test_tcp_recovery.c
 * Segment-level TCP tests, phase 2 (send side): fast retransmit and
 * NewReno (RFC 5681 §3.2, RFC 6582), limited transmit (RFC 3042), SACK
 * loss recovery (RFC 6675), the retransmission timeout's loss window and
 * scoreboard reset, sender SWS avoidance, the persist timer with
 * zero-window probes and keepalive (RFC 9293 §3.8).
 *
 * The peer announces MSS 1000 without timestamps, so every full segment
 * carries 1000 bytes and the initial window is 10 segments (RFC 6928).
 */
#include "tcp_testlib.h"

#define SEG 1000u

static uint8_t g_data[200000];

/* A connection with MSS 1000; sack: the peer offers SACK. These are
 * NewReno's rules (RFC 5681 / 6582): the connection uses NewReno whatever
 * the build's default congestion control (WISP_TCP_CC_DEFAULT). */
static void t_open(struct tt *t, bool sack)
{
    tt_init(t);
    tt_pattern(g_data, sizeof(g_data), 0);
    t->o.mss = SEG;
    t->o.sackp = sack;
    tt_open_passive(t);
    assert_int_equal(wisp_tcp_set_cc(t->pcb, WISP_TCP_CC_NEWRENO), WISP_OK);
}

/* Pop every pending segment into g[] (max n); returns how many. */
static unsigned pop_all(struct tt *t, struct tt_seg *g, unsigned n)
{
    unsigned i = 0;
    while (i < n && tt_pop(t, &g[i])) {
        i++;
    }
    return i;
}

/* A duplicate ACK (ack of base) optionally carrying SACK blocks. */
static void dupack(struct tt *t, uint32_t ack, unsigned nsack, const uint32_t (*blocks)[2])
{
    struct tt_opts o = t->o;
    unsigned i;
    o.nsack = (uint8_t)nsack;
    for (i = 0; i < nsack; i++) {
        o.sack[i][0] = blocks[i][0];
        o.sack[i][1] = blocks[i][1];
    }
    tt_inject(t, t->pport, t->port, t->snd, ack, TT_ACK, t->wnd, &o, NULL, 0);
}

/* Write len bytes and let the initial window go out; returns the number
 * of segments sent (their copies in g). */
static unsigned send_initial(struct tt *t, uint32_t len, struct tt_seg *g, unsigned max)
{
    assert_int_equal(wisp_tcp_write(t->pcb, g_data, len, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t->e, 0);
    return pop_all(t, g, max);
}

/* RFC 5681 §3.2 + RFC 3042 + RFC 6582: the first two duplicate ACKs each
 * release one new segment (limited transmit); the third triggers the fast
 * retransmission of the first unacknowledged segment, ssthresh =
 * FlightSize/2, cwnd = ssthresh + 3 SMSS; each further duplicate ACK
 * inflates cwnd by one SMSS. */
static void test_rfc5681_3_2_fast_retransmit_and_limited_transmit(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    struct wisp_tcp_info info;
    uint32_t base;
    unsigned n, i;
    (void)state;
    t_open(&t, false);
    base = t.rcv;
    n = send_initial(&t, 20 * SEG, g, 32);
    assert_int_equal(n, 10); /* RFC 6928 initial window */
    dupack(&t, base, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1); /* RFC 3042 */
    assert_int_equal(g[0].seq, base + 10 * SEG);
    dupack(&t, base, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base + 11 * SEG);
    dupack(&t, base, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1); /* the fast retransmission, nothing else */
    assert_int_equal(g[0].seq, base);
    assert_int_equal(g[0].len, SEG);
    assert_memory_equal(g[0].data, g_data, SEG);
    assert_int_equal(TU_CTR(t.e, TCP_FAST_RETRANSMIT), 1);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.ssthresh, 6 * SEG);
    assert_int_equal(info.cwnd, 9 * SEG);
#if WISP_TCP_PCB_STATS
    assert_int_equal(info.fast_recoveries, 1);
#endif
    /* inflation: three more dupacks bring cwnd to 12 SMSS = pipe; the
     * fourth lets one new segment out */
    for (i = 0; i < 3; i++) {
        dupack(&t, base, 0, NULL);
        assert_int_equal(pop_all(&t, g, 32), 0);
    }
    dupack(&t, base, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base + 12 * SEG);
    tt_done(&t);
}

/* RFC 6582 §3.2 step 5: a partial ACK retransmits the next hole at once
 * and deflates cwnd; the full ACK ends recovery with
 * cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS). */
static void test_rfc6582_partial_ack_then_full_ack(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    struct wisp_tcp_info info;
    uint32_t base, cwnd0;
    unsigned n;
    (void)state;
    t_open(&t, false);
    base = t.rcv;
    n = send_initial(&t, 10 * SEG, g, 32);
    assert_int_equal(n, 10);
    dupack(&t, base, 0, NULL);
    dupack(&t, base, 0, NULL);
    dupack(&t, base, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base);
    wisp_tcp_get_info(t.pcb, &info);
    cwnd0 = info.cwnd;
    /* segments 1..4 arrived, 5 was lost too */
    dupack(&t, base + 4 * SEG, 0, NULL);
    n = pop_all(&t, g, 32);
    assert_true(n >= 1);
    assert_int_equal(g[0].seq, base + 4 * SEG);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cwnd, cwnd0 - 4 * SEG + SEG);
    /* full ACK */
    dupack(&t, base + 10 * SEG, 0, NULL);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cwnd, WISP_MIN(info.ssthresh, SEG + SEG));
    assert_int_equal(info.unacked, 0);
    assert_int_equal(t.sent_total, 10 * SEG);
    tt_done(&t);
}

#if WISP_TCP_SACK
/* RFC 6675 §4-5: with SACK a hole with three SACKed segments above it is
 * lost at once (IsLost), recovery starts with cwnd = ssthresh =
 * FlightSize/2, and only what "pipe" allows is sent. */
static void test_rfc6675_sack_loss_detection(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    struct wisp_tcp_info info;
    uint32_t base, b[1][2];
    unsigned n;
    (void)state;
    t_open(&t, true);
    base = t.rcv;
    n = send_initial(&t, 12 * SEG, g, 32);
    assert_int_equal(n, 10);
    b[0][0] = base + SEG;
    b[0][1] = base + 4 * SEG; /* segments 2..4 */
    dupack(&t, base, 1, b);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base);
    assert_int_equal(TU_CTR(t.e, TCP_FAST_RETRANSMIT), 1);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.ssthresh, 5 * SEG);
    assert_int_equal(info.cwnd, 5 * SEG);
    /* more SACKed: pipe = 1 (rtx) + 3 (8..10) = 4 segments -> one new */
    b[0][1] = base + 7 * SEG;
    dupack(&t, base, 1, b);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base + 10 * SEG);
    /* the hole is not sent twice */
    dupack(&t, base, 1, b);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 0);
    tt_done(&t);
}
#endif

#if WISP_TCP_SACK
/* RFC 6675: several holes are all retransmitted as pipe allows. */
static void test_rfc6675_two_holes_both_retransmitted(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    uint32_t base, b[2][2];
    unsigned n;
    (void)state;
    t_open(&t, true);
    base = t.rcv;
    n = send_initial(&t, 10 * SEG, g, 32);
    assert_int_equal(n, 10);
    b[0][0] = base + 4 * SEG;
    b[0][1] = base + 10 * SEG; /* 5..10 */
    b[1][0] = base + SEG;
    b[1][1] = base + 3 * SEG; /* 2..3; holes at 1 and 4 */
    dupack(&t, base, 2, b);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].seq, base);
    assert_int_equal(g[1].seq, base + 3 * SEG);
    assert_memory_equal(g[1].data, g_data + 3 * SEG, SEG);
    dupack(&t, base + 10 * SEG, 0, NULL);
    assert_int_equal(t.sent_total, 10 * SEG);
    tt_done(&t);
}
#endif

/* RFC 2018 §4 / RFC 6675 §5: SACK blocks below SND.UNA (D-SACK) or beyond
 * SND.NXT are ignored. */
static void test_rfc6675_invalid_sack_blocks_ignored(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    uint32_t base, b[2][2];
    (void)state;
    t_open(&t, true);
    base = t.rcv;
    (void)send_initial(&t, 10 * SEG, g, 32);
    b[0][0] = base - 500;
    b[0][1] = base; /* below SND.UNA */
    b[1][0] = base + 9 * SEG;
    b[1][1] = base + 20 * SEG; /* beyond SND.NXT */
    dupack(&t, base, 2, b);
    assert_int_equal(pop_all(&t, g, 32), 0);
    assert_int_equal(TU_CTR(t.e, TCP_FAST_RETRANSMIT), 0);
    tt_done(&t);
}

#if WISP_TCP_SACK
/* RFC 6298 §5.4-5.6 + RFC 5681 §3.1: on timeout only the first segment
 * is resent (loss window = 1 SMSS), ssthresh = FlightSize/2; RFC 6675
 * §5.1 / RFC 2018 §8: SACK information is forgotten, so a SACKed segment
 * is retransmitted after the timeout too. */
static void test_rfc6675_5_1_rto_loss_window_and_scoreboard_reset(void **state)
{
    struct tt t;
    struct tt_seg g[32];
    struct wisp_tcp_info info;
    uint32_t base, b[1][2];
    unsigned n;
    (void)state;
    t_open(&t, true);
    base = t.rcv;
    n = send_initial(&t, 4 * SEG, g, 32);
    assert_int_equal(n, 4);
    b[0][0] = base + 2 * SEG;
    b[0][1] = base + 3 * SEG; /* segment 3 SACKed */
    dupack(&t, base, 1, b);
    assert_int_equal(pop_all(&t, g, 32), 0);
    wisp_tcp_get_info(t.pcb, &info);
    tu_advance(t.e, info.rto_ms);
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base);
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cwnd, SEG);
    assert_int_equal(info.ssthresh, 2 * SEG);
#if WISP_TCP_PCB_STATS
    assert_int_equal(info.timeouts, 1);
#endif
    assert_int_equal(TU_CTR(t.e, TCP_TIMEOUT), 1);
    dupack(&t, base + SEG, 0, NULL); /* slow start: cwnd 2 SMSS */
    n = pop_all(&t, g, 32);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].seq, base + SEG);
    assert_int_equal(g[1].seq, base + 2 * SEG); /* the formerly SACKed one */
    tt_done(&t);
}
#endif

/* RFC 5681 §3.1: slow start grows cwnd by one SMSS per ACK of a full
 * segment while the window limits the sender. */
static void test_rfc5681_3_1_slow_start(void **state)
{
    struct tt t;
    struct tt_seg g[64];
    struct wisp_tcp_info info;
    uint32_t base;
    unsigned n;
    (void)state;
    t_open(&t, false);
    base = t.rcv;
    n = send_initial(&t, 40 * SEG, g, 64);
    assert_int_equal(n, 10);
    dupack(&t, base + SEG, 0, NULL);
    n = pop_all(&t, g, 64);
    assert_int_equal(n, 2); /* one freed + one from growth */
    wisp_tcp_get_info(t.pcb, &info);
    assert_int_equal(info.cwnd, 11 * SEG);
    tt_done(&t);
}

/* RFC 9293 §3.8.6.2.1: with a window much smaller than the largest one
 * offered, no tiny segment is sent until the override (persist) timeout
 * sends what fits. */
static void test_rfc9293_3_8_6_2_1_sender_sws_avoidance(void **state)
{
    struct tt t;
    struct tt_seg g[8];
    struct wisp_tcp_info info;
    unsigned n;
    (void)state;
    t_open(&t, false);
    t.wnd = 300;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, SEG, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    assert_int_equal(pop_all(&t, g, 8), 0);
    wisp_tcp_get_info(t.pcb, &info);
    tu_advance(t.e, info.rto_ms);
    n = pop_all(&t, g, 8);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].len, 300);
    assert_memory_equal(g[0].data, g_data, 300);
    tt_done(&t);
}

/* RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: a zero window is probed with one
 * octet, the interval backs off, the connection survives as long as the
 * probes are answered, and data flows when the window opens. */
static void test_rfc9293_3_8_6_1_persist_zero_window_probes(void **state)
{
    struct tt t;
    struct tt_seg g[8];
    struct wisp_tcp_info info;
    uint32_t base, due, gap;
    unsigned n, i;
    (void)state;
    t_open(&t, false);
    base = t.rcv;
    t.wnd = 0;
    tt_ack(&t);
    assert_int_equal(wisp_tcp_write(t.pcb, g_data, 3000, WISP_TCP_WRITE_COPY), WISP_OK);
    tu_advance(t.e, 0);
    assert_int_equal(pop_all(&t, g, 8), 0);
    wisp_tcp_get_info(t.pcb, &info);
    due = info.rto_ms;
    tu_advance(t.e, due - 1);
    assert_int_equal(pop_all(&t, g, 8), 0);
    tu_advance(t.e, 1);
    n = pop_all(&t, g, 8);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, base);
    assert_int_equal(g[0].len, 1);
    assert_int_equal(TU_CTR(t.e, TCP_PERSIST), 1);
    gap = due;
    for (i = 0; i < WISP_TCP_MAXRTX + 3u; i++) {
        gap = gap * 2 > WISP_TCP_RTO_MAX_MS ? WISP_TCP_RTO_MAX_MS : gap * 2;
        tt_ack(&t); /* answered: still a zero window */
        tu_advance(t.e, gap - 1);
        assert_int_equal(pop_all(&t, g, 8), 0);
        tu_advance(t.e, 1);
        n = pop_all(&t, g, 8);
        assert_int_equal(n, 1);
        assert_int_equal(g[0].seq, base);
        assert_int_equal(g[0].len, 1);
    }
    assert_false(t.err_called);
    /* the window opens (the probe byte was not taken) */
    t.wnd = 10000;
    tt_ack(&t);
    n = pop_all(&t, g, 8);
    assert_int_equal(n, 4);
    assert_int_equal(g[0].seq, base);
    assert_int_equal(g[0].len, 1);
    assert_int_equal(g[1].seq, base + 1);
    assert_int_equal(g[1].len, SEG - 1);
    assert_memory_equal(g[1].data, g_data + 1, g[1].len);
    assert_int_equal(g[3].seq, base + 2 * SEG);
    t.rcv = base + 3000;
    tt_ack(&t);
    assert_int_equal(t.sent_total, 3000);
    tt_done(&t);
}

/* RFC 9293 §3.8.4 / RFC 1122 §4.2.3.6: after the idle time a probe
 * <SEQ=SND.NXT-1> without data; an answer resets the count; unanswered
 * probes abort the connection with WISP_ERR_ABRT after the count. */
static void test_rfc9293_3_8_4_keepalive(void **state)
{
    struct tt t;
    struct tt_seg g[8];
    unsigned n;
    (void)state;
    t_open(&t, false);
    wisp_tcp_keepalive(t.pcb, true, 1000, 500, 3);
    tu_advance(t.e, 999);
    assert_int_equal(pop_all(&t, g, 8), 0);
    tu_advance(t.e, 1);
    n = pop_all(&t, g, 8);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].seq, t.rcv - 1u);
    assert_int_equal(g[0].len, 0);
    assert_int_equal(g[0].ack, t.snd);
    tt_ack(&t); /* answered */
    tu_advance(t.e, 999);
    assert_int_equal(pop_all(&t, g, 8), 0);
    tu_advance(t.e, 1);
    assert_int_equal(pop_all(&t, g, 8), 1);
    tu_advance(t.e, 500);
    assert_int_equal(pop_all(&t, g, 8), 1);
    tu_advance(t.e, 500);
    assert_int_equal(pop_all(&t, g, 8), 1);
    assert_false(t.err_called);
    tu_advance(t.e, 500);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_ABRT);
    n = pop_all(&t, g, 8);
    assert_int_equal(n, 1);
    assert_true(g[0].flags & TT_RST);
    assert_int_equal(TU_CTR(t.e, TCP_KEEPALIVE), 4);
    assert_int_equal(TU_CTR(t.e, TCP_ABORT_KEEPALIVE), 1);
    tt_done(&t);
}

/* A keepalive idle time beyond the 65.5 s a near deadline holds
 * (tcp_timer.c: a far deadline, in 1024 ms units): the probe comes no
 * earlier than the idle time and less than 1024 ms after it, although the
 * poll timer moves the base of the deadlines every 10 s meanwhile; the
 * next probe (70 s interval: far too) likewise; then the abort. */
static void test_keepalive_far_deadline(void **state)
{
    struct tt t;
    struct tt_seg g[8];
    unsigned waited = 0;
    (void)state;
    t_open(&t, false);
    wisp_tcp_poll(t.pcb, tt_rec_poll, 20); /* every 10 s */
    wisp_tcp_keepalive(t.pcb, true, 100000, 70000, 2);
    tu_advance(t.e, 99999);
    assert_int_equal(pop_all(&t, g, 8), 0);
    assert_int_equal(t.polls, 9);
    while (pop_all(&t, g, 8) == 0 && waited < 5000u) {
        tu_advance(t.e, 1);
        waited++;
    }
    assert_true(waited >= 1u && waited <= 1024u);
    assert_int_equal(g[0].seq, t.rcv - 1u);
    assert_int_equal(g[0].len, 0);
    tu_advance(t.e, 69999);
    assert_int_equal(pop_all(&t, g, 8), 0);
    waited = 0;
    while (pop_all(&t, g, 8) == 0 && waited < 5000u) {
        tu_advance(t.e, 1);
        waited++;
    }
    assert_true(waited >= 1u && waited <= 1024u);
    assert_false(t.err_called);
    tu_advance(t.e, 71100);
    assert_true(t.err_called);
    assert_int_equal(t.err, WISP_ERR_ABRT);
    assert_int_equal(TU_CTR(t.e, TCP_KEEPALIVE), 2);
    assert_int_equal(TU_CTR(t.e, TCP_ABORT_KEEPALIVE), 1);
    tt_done(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc5681_3_2_fast_retransmit_and_limited_transmit),
        cmocka_unit_test(test_rfc6582_partial_ack_then_full_ack),
#if WISP_TCP_SACK
        cmocka_unit_test(test_rfc6675_sack_loss_detection),
#endif
#if WISP_TCP_SACK
        cmocka_unit_test(test_rfc6675_two_holes_both_retransmitted),
#endif
        cmocka_unit_test(test_rfc6675_invalid_sack_blocks_ignored),
#if WISP_TCP_SACK
        cmocka_unit_test(test_rfc6675_5_1_rto_loss_window_and_scoreboard_reset),
#endif
        cmocka_unit_test(test_rfc5681_3_1_slow_start),
        cmocka_unit_test(test_rfc9293_3_8_6_2_1_sender_sws_avoidance),
        cmocka_unit_test(test_rfc9293_3_8_6_1_persist_zero_window_probes),
        cmocka_unit_test(test_rfc9293_3_8_4_keepalive),
        cmocka_unit_test(test_keepalive_far_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
