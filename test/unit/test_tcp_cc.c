/**
 * @file test_tcp_cc.c
 * Congestion control algorithms (src/core/tcp_cc.h: NewReno, CUBIC)
 * driven through their operations on a bare PCB: the test sets what the
 * core would (mss, cwnd, ssthresh, srtt8), plays synthetic ACK streams in
 * virtual time, and compares CUBIC's windows with RFC 9438 computed in
 * double precision.
 */
#include "testutil.h"

#include "../../src/core/tcp_cc.h"
#include "../../src/core/tcp_priv.h" /* TF_CC_MASK */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ NewReno */

/** One round trip of full-sized ACKs through ops (no model). */
static void ops_round(const struct tcp_cc_ops *ops, struct wisp_tcp_pcb *pcb, uint32_t *now, uint32_t rtt_ms)
{
    uint32_t n = pcb->cwnd / pcb->mss, i;
    for (i = 0; i < (n ? n : 1u); i++) {
        ops->cong_avoid(pcb, pcb->mss, *now + (uint32_t)((uint64_t)i * rtt_ms / (n ? n : 1u)));
    }
    *now += rtt_ms;
}

/** NewReno's operations (tcp_cc.c): RFC 5681 §3.1, one SMSS per window
 *  of acknowledged bytes; eq. (4) ssthresh = max(FlightSize / 2, 2 SMSS)
 *  for a loss and a timeout alike. */
static void test_newreno_ops(void **state)
{
    struct wisp_tcp_pcb *pcb = calloc(1, sizeof(*pcb));
    uint32_t now = 0;
    int r;
    (void)state;
    assert_non_null(pcb);
    assert_string_equal(tcp_cc_newreno.name, "reno");
#if WISP_TCP_CUBIC
    assert_string_equal(tcp_cc_cubic.name, "cubic");
#endif
    pcb->mss = 1000;
    pcb->cwnd = 10000;
    tcp_cc_newreno.init(pcb, now);
    for (r = 0; r < 20; r++) {
        ops_round(&tcp_cc_newreno, pcb, &now, 100);
        assert_int_equal(pcb->cwnd, 10000u + 1000u * (uint32_t)(r + 1));
    }
    assert_int_equal(tcp_cc_newreno.ssthresh(pcb, 30000, false, now), 15000u);
    assert_int_equal(tcp_cc_newreno.ssthresh(pcb, 30000, true, now), 15000u);
    assert_int_equal(tcp_cc_newreno.ssthresh(pcb, 2500, false, now), 2000u);
    free(pcb);
}

#if WISP_TCP_CUBIC

#define C_CUBIC 0.4
#define BETA 0.7

/* ------------------------------------------------ RFC 9438 in double */
/** CUBIC by the RFC's formulas in double: the reference. */
struct model {
    double mss, cwnd, w_max, k_s, w_est, prior, epoch_ms;
    bool on, rto;
};

static double m_wcubic(const struct model *m, double t_s)
{
    /* §4.2 Figure 1, in bytes */
    return C_CUBIC * pow(t_s - m->k_s, 3) * m->mss + m->w_max;
}

static double m_ssthresh(struct model *m, bool rto)
{
    m->w_max = m->cwnd < m->w_max ? m->cwnd * (1 + BETA) / 2 : m->cwnd; /* §4.7 */
    m->prior = m->cwnd;
    m->on = false;
    m->rto = rto;
    return fmax(m->cwnd * BETA, 2 * m->mss);                            /* §4.6 */
}

static void m_ack(struct model *m, double acked, double now_ms, double rtt_ms)
{
    double t, w, target, alpha;
    if (!m->on) {
        m->on = true;
        m->epoch_ms = now_ms;
        m->w_est = m->cwnd;
        if (m->prior == 0) {
            m->prior = m->cwnd;
        }
        if (m->w_max > m->cwnd && !m->rto) {
            m->k_s = cbrt((m->w_max - m->cwnd) / (C_CUBIC * m->mss)); /* §4.2 Figure 2 */
        } else {
            m->k_s = 0;
            m->w_max = m->cwnd;
        }
        m->rto = false;
    }
    t = (now_ms - m->epoch_ms) / 1000.0;
    alpha = m->w_est >= m->prior ? 1.0 : 3 * (1 - BETA) / (1 + BETA);  /* §4.3 */
    m->w_est += alpha * acked * m->mss / m->cwnd;
    w = m_wcubic(m, t);
    if (w < m->w_est) {
        m->cwnd = fmax(m->cwnd, m->w_est);
    } else {
        target = fmin(fmax(m_wcubic(m, t + rtt_ms / 1000.0), m->cwnd), 1.5 * m->cwnd);
        m->cwnd += (target - m->cwnd) * acked / m->cwnd;
    }
}

