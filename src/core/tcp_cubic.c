/**
 * @file tcp_cubic.c
 * CUBIC congestion control (RFC 9438) behind the operations of tcp_cc.h.
 *
 * The TCP core keeps slow start, loss detection and fast recovery; CUBIC
 * decides how the window grows in congestion avoidance (§4.2-§4.5) and how
 * far it is cut on a congestion event (§4.6-§4.8).
 *
 * Integer arithmetic only (Cortex-M0 targets have no FPU): windows in
 * bytes, SMSS as the core counts it (tcp_seg_max), time in ms (the stack's uint32 clock, wrap-safe differences).
 * In these units the cubic of §4.2, C * (t - K)^3 segments with C = 0.4
 * segments/s^3, is (t - K)^3 * SMSS / 2.5e9 bytes with t - K in ms; the
 * divisor d = 2.5e9 / SMSS is rounded to an integer (relative error below
 * 1.3e-5 for any SMSS). Bounds: |t - K| is clamped to 2^21 ms (35 min; its
 * cube fits 64 bits, and by then the target is long clamped to 1.5 cwnd),
 * the elapsed time t to one day, and cwnd to 1 GiB (as the core).
 *
 * Constants as fractions: C = 2/5 (§5), beta_cubic = 7/10 (§4.6),
 * alpha_cubic = 3 * (1 - beta) / (1 + beta) = 9/17 (§4.3), fast
 * convergence factor (1 + beta) / 2 = 17/20 (§4.7).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "tcp_priv.h"
#include "tcp_cc.h"

#include <string.h>

#if WISP_TCP && WISP_TCP_CUBIC

#define CUBIC_D_NUM 2500000000u   /* d = CUBIC_D_NUM / SMSS: 1 / (C * SMSS) in ms^3 per byte, x 1e9 */
#define CUBIC_DT_MAX (1u << 21)   /* |t - K| clamp, ms: (2^21)^3 = 2^63 */
#define CUBIC_T_MAX 86400000u     /* elapsed time clamp: one day, ms */
#define CUBIC_CWND_MAX 0x40000000u /* 1 GiB, the core's bound */
#define CUBIC_IDLE_NO_RTT_MS 1000u /* idle gap without an RTT sample (RFC 6298 initial RTO) */

#define TCP_CUBIC_F_EPOCH TF_CC_1 /* a congestion avoidance stage is running */
#define TCP_CUBIC_F_RTO TF_CC_2   /* the next stage follows a timeout (§4.8) */
/* the flags live in pcb->flags (tcp_priv.h TF_CC_*) */
#define TCP_CUBIC_FLAGS_SET(pcb, f) ((pcb)->flags = ((pcb)->flags & ~TF_CC_MASK) | (f))

/* n / d and its remainder, by shift and subtract: no 64-bit division
 * helper of libgcc (__aeabi_uldivmod, ~0.7 KB) is linked for CUBIC. At
 * most 64 steps, a few times per ACK in congestion avoidance. */
static uint64_t cubic_div(uint64_t n, uint32_t d, uint32_t *rem)
{
    uint64_t q = 0, r = 0;
    int i;
    if ((n >> 32) == 0u) {
        q = (uint32_t)n / d; /* the common case: a 32-bit division */
        r = (uint32_t)n - (uint32_t)q * d;
    } else {
        for (i = 63; i >= 0; i--) {
            r = (r << 1) | ((n >> i) & 1u);
            q <<= 1;
            if (r >= d) {
                r -= d;
                q |= 1u;
            }
        }
    }
    if (rem != NULL) {
        *rem = (uint32_t)r;
    }
    return q;
}

/* x * num / den for 32-bit x and a small fraction num / den (< 1), in
 * 32-bit arithmetic, exact (the floor of the product). */
static uint32_t cubic_frac(uint32_t x, uint32_t num, uint32_t den)
{
    return x / den * num + x % den * num / den;
}

uint32_t tcp_cubic_cbrt(uint64_t x)
{
    /* Floor of the cube root, one result bit per step (3 bits of x):
     * y' = 2y + 1 when (2y + 1)^3 - (2y)^3 = 3 * 2y * (2y + 1) + 1 fits
     * under what is left of x at this scale. */
    uint32_t y = 0;
    int s;
    for (s = 63; s >= 0; s -= 3) {
        uint64_t b;
        y <<= 1;
        b = 3u * (uint64_t)y * (y + 1u) + 1u;
        if ((x >> s) >= b) {
            x -= b << s;
            y++;
        }
    }
    return y;
}

