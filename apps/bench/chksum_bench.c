/**
 * @file chksum_bench.c
 * wisp-chksum-bench: the hot paths of the 2015 paper -- Internet checksum,
 * copy, and copy-with-checksum -- in GB/s per buffer size, wisp's against
 * Debian's lwIP 2.1.3 (liblwip: inet_chksum, whose body is lwIP's
 * lwip_standard_chksum, and lwip_chksum_copy) and glibc's memcpy, in the
 * same run on the same buffers.
 *
 * For each size (64, 128, 256, 512, 1024, 1460 bytes and 64 KB) each
 * function runs over a ring of 64 buffers at 1..7-byte offsets (odd
 * alignments included, as packets arrive) for about 20 ms; 7 repetitions,
 * interleaved between functions; the median is printed, with wisp / lwIP
 * and wisp / memcpy ratios. Every result is first checked against wisp's
 * plain reference (wisp_chksum_sum_ref) on random data.
 *
 * Usage: wisp-chksum-bench [--ms N] [--reps N]
 * Not a test: the figures need a quiet machine (the benchmark suite).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wisp/arch.h"
#include "wisp/chksum.h"

/* Debian's liblwip (lwip/inet_chksum.h needs lwIP's own option headers,
 * which are the application's; these two are plain C functions). */
uint16_t inet_chksum(const void *dataptr, uint16_t len);
uint16_t lwip_chksum_copy(void *dst, const void *src, uint16_t len);

#define RING 64u
#define MAXLEN 65536u

static uint8_t src_buf[RING][MAXLEN + 8];
static uint8_t dst_buf[RING][MAXLEN + 8];
static volatile uint32_t sink;

enum fn { F_WISP_SUM, F_LWIP_SUM, F_WISP_CPY, F_MEMCPY, F_WISP_CSCOPY, F_LWIP_CSCOPY, F_COUNT };
static const char *const fn_name[F_COUNT] = { "wisp_chksum_sum", "lwIP inet_chksum", "wisp_memcpy",
                                              "glibc memcpy", "wisp_chksum_copy", "lwip_chksum_copy" };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t run(enum fn f, size_t len, unsigned iters)
{
    uint32_t acc = 0;
    for (unsigned i = 0; i < iters; i++) {
        unsigned b = i % RING, off = 1u + i % 7u;
        const uint8_t *s = src_buf[b] + off;
        uint8_t *d = dst_buf[b] + off;
        switch (f) {
        case F_WISP_SUM: acc += wisp_chksum_sum(s, len); break;
        case F_LWIP_SUM: acc += inet_chksum(s, (uint16_t)len); break;
        case F_WISP_CPY: wisp_memcpy(d, s, len); acc += d[0]; break;
        case F_MEMCPY: memcpy(d, s, len); acc += d[0]; break;
        case F_WISP_CSCOPY: acc += wisp_chksum_copy(d, s, len); break;
        case F_LWIP_CSCOPY: acc += lwip_chksum_copy(d, s, (uint16_t)len); break;
        default: break;
        }
    }
    return acc;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Random data; every function agrees with the reference on every size. */
static int check(void)
{
    static const size_t lens[] = { 1, 2, 3, 63, 64, 65, 1459, 1460, 1461, 4096, 65535 };
    srand(12345);
    for (unsigned b = 0; b < RING; b++) {
        for (size_t i = 0; i < MAXLEN + 8; i++) {
            src_buf[b][i] = (uint8_t)rand();
        }
    }
    for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        for (unsigned off = 0; off < 8; off++) {
            const uint8_t *s = src_buf[k % RING] + off;
            uint16_t ref = wisp_chksum_sum_ref(s, lens[k]);
            uint16_t w = wisp_chksum_sum(s, lens[k]);
            /* lwIP's result is in network order, complemented */
            uint16_t l = wisp_ntohs((uint16_t)~inet_chksum(s, (uint16_t)lens[k]));
            uint16_t wc = wisp_chksum_copy(dst_buf[0] + off, s, lens[k]);
            uint16_t lc = wisp_ntohs(lwip_chksum_copy(dst_buf[1] + off, s, (uint16_t)lens[k]));
            if (w != ref || l != ref || wc != ref || lc != ref || memcmp(dst_buf[0] + off, s, lens[k]) != 0 ||
                memcmp(dst_buf[1] + off, s, lens[k]) != 0) {
                fprintf(stderr, "mismatch at len %zu off %u: ref %04x wisp %04x lwip %04x copy %04x lwip copy %04x\n",
                        lens[k], off, ref, w, l, wc, lc);
                return 1;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = { 64, 128, 256, 512, 1024, 1460, 65535 };
    double ms = 20.0;
    unsigned reps = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) {
            ms = atof(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (unsigned)atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--ms N] [--reps N]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 99 || ms <= 0) {
        fprintf(stderr, "bad --ms / --reps\n");
        return 2;
    }
    if (check() != 0) {
        return 1;
    }
    printf("| bytes | %s | %s | wisp/lwIP | %s | %s | wisp/memcpy | %s | %s | wisp/lwIP |\n", fn_name[0],
           fn_name[1], fn_name[2], fn_name[3], fn_name[4], fn_name[5]);
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k];
        double gbs[F_COUNT][99], med[F_COUNT];
        unsigned iters[F_COUNT];
        for (int f = 0; f < F_COUNT; f++) { /* calibrate: iterations for ~ms */
            unsigned n = 64;
            double t;
            for (;;) {
                double t0 = now_s();
                sink += run((enum fn)f, len, n);
                t = now_s() - t0;
                if (t * 1e3 >= ms / 4 || n > (1u << 28)) {
                    break;
                }
                n *= 2;
            }
            iters[f] = (unsigned)((double)n * (ms / 1e3) / (t > 0 ? t : 1e-9)) + 1u;
        }
        for (unsigned r = 0; r < reps; r++) {
            for (int f = 0; f < F_COUNT; f++) {
                int g = (r % 2u) ? F_COUNT - 1 - f : f; /* interleaved, both orders */
                double t0 = now_s();
                sink += run((enum fn)g, len, iters[g]);
                gbs[g][r] = (double)len * iters[g] / (now_s() - t0) / 1e9;
            }
        }
        for (int f = 0; f < F_COUNT; f++) {
            qsort(gbs[f], reps, sizeof(double), cmp_d);
            med[f] = gbs[f][reps / 2];
        }
        printf("| %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", len, med[0], med[1],
               med[0] / med[1], med[2], med[3], med[2] / med[3], med[4], med[5], med[4] / med[5]);
    }
    printf("(GB/s, medians of %u interleaved runs of ~%.0f ms; sink %u)\n", reps, ms, (unsigned)(sink & 1u));
    return 0;
}
