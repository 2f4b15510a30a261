/**
 * @file test_tcp_impair.c
 * The heavy TCP simulator test: 4 MB each way at once over a 100 Mbit/s,
 * 1 ms wire with 5 % loss, 5 % reordering, 1 % duplication and 0.5 %
 * corruption, for 100 seeds. Every transfer must complete byte-exact, no
 * connection may stall (watchdog), pools return to baseline and no pool
 * element leaks.
 *
 * Knobs (environment, for slow builds such as ASan): TSL_IMPAIR_SEEDS
 * (default 100), TSL_IMPAIR_MB (default 4, MB per direction),
 * TSL_IMPAIR_SEED0 (first seed, default 1), TSL_PCAP_DIR (re-run every
 * failing seed with a capture written to that directory), TSL_CC
 * (congestion control of both ends, "reno" or "cubic": ctest runs it
 * with each).
 */
#include <time.h>
#include "simtest.h"
#include "tcp_simlib.h"

#define SEC 1000000ull

static unsigned long env_ul(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    char *end;
    unsigned long x;
    if (v == NULL || *v == '\0') {
        return dflt;
    }
    x = strtoul(v, &end, 10);
    return (*end == '\0' && x > 0) ? x : dflt;
}

static void impaired_4mb_each_way_many_seeds(void **state)
{
    unsigned long seeds = env_ul("TSL_IMPAIR_SEEDS", 100), mb = env_ul("TSL_IMPAIR_MB", 4);
    unsigned long seed0 = env_ul("TSL_IMPAIR_SEED0", 1);
    const char *pcap_dir = getenv("TSL_PCAP_DIR");
    unsigned long k, bad = 0;
    double sum_mbps = 0.0, min_mbps = 1e9, max_end = 0.0;
    uint64_t events = 0;
    clock_t t0 = clock();
    (void)state;
    for (k = 0; k < seeds; k++) {
        uint64_t seed = seed0 + k;
        struct sim_link_cfg l;
        struct tsl_cfg cfg;
        struct tsl_result r;
        sim_link_defaults(&l);
        l.bandwidth_bps = 100000000u;
        l.latency_us = 1000;
        l.loss = 0.05;
        l.reorder = 0.05;
        l.dup = 0.01;
        l.corrupt = 0.005;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = (uint64_t)mb * 1024u * 1024u;
        cfg.a2b.wsize = 1460;
        cfg.b2a = cfg.a2b;
        /* every fourth seed: random write sizes and zero-copy one way */
        if (seed % 4 == 0) {
            cfg.a2b.wrandom = true;
            cfg.a2b.wsize = 4000;
            cfg.b2a.nocopy = true;
        }
        cfg.seed = seed;
        cfg.watchdog_ms = 60000;
        if (!tsl_xfer(seed, &l, &cfg, 3600 * SEC, NULL, false, &r)) {
            bad++;
            printf("  seed %llu FAILED: %s (A->B %.2f, B->A %.2f Mbit/s, t=%.3f s)\n", (unsigned long long)seed,
                   r.why, r.mbps[0], r.mbps[1], (double)r.end_us / 1e6);
            if (pcap_dir != NULL) {
                char path[512];
                struct tsl_result r2;
                snprintf(path, sizeof(path), "%s/tcp_impair_seed%llu.pcap", pcap_dir, (unsigned long long)seed);
                (void)tsl_xfer(seed, &l, &cfg, 3600 * SEC, path, true, &r2);
                printf("  capture of seed %llu: %s\n", (unsigned long long)seed, path);
            }
            continue;
        }
        sum_mbps += r.mbps[0] + r.mbps[1];
        if (r.mbps[0] < min_mbps) {
            min_mbps = r.mbps[0];
        }
        if (r.mbps[1] < min_mbps) {
            min_mbps = r.mbps[1];
        }
        if ((double)r.end_us / 1e6 > max_end) {
            max_end = (double)r.end_us / 1e6;
        }
        events += r.events;
    }
    printf("  congestion control: %s\n", getenv("TSL_CC") != NULL ? getenv("TSL_CC") : "the default");
    printf("  %lu seeds x %lu MB each way: %lu failed; goodput mean %.2f min %.2f Mbit/s; slowest done at %.1f s "
           "virtual; %llu events; %.1f s CPU\n",
           seeds, mb, bad, seeds > bad ? sum_mbps / (2.0 * (double)(seeds - bad)) : 0.0, min_mbps, max_end,
           (unsigned long long)events, (double)(clock() - t0) / CLOCKS_PER_SEC);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(impaired_4mb_each_way_many_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