/* W_cubic(t) = C * (t - K)^3 + W_max (§4.2, Figure 1), bytes; t in ms. */
static uint64_t cubic_w(const struct wisp_tcp_pcb *pcb, uint32_t t, uint32_t d)
{
    int64_t dt = (int64_t)t - (int64_t)pcb->cc.cubic.k_ms;
    uint64_t a = (uint64_t)(dt < 0 ? -dt : dt);
    uint64_t delta;
    if (a > CUBIC_DT_MAX) {
        a = CUBIC_DT_MAX;
    }
    delta = cubic_div(a * a * a, d, NULL);
    if (dt >= 0) {
        return pcb->cc.cubic.w_max + delta;
    }
    return delta < pcb->cc.cubic.w_max ? pcb->cc.cubic.w_max - delta : 0u;
}

static void cubic_init(struct wisp_tcp_pcb *pcb, uint32_t now)
{
    (void)now;
    memset(&pcb->cc.cubic, 0, sizeof(pcb->cc.cubic));
    TCP_CUBIC_FLAGS_SET(pcb, 0u);
}

/* The first growth of a congestion avoidance stage: t_epoch, K, W_est. */
static void cubic_epoch(struct wisp_tcp_pcb *pcb, uint32_t now, uint32_t d)
{
    uint32_t cwnd = pcb->cwnd;
    pcb->cc.cubic.epoch_ms = now;        /* §4.2: t counts from here */
    pcb->cc.cubic.est_acc = 0;
    pcb->cc.cubic.cwnd_acc = 0;
    pcb->cc.cubic.w_est = cwnd;          /* §4.3: W_est = cwnd_epoch */
    if (pcb->cc.cubic.cwnd_prior == 0) {
        /* Congestion avoidance without a congestion event (ssthresh from
         * elsewhere): §4.10, cwnd_prior = cwnd. */
        pcb->cc.cubic.cwnd_prior = cwnd;
    }
    if (pcb->cc.cubic.w_max > cwnd && !(pcb->flags & TCP_CUBIC_F_RTO)) {
        /* §4.2 Figure 2: K = cubic_root((W_max - cwnd_epoch) / C) */
        pcb->cc.cubic.k_ms = tcp_cubic_cbrt((uint64_t)(pcb->cc.cubic.w_max - cwnd) * d);
    } else {
        /* §4.8 (after a timeout), §4.10 (no congestion event yet), or cwnd
         * already at W_max: K = 0 and W_max = cwnd_epoch. */
        pcb->cc.cubic.k_ms = 0;
        pcb->cc.cubic.w_max = cwnd;
    }
    TCP_CUBIC_FLAGS_SET(pcb, TCP_CUBIC_F_EPOCH);
}