/* ------------------------------------------------------------ drivers */
static struct wisp_tcp_pcb *new_pcb(uint16_t mss, uint32_t cwnd, uint32_t rtt_ms)
{
    struct wisp_tcp_pcb *pcb = calloc(1, sizeof(*pcb));
    assert_non_null(pcb);
    pcb->mss = mss;
    pcb->cwnd = cwnd;
    pcb->ssthresh = 0x7fffffffu;
    pcb->srtt8 = rtt_ms * 8u;
    tcp_cc_cubic.init(pcb, 0);
    return pcb;
}

/** A congestion event on both (cwnd from ssthresh afterwards, as the core
 *  does when recovery ends); returns the new ssthresh. */
static uint32_t loss(struct wisp_tcp_pcb *pcb, struct model *m, bool rto, uint32_t now)
{
    uint32_t ss = tcp_cc_cubic.ssthresh(pcb, pcb->cwnd, rto, now);
    double mss_ss = m ? m_ssthresh(m, rto) : 0;
    if (m) {
        assert_true(fabs(mss_ss - ss) <= 1.0);
        m->cwnd = ss;
    }
    pcb->ssthresh = ss;
    pcb->cwnd = ss;
    return ss;
}

/** One round trip of full-sized ACKs (one per segment of cwnd), spread over
 *  the RTT, to the PCB and (if given) to the model. */
static void round_trip(struct wisp_tcp_pcb *pcb, struct model *m, uint32_t *now, uint32_t rtt_ms)
{
    uint32_t n = pcb->cwnd / pcb->mss, i;
    if (n == 0) {
        n = 1;
    }
    for (i = 0; i < n; i++) {
        uint32_t at = *now + (uint32_t)((uint64_t)i * rtt_ms / n);
        tcp_cc_cubic.cong_avoid(pcb, pcb->mss, at);
        if (m) {
            m_ack(m, pcb->mss, (double)at, rtt_ms);
        }
    }
    *now += rtt_ms;
}

static void assert_close(double got, double want, double rel, const char *what, int round)
{
    if (fabs(got - want) > rel * want) {
        fail_msg("%s round %d: %.1f, expected %.1f (+- %.2f%%)", what, round, got, want, rel * 100);
    }
}

/* ------------------------------------------------------------- tests */
static void test_cbrt_exact(void **state)
{
    uint64_t y, x;
    unsigned i;
    (void)state;
    /* every cube up to 2^64 and its predecessor */
    for (y = 1; y <= 2642245u; y++) {
        uint64_t c = y * y * y;
        if (tcp_cubic_cbrt(c) != y || tcp_cubic_cbrt(c - 1) != y - 1) {
            fail_msg("cbrt around %llu^3", (unsigned long long)y);
        }
    }
    assert_int_equal(tcp_cubic_cbrt(0), 0);
    assert_int_equal(tcp_cubic_cbrt(UINT64_MAX), 2642245u);
    /* pseudo-random x: y^3 <= x < (y+1)^3 */
    x = 88172645463325252ull;
    for (i = 0; i < 200000u; i++) {
        unsigned __int128 lo, hi;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = x >> (i % 64u);
        y = tcp_cubic_cbrt(v);
        lo = (unsigned __int128)y * y * y;
        hi = (unsigned __int128)(y + 1) * (y + 1) * (y + 1);
        if (!(lo <= v && v < hi)) {
            fail_msg("cbrt(%llu) = %llu", (unsigned long long)v, (unsigned long long)y);
        }
    }
}

