/**
 * @file test_tcp_cubic.c
 * CUBIC (RFC 9438) against NewReno in the simulator, on the path CUBIC is
 * made for: a long fat pipe (20 Mbit/s, 100 ms RTT: a bandwidth-delay
 * product of 244 KB, within the host build's WISP_TCP_WND) with occasional
 * random loss (0.02 %) besides the losses of slow start overrunning the
 * sender's interface queue. After each loss NewReno halves cwnd and
 * regains one segment per RTT (about 8 s for the 85 segments lost); CUBIC
 * cuts to 0.7 and climbs back along its cubic in K = cbrt(0.3 W_max / 0.4)
 * s (about 5 s). The same seeds and the same wire for both, in the same
 * run: CUBIC's mean goodput must be at least 1.1 times NewReno's (measured:
 * 1.37; the margin is generous). Virtual time: deterministic.
 */
#include "simtest.h"
#include "tcp_simlib.h"

#define SEC 1000000ull

#if WISP_TCP_CUBIC
static void cubic_beats_newreno_on_long_fat_path(void **state)
{
    static const uint8_t algos[2] = { TSL_CC_RENO, TSL_CC_CUBIC };
    double sum[2] = { 0, 0 };
    uint32_t rtx[2] = { 0, 0 };
    uint64_t seed;
    unsigned k;
    (void)state;
    for (seed = 1; seed <= 4; seed++) {
        for (k = 0; k < 2; k++) {
            struct sim_link_cfg l;
            struct tsl_cfg cfg;
            struct tsl_result r;
            sim_link_defaults(&l);
            l.bandwidth_bps = 20000000u;
            l.latency_us = 50000u;
            l.loss = 0.0002;
            memset(&cfg, 0, sizeof(cfg));
            cfg.a2b.bytes = 16u * 1024u * 1024u;
            cfg.a2b.wsize = 1460;
            cfg.seed = seed;
            cfg.cc = algos[k];
            cfg.watchdog_ms = 120000;
            assert_true(tsl_xfer(seed, &l, &cfg, 3600 * SEC, NULL, false, &r));
            assert_int_equal(r.info[0].cc, algos[k] - 1u);
            assert_int_equal(r.info[1].cc, algos[k] - 1u);
            printf("  seed %llu %-7s: %.2f Mbit/s, %u retransmitted, %u fast recoveries, %u timeouts\n",
                   (unsigned long long)seed, k == 0 ? "NewReno" : "CUBIC", r.mbps[0], r.info[0].retransmits,
                   r.info[0].fast_recoveries, r.info[0].timeouts);
            sum[k] += r.mbps[0];
            rtx[k] += r.info[0].retransmits;
        }
    }
    printf("  mean goodput NewReno %.2f, CUBIC %.2f Mbit/s: ratio %.3f\n", sum[0] / 4, sum[1] / 4, sum[1] / sum[0]);
#if WISP_TCP_PCB_STATS
    assert_true(rtx[0] > 0 && rtx[1] > 0); /* the loss did hit both */
#endif
#if WISP_TCP_WND > 65535
    /* (only when the window does not cap both: 64 KB per 100 ms RTT) */
    assert_true(sum[1] >= 1.1 * sum[0]);
#endif
}
#else
static void cubic_not_compiled(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if WISP_TCP_CUBIC
        cmocka_unit_test(cubic_beats_newreno_on_long_fat_path),
#else
        cmocka_unit_test(cubic_not_compiled),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
