/**
 * @file inproc_bench.c
 * wisp-inproc-bench: bulk TCP between two wisp instances in one process on
 * an unlimited simulated wire (test/sim's world: bandwidth 0 = infinite,
 * 10 us one-way latency, no loss), goodput per CPU second of the whole
 * process (both stacks, the simulator's event loop and the harness) --
 * issue 12's "in-process figures".
 *
 * The transfer is tcp_simlib's (raw API, one connection, A to B, verified
 * byte-exact by the receiver) with its cheap pattern (tsl_cfg.cheap: the
 * sender writes straight from a pre-filled buffer indexed by stream offset
 * modulo a prime, the receiver checks each pbuf with one memcmp), so the
 * harness costs almost nothing per byte; --pattern stream uses the
 * generated stream instead (the harness then dominates: for comparison).
 *
 * CPU time is CLOCK_PROCESS_CPUTIME_ID around the whole transfer (setup,
 * transfer, close and pool settling; settling is timer events only).
 * Prints one line of key=value per repetition:
 *   mb=.. wsize=.. copy=0|1 pattern=cheap|stream cpu_s=.. wall_s=..
 *   gbit_per_cpu_s=.. virt_gbit_s=.. events=.. retrans=..
 *
 * Usage: wisp-inproc-bench [--mb N] [--wsize N] [--reps N] [--nocopy]
 *                          [--pattern cheap|stream]
 * Not a test (timing): run by bench/run.sh (experiment 4), built with the
 * benchmark options (no debug checks) when bench/run.sh builds it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tcp_simlib.h"

static double clk(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned long arg_num(const char *s, unsigned long lo, unsigned long hi, const char *what)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "wisp-inproc-bench: bad %s '%s' (%lu..%lu)\n", what, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long mb = 256, wsize = 16384, reps = 3, r;
    bool nocopy = false, cheap = true;
    int i, fails = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
            mb = arg_num(argv[++i], 1, 1u << 20, "--mb");
        } else if (strcmp(argv[i], "--wsize") == 0 && i + 1 < argc) {
            wsize = arg_num(argv[++i], 1, TSL_CHEAP_SPAN, "--wsize");
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = arg_num(argv[++i], 1, 100, "--reps");
        } else if (strcmp(argv[i], "--nocopy") == 0) {
            nocopy = true;
        } else if (strcmp(argv[i], "--pattern") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "cheap") == 0) {
                cheap = true;
            } else if (strcmp(argv[i], "stream") == 0) {
                cheap = false;
            } else {
                fprintf(stderr, "wisp-inproc-bench: --pattern cheap|stream\n");
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: wisp-inproc-bench [--mb N] [--wsize N] [--reps N] [--nocopy] [--pattern cheap|stream]\n");
            return 2;
        }
    }

    for (r = 1; r <= reps; r++) {
        struct sim_link_cfg l;
        struct tsl_cfg cfg;
        struct tsl_result res;
        double c0, w0, cpu, wall;
        bool ok;

        sim_link_defaults(&l);
        l.bandwidth_bps = 0; /* infinite */
        l.latency_us = 10;
        memset(&cfg, 0, sizeof(cfg));
        cfg.a2b.bytes = (uint64_t)mb * 1000000u;
        cfg.a2b.wsize = (uint32_t)wsize;
        cfg.a2b.nocopy = nocopy;
        cfg.cheap = cheap;
        cfg.seed = r;
        cfg.watchdog_ms = 60000;
        c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
        w0 = clk(CLOCK_MONOTONIC);
        ok = tsl_xfer(r, &l, &cfg, 3600ull * 1000000u, NULL, true, &res);
        cpu = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall = clk(CLOCK_MONOTONIC) - w0;
        if (!ok) {
            fprintf(stderr, "wisp-inproc-bench: rep %lu failed: %s\n", r, res.why);
            printf("fail=1\n");
            fails++;
            continue;
        }
        printf("mb=%lu wsize=%lu copy=%d pattern=%s cpu_s=%.3f wall_s=%.3f gbit_per_cpu_s=%.3f virt_gbit_s=%.2f "
               "events=%llu retrans=%lu\n",
               mb, wsize, nocopy ? 0 : 1, cheap ? "cheap" : "stream", cpu, wall,
               cpu > 0 ? (double)mb * 8e6 / cpu / 1e9 : 0.0, res.mbps[0] / 1000.0, (unsigned long long)res.events,
               (unsigned long)res.info[0].retransmits);
        fflush(stdout);
    }
    return fails > 0 ? 1 : 0;
}