/** §4.2 Figure 2: K for several W_max and SMSS. */
static void test_k_for_several_wmax(void **state)
{
    static const uint32_t segs[] = {4, 10, 100, 1000, 10000, 100000};
    static const uint16_t msss[] = {536, 1460, 9000};
    unsigned i, j;
    (void)state;
    for (j = 0; j < sizeof(msss) / sizeof(msss[0]); j++) {
        for (i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
            uint32_t w = segs[i] * msss[j];
            struct wisp_tcp_pcb *pcb = new_pcb(msss[j], w, 50);
            uint32_t ss = loss(pcb, NULL, false, 1000);
            double k;
            assert_int_equal(pcb->cc.cubic.w_max, w);
            assert_int_equal(ss, WISP_MAX((uint32_t)((uint64_t)w * 7 / 10), 2u * msss[j]));
            tcp_cc_cubic.cong_avoid(pcb, msss[j], 1050);
            k = 1000.0 * cbrt((w - (double)ss) / (C_CUBIC * msss[j]));
            if (fabs(pcb->cc.cubic.k_ms - k) > 1.0) {
                fail_msg("W_max %u x %u: K %u ms, expected %.2f", segs[i], msss[j], pcb->cc.cubic.k_ms, k);
            }
            free(pcb);
        }
    }
}

/** §4.2, §4.4, §4.5: after a loss at 1000 segments (RTT 100 ms) the window
 *  follows the concave then convex curve. */
static void test_curve_follows_rfc(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1460, 1000u * 1460u, 100);
    struct model m = {.mss = 1460, .cwnd = 1000.0 * 1460};
    uint32_t now = 5000, start;
    double k;
    int r;
    (void)state;
    loss(pcb, &m, false, now);
    start = now;
    k = cbrt(300.0 / C_CUBIC);
    for (r = 0; r < 250; r++) {
        double t = (now - start) / 1000.0;
        round_trip(pcb, &m, &now, 100);
        /* the same per-ACK rule in double */
        assert_close(pcb->cwnd, m.cwnd, 0.001, "cwnd vs model", r);
        /* the closed-form curve: one RTT of ACKs moves cwnd most of the way
         * to W_cubic(t + RTT), so at the end of the round it is near
         * W_cubic(t) of the round's end */
        assert_close(pcb->cwnd, m_wcubic(&m, t + 0.1), 0.005, "cwnd vs W_cubic(t)", r);
        if (t + 0.2 < k) {
            assert_true(pcb->cwnd < 1000u * 1460u);     /* concave, §4.4 */
        } else if (t > k + 0.2) {
            assert_true(pcb->cwnd > 1000u * 1460u);     /* convex, §4.5 */
        }
    }
    assert_int_equal(pcb->cc.cubic.k_ms, (uint32_t)(k * 1000));
    /* the cubic, not the Reno estimate, set the window */
    assert_true(pcb->cc.cubic.w_est < pcb->cwnd / 2u);
    free(pcb);
}

/** §4.3: with a short RTT and a small window the Reno-friendly estimate
 *  grows faster than the cubic and sets the window: alpha_cubic per RTT
 *  until W_est reaches cwnd_prior, then one segment per RTT. */
static void test_reno_friendly_region(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1460, 20u * 1460u, 2);
    struct model m = {.mss = 1460, .cwnd = 20.0 * 1460};
    uint32_t now = 100, start;
    uint32_t before;
    int r;
    (void)state;
    loss(pcb, &m, false, now);
    start = now;
    for (r = 0; r < 40; r++) {
        round_trip(pcb, &m, &now, 2);
        assert_close(pcb->cwnd, m.cwnd, 0.002, "cwnd vs model", r);
        assert_int_equal(pcb->cwnd, pcb->cc.cubic.w_est);
        assert_true(m_wcubic(&m, (now - start) / 1000.0) < pcb->cwnd);
    }
    /* 14 segments + 40 rounds x 0.53 (alpha below cwnd_prior = 20 segs,
     * reached after ~11 rounds) then 1 per round */
    assert_true(pcb->cwnd > 14u * 1460u + 40u * 1460u / 2u);
    before = pcb->cwnd;
    round_trip(pcb, &m, &now, 2);
    /* above cwnd_prior: alpha 1, one SMSS per round */
    assert_true(pcb->cwnd - before >= 1460u - 40u && pcb->cwnd - before <= 1460u + 40u);
    free(pcb);
}

/** §4.2: the target is at most 1.5 cwnd (here W_cubic(t + RTT) with a
 *  10 s RTT would be 40 times cwnd): half a byte per byte acknowledged. */