static void cubic_cong_avoid(struct wisp_tcp_pcb *pcb, uint32_t acked, uint32_t now)
{
    uint32_t mss = tcp_seg_max(pcb), cwnd = pcb->cwnd;
    uint32_t rtt = pcb->srtt8 / 8u, d, t, gap;
    uint64_t w, target, inc;

    if (mss == 0 || cwnd == 0) {
        return;
    }
    d = CUBIC_D_NUM / mss;
    if (!(pcb->flags & TCP_CUBIC_F_EPOCH)) {
        cubic_epoch(pcb, now, d);
    } else {
        /* §5.8: t must not include periods in which the application (or
         * the receiver) and not cwnd limited the sender; the core grows
         * cwnd only while it is the limit, so a gap of more than two RTTs
         * between growths is such a period: move t_epoch past it. */
        gap = now - pcb->cc.cubic.last_ms;
        if (gap > (rtt ? 2u * rtt : CUBIC_IDLE_NO_RTT_MS)) {
            pcb->cc.cubic.epoch_ms += gap;
        }
    }
    pcb->cc.cubic.last_ms = now;
    t = now - pcb->cc.cubic.epoch_ms;
    if (t > CUBIC_T_MAX) {
        t = CUBIC_T_MAX;
        pcb->cc.cubic.epoch_ms = now - t; /* keeps t clear of the clock wrap */
    }
    if (rtt > CUBIC_T_MAX) {
        rtt = CUBIC_T_MAX;
    }

    /* §4.3 Figure 4: W_est += alpha_cubic * segments_acked / cwnd, in
     * bytes alpha * acked * SMSS / cwnd; alpha_cubic = 9/17 until W_est
     * reaches cwnd_prior, then 1 (17/17). The remainder of the division
     * is kept divided by 17 (what that drops is under 1/cwnd byte):
     * floor(alpha * acked * SMSS) / 17 + remainder, divided by cwnd. */
    inc = (uint64_t)acked * mss;
    if (pcb->cc.cubic.w_est < pcb->cc.cubic.cwnd_prior) {
        inc = cubic_div(inc * 9u, 17u, NULL);
    }
    inc = cubic_div(inc + pcb->cc.cubic.est_acc, cwnd, &pcb->cc.cubic.est_acc);
    pcb->cc.cubic.w_est = (uint32_t)WISP_MIN(pcb->cc.cubic.w_est + inc, (uint64_t)CUBIC_CWND_MAX);

    w = cubic_w(pcb, t, d);
    if (w < pcb->cc.cubic.w_est) {
        /* §4.3: the Reno-friendly region, cwnd = W_est (never lowered). */
        if (pcb->cc.cubic.w_est > cwnd) {
            cwnd = pcb->cc.cubic.w_est;
        }
    } else {
        /* §4.2 Figure 3: target = W_cubic(t + RTT) within [cwnd, 1.5 cwnd];
         * §4.4 (concave, cwnd < W_max) and §4.5 (convex): cwnd grows by
         * (target - cwnd) / cwnd per acknowledged segment, in bytes
         * (target - cwnd) * acked / cwnd; the remainder is carried. */
        target = cubic_w(pcb, t + rtt, d);
        if (target < cwnd) {
            target = cwnd;
        } else if (target > (uint64_t)cwnd + cwnd / 2u) {
            target = (uint64_t)cwnd + cwnd / 2u;
        }
        inc = cubic_div((target - cwnd) * acked + pcb->cc.cubic.cwnd_acc, cwnd, &pcb->cc.cubic.cwnd_acc);
        cwnd = (uint32_t)WISP_MIN((uint64_t)cwnd + inc, (uint64_t)CUBIC_CWND_MAX);
    }
    pcb->cwnd = WISP_MAX(cwnd, pcb->cwnd);
}

static uint32_t cubic_ssthresh(struct wisp_tcp_pcb *pcb, uint32_t flight, bool rto, uint32_t now)
{
    uint32_t cwnd = pcb->cwnd;
    uint32_t ssthresh;
    (void)now;
    /* §4.7 fast convergence: a flow whose W_max shrinks releases bandwidth. */
    if (cwnd < pcb->cc.cubic.w_max) {
        pcb->cc.cubic.w_max = cubic_frac(cwnd, 17u, 20u);
    } else {
        pcb->cc.cubic.w_max = cwnd;
    }
    pcb->cc.cubic.cwnd_prior = cwnd;        /* §4.6 Figure 5 */
    /* The stage ends; the next begins with the next growth in congestion
     * avoidance, after recovery or after slow start following a timeout
     * (§4.8: with K = 0 and W_max = cwnd at that point). */
    TCP_CUBIC_FLAGS_SET(pcb, rto ? TCP_CUBIC_F_RTO : 0u);
    /* §4.6 Figure 5: ssthresh = flight_size * beta_cubic, at least 2 SMSS.
     * (The RFC lets implementations use cwnd instead; flight_size is what
     * the core's NewReno uses too, and after a timeout, when SACK recovery
     * has kept data flowing past a lost retransmission, it is the larger:
     * with cwnd, the simulator's 100-seed impairment run averaged 3.9
     * instead of 8.1 Mbit/s.) */
    ssthresh = cubic_frac(flight, 7u, 10u);
    return WISP_MAX(ssthresh, 2u * tcp_seg_max(pcb));
}

const struct tcp_cc_ops tcp_cc_cubic = {
    "cubic",
    cubic_init,
    cubic_cong_avoid,
    cubic_ssthresh,
    NULL  /* recovered: the stage restarts at the next growth anyway */
};

#endif /* WISP_TCP && WISP_TCP_CUBIC */