static void test_target_clamped(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1000, 10000, 10000);
    (void)state;
    tcp_cc_cubic.cong_avoid(pcb, 1000, 50);       /* K = 0, W_max = cwnd */
    assert_int_equal(pcb->cc.cubic.k_ms, 0);
    /* t = 0: W_cubic = W_max < W_est = cwnd + 1 SMSS * 1000 / cwnd */
    assert_int_equal(pcb->cwnd, 10100u);
    /* t = 1 s: W_cubic = W_max + 0.4 SMSS > W_est; W_cubic(t + RTT) = 41 x */
    tcp_cc_cubic.cong_avoid(pcb, 1000, 1050);
    assert_int_equal(pcb->cwnd, 10100u + 500u);
    free(pcb);
}

/** §4.7: a loss below the previous W_max lowers W_max further. */
static void test_fast_convergence(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1000, 1000u * 1000u, 100);
    uint32_t ss;
    (void)state;
    ss = loss(pcb, NULL, false, 10);
    assert_int_equal(pcb->cc.cubic.w_max, 1000000u);
    assert_int_equal(ss, 700000u);
    pcb->cwnd = 800000u;               /* lost again before regaining W_max */
    ss = loss(pcb, NULL, false, 20);
    assert_int_equal(pcb->cc.cubic.w_max, 680000u);  /* 800000 * (1 + 0.7) / 2 */
    assert_int_equal(pcb->cc.cubic.cwnd_prior, 800000u);
    assert_int_equal(ss, 560000u);
    pcb->cwnd = 900000u;               /* above W_max: plain W_max = cwnd */
    loss(pcb, NULL, false, 30);
    assert_int_equal(pcb->cc.cubic.w_max, 900000u);
    /* §4.6 Figure 5: ssthresh from flight_size, W_max and cwnd_prior from
     * cwnd (a timeout after SACK recovery kept sending: flight > cwnd) */
    pcb->cwnd = 100000u;
    assert_int_equal(tcp_cc_cubic.ssthresh(pcb, 300000u, true, 40), 210000u);
    assert_int_equal(pcb->cc.cubic.w_max, 100000u * 17u / 20u);
    assert_int_equal(pcb->cc.cubic.cwnd_prior, 100000u);
    free(pcb);
}

/** §4.6: ssthresh (flight_size * 0.7) never below 2 SMSS. */
static void test_ssthresh_floor(void **state)
{
    static const uint32_t cw[] = {0, 1, 536, 1072, 1500, 1531};
    unsigned i;
    (void)state;
    for (i = 0; i < sizeof(cw) / sizeof(cw[0]); i++) {
        struct wisp_tcp_pcb *pcb = new_pcb(536, cw[i], 10);
        assert_int_equal(tcp_cc_cubic.ssthresh(pcb, cw[i], false, 0), 1072u);
        assert_int_equal(tcp_cc_cubic.ssthresh(pcb, cw[i], true, 0), 1072u);
        free(pcb);
    }
    {
        struct wisp_tcp_pcb *pcb = new_pcb(536, 1532, 10);
        assert_int_equal(tcp_cc_cubic.ssthresh(pcb, 1532, false, 0), 1072u);
        pcb->cwnd = 2000;
        assert_int_equal(tcp_cc_cubic.ssthresh(pcb, 2000, false, 0), 1400u);
        free(pcb);
    }
}

/** §4.8: after a timeout ssthresh is set as for a loss; the next stage
 *  starts (after slow start) with K = 0 and W_max = cwnd at its start. */
static void test_rto_restarts_stage(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1460, 500u * 1460u, 50);
    struct model m = {.mss = 1460, .cwnd = 500.0 * 1460};
    uint32_t now = 1000, ss;
    int r;
    (void)state;
    ss = tcp_cc_cubic.ssthresh(pcb, pcb->cwnd, true, now);
    m_ssthresh(&m, true);
    assert_int_equal(ss, 350u * 1460u);
    assert_int_equal(pcb->cc.cubic.cwnd_prior, 500u * 1460u);
    /* the core: loss window, slow start up to ssthresh (not CUBIC's part) */
    pcb->ssthresh = ss;
    pcb->cwnd = ss + 1460u;
    m.cwnd = pcb->cwnd;
    now += 3000;
    round_trip(pcb, &m, &now, 50);
    assert_int_equal(pcb->cc.cubic.k_ms, 0);
    assert_int_equal(pcb->cc.cubic.w_max, ss + 1460u);
    for (r = 0; r < 200; r++) {
        round_trip(pcb, &m, &now, 50);
        assert_close(pcb->cwnd, m.cwnd, 0.001, "cwnd vs model", r);
    }
    /* convex from the start: above the Reno estimate after 10 s */
    assert_true(pcb->cwnd > pcb->cc.cubic.w_est);
    free(pcb);
}

/** 1 GiB windows, every SMSS from 1 to 65535, huge ACKs and a day of
 *  elapsed time: no overflow (UBSan in the sanitizer build), the window
 *  bounded by 1 GiB and never lowered by growth, K finite. */
static void test_no_overflow_1gib(void **state)
{
    static const uint16_t msss[] = {1, 64, 536, 1460, 9000, 65535};
    unsigned j;
    (void)state;
    for (j = 0; j < sizeof(msss) / sizeof(msss[0]); j++) {
        struct wisp_tcp_pcb *pcb = new_pcb(msss[j], 0x40000000u, 200);
        uint32_t now = 7, i, prev, ss;
        ss = loss(pcb, NULL, false, now);
        assert_int_equal(ss, (uint32_t)(0x40000000ull * 7 / 10));
        /* ACKs of growing size, every 100 ms for just over a day: regular
         * growth, so no idle exclusion, and t runs into its clamp */
        for (i = 0; i < 900000u; i++) {
            uint32_t acked = (i % 3u == 0) ? msss[j] : (i % 3u == 1) ? 0x40000000u : 1u;
            prev = pcb->cwnd;
            now += 100;
            tcp_cc_cubic.cong_avoid(pcb, acked, now);
            assert_true(pcb->cwnd >= prev);
            assert_true(pcb->cwnd <= 0x40000000u);
            assert_true(now - pcb->cc.cubic.epoch_ms <= 86400000u);
        }
        assert_int_equal(pcb->cwnd, 0x40000000u);
        assert_true(pcb->cc.cubic.k_ms < 3000000u);
        /* K of a 1 GiB W_max: (0.3 GiB / (0.4 * SMSS))^(1/3) s */
        {
            double k = 1000.0 * cbrt((0x40000000 - (double)ss) / (C_CUBIC * msss[j]));
            if (fabs(pcb->cc.cubic.k_ms - k) > 1.0 + k * 2e-5) {
                fail_msg("SMSS %u: K %u, expected %.1f", msss[j], pcb->cc.cubic.k_ms, k);
            }
        }
        free(pcb);
    }
}

/** RFC 9438 §5.8: time in which cwnd did not limit the sender (here ten
 *  hours without growth) does not count in t. */
static void test_idle_not_counted(void **state)
{
    struct wisp_tcp_pcb *a = new_pcb(1460, 1000u * 1460u, 100);
    struct wisp_tcp_pcb *b = new_pcb(1460, 1000u * 1460u, 100);
    uint32_t na = 50, nb = 50, before;
    int r;
    (void)state;
    loss(a, NULL, false, na);
    loss(b, NULL, false, nb);
    for (r = 0; r < 30; r++) {
        round_trip(a, NULL, &na, 100);
        round_trip(b, NULL, &nb, 100);
    }
    na += 10u * 3600u * 1000u;
    before = a->cwnd;
    tcp_cc_cubic.cong_avoid(a, 1460, na);
    assert_true(a->cwnd - before <= 1460u / 2u);
    for (r = 0; r < 60; r++) {
        round_trip(a, NULL, &na, 100);
        round_trip(b, NULL, &nb, 100);
    }
    assert_close(a->cwnd, b->cwnd, 0.005, "after idle vs without", r);
    free(a);
    free(b);
}

/** The uint32 ms clock wraps during a stage: the same ACK stream gives the
 *  same windows as one far from the wrap. */
static void test_clock_wrap(void **state)
{
    struct wisp_tcp_pcb *a = new_pcb(1460, 800u * 1460u, 80);
    struct wisp_tcp_pcb *b = new_pcb(1460, 800u * 1460u, 80);
    uint32_t na = 0xffffffffu - 4000u, nb = 1000;
    int r;
    (void)state;
    loss(a, NULL, false, na);
    loss(b, NULL, false, nb);
    for (r = 0; r < 200; r++) {
        round_trip(a, NULL, &na, 80);
        round_trip(b, NULL, &nb, 80);
        assert_int_equal(a->cwnd, b->cwnd);
        assert_int_equal(a->cc.cubic.w_est, b->cc.cubic.w_est);
    }
    assert_true(na < 1000000u); /* it did wrap */
    assert_true(a->cwnd > 800u * 1460u);
    free(a);
    free(b);
}

/** After the same loss at 1000 segments on a 100 ms path, CUBIC (cut to
 *  700) is within 4 % of W_max 5 s later (its concave climb ends at
 *  K = 9.1 s) where NewReno (cut to 500, one segment per RTT) has regained
 *  50 of the 500 segments it gave up. */
static void test_cubic_regains_faster_than_newreno(void **state)
{
    struct wisp_tcp_pcb *c = new_pcb(1460, 1000u * 1460u, 100);
    struct wisp_tcp_pcb *n = new_pcb(1460, 1000u * 1460u, 100);
    uint32_t nc = 0, nn = 0;
    int r;
    (void)state;
    tcp_cc_newreno.init(n, 0);
    c->cwnd = tcp_cc_cubic.ssthresh(c, c->cwnd, false, 0);
    n->cwnd = tcp_cc_newreno.ssthresh(n, n->cwnd, false, 0);
    assert_int_equal(c->cwnd, 700u * 1460u);
    assert_int_equal(n->cwnd, 500u * 1460u);
    for (r = 0; r < 50; r++) {
        ops_round(&tcp_cc_cubic, c, &nc, 100);
        ops_round(&tcp_cc_newreno, n, &nn, 100);
    }
    assert_true(c->cwnd > 960u * 1460u);
    assert_true(n->cwnd >= 549u * 1460u && n->cwnd <= 551u * 1460u);
    free(c);
    free(n);
}

/** Through the core's dispatch (tcp_cc_ack): slow start below ssthresh
 *  leaves CUBIC alone; congestion avoidance reaches it only while cwnd
 *  limits the sender, so an application-limited flow does not start a
 *  stage or grow. */
static void test_cubic_through_dispatch(void **state)
{
    struct wisp_tcp_pcb *pcb = new_pcb(1000, 10000, 50);
    (void)state;
    pcb->c.cc_algo = WISP_TCP_CC_CUBIC;
    pcb->ssthresh = 20000;
    tcp_cc_ack(pcb, 1000, 10000, 100);           /* slow start */
    assert_int_equal(pcb->cwnd, 11000u);
    assert_int_equal((pcb->flags & TF_CC_MASK), 0);
    pcb->cwnd = 30000;
    tcp_cc_ack(pcb, 1000, 5000, 200);            /* not cwnd-limited */
    assert_int_equal(pcb->cwnd, 30000u);
    assert_int_equal((pcb->flags & TF_CC_MASK), 0);
    tcp_cc_ack(pcb, 1000, 29500, 300);           /* cwnd-limited: CUBIC */
    assert_int_not_equal((pcb->flags & TF_CC_MASK), 0);
    assert_int_equal(pcb->cc.cubic.w_max, 30000u); /* K = 0, W_max = cwnd_epoch (§4.10) */
    assert_true(pcb->cwnd > 30000u);
    assert_int_equal(tcp_cc_ssthresh(pcb, 20000, false, 400), 14000u);   /* flight * 0.7 */
    assert_true(pcb->cc.cubic.w_max > 30000u);                             /* cwnd */
    free(pcb);
}

#endif /* WISP_TCP_CUBIC */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newreno_ops),
#if WISP_TCP_CUBIC
        cmocka_unit_test(test_cbrt_exact),
        cmocka_unit_test(test_k_for_several_wmax),
        cmocka_unit_test(test_curve_follows_rfc),
        cmocka_unit_test(test_reno_friendly_region),
        cmocka_unit_test(test_target_clamped),
        cmocka_unit_test(test_fast_convergence),
        cmocka_unit_test(test_ssthresh_floor),
        cmocka_unit_test(test_rto_restarts_stage),
        cmocka_unit_test(test_no_overflow_1gib),
        cmocka_unit_test(test_idle_not_counted),
        cmocka_unit_test(test_clock_wrap),
        cmocka_unit_test(test_cubic_regains_faster_than_newreno),
        cmocka_unit_test(test_cubic_through_dispatch),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
