/**
 * @file test_chksum.c
 * Unit tests for wisp/chksum.h: the fast sum/copy/memcpy against their plain
 * reference versions at every alignment, RFC known vectors, split/combine,
 * the IPv4 pseudo header and RFC 1624 incremental update against
 * recomputation. Deterministic: a private xorshift64 PRNG with fixed seeds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wisp/chksum.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct {
    uint64_t s;
} prng_t;

static void prng_seed(prng_t *r, uint64_t seed) { r->s = seed ? seed : 0x9E3779B97F4A7C15ull; }

/* Marsaglia xorshift64 */
static uint64_t prng_next(prng_t *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->s = x;
    return x;
}

static uint32_t prng_below(prng_t *r, uint32_t n) { return (uint32_t)(prng_next(r) % n); }

static void prng_fill(prng_t *r, uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        p[i] = (uint8_t)(prng_next(r) >> 32);
    }
}

static uint8_t *xmalloc(size_t n)
{
    uint8_t *p = (uint8_t *)malloc(n);
    assert_non_null(p);
    return p;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Independent oracle for the sum: plain integer sum of big-endian words,
 * reduced mod 65535 at the end (0 stays 0 only if all bytes are zero). */
static uint16_t sum_oracle(const uint8_t *p, size_t len)
{
    uint64_t acc = 0;
    size_t i;
    int nonzero = 0;
    for (i = 0; i < len; i++) {
        acc += (i & 1u) ? p[i] : ((uint64_t)p[i] << 8);
        nonzero |= p[i] != 0;
    }
    if (!nonzero) {
        return 0;
    }
    acc %= 0xFFFFu;
    return (uint16_t)(acc == 0 ? 0xFFFFu : acc);
}

/* ------------------------------------------------------------------------- */
/* Known vectors                                                             */
/* ------------------------------------------------------------------------- */

static void test_known_vectors(void **state)
{
    /* RFC 1071 §3 numerical example */
    static const uint8_t rfc1071[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    /* IPv4 header, UDP 192.168.0.1 -> 192.168.0.199, checksum b861 */
    static const uint8_t ip[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    uint8_t buf[64];
    uint8_t out[64];
    size_t off;
    (void)state;

    for (off = 0; off < 8; off++) {
        memcpy(buf + off, rfc1071, sizeof rfc1071);
        assert_int_equal(wisp_chksum_sum_ref(buf + off, 8), 0xddf2);
        assert_int_equal(wisp_chksum_sum(buf + off, 8), 0xddf2);
        assert_int_equal(wisp_chksum_copy(out + 7 - off, buf + off, 8), 0xddf2);
        assert_memory_equal(out + 7 - off, rfc1071, 8);

        memcpy(buf + off, ip, sizeof ip);
        assert_int_equal(wisp_chksum_sum_ref(buf + off, 20), 0xFFFF);
        assert_int_equal(wisp_chksum_sum(buf + off, 20), 0xFFFF);
        wr16(buf + off + 10, 0);
        assert_int_equal((uint16_t)~wisp_chksum_sum(buf + off, 20), 0xb861);
        assert_int_equal((uint16_t)~wisp_chksum_sum_ref(buf + off, 20), 0xb861);
    }
    /* RFC 1071 §3: the example split in two, the second half at an odd offset */
    assert_int_equal(wisp_chksum_combine(wisp_chksum_sum(rfc1071, 3),
                                         wisp_chksum_sum(rfc1071 + 3, 5), 3),
                     0xddf2);
    /* odd trailing byte is the high byte of a zero-padded word */
    assert_int_equal(wisp_chksum_sum(rfc1071 + 2, 1), 0xf200);
    assert_int_equal(wisp_chksum_sum_ref(rfc1071 + 2, 1), 0xf200);
    assert_int_equal(wisp_chksum_sum(rfc1071 + 3, 1), 0x0300);
    /* empty input */
    assert_int_equal(wisp_chksum_sum(buf, 0), 0);
    assert_int_equal(wisp_chksum_sum_ref(buf, 0), 0);
    assert_int_equal(wisp_chksum_copy(out, buf, 0), 0);
    assert_ptr_equal(wisp_memcpy(out, buf, 0), out);
    assert_ptr_equal(wisp_memcpy_ref(out, buf, 0), out);
}

static void test_add(void **state)
{
    (void)state;
    assert_int_equal(wisp_chksum_add(0, 0), 0);
    assert_int_equal(wisp_chksum_add(0xFFFF, 0), 0xFFFF);
    assert_int_equal(wisp_chksum_add(0, 0xFFFF), 0xFFFF);
    assert_int_equal(wisp_chksum_add(0xFFFF, 0xFFFF), 0xFFFF);
    assert_int_equal(wisp_chksum_add(0x8000, 0x8000), 0x0001);
    assert_int_equal(wisp_chksum_add(0xFFFE, 0x0001), 0xFFFF);
    assert_int_equal(wisp_chksum_add(0xFFFE, 0x0002), 0x0001);
    assert_int_equal(wisp_chksum_add(0x1234, 0x4321), 0x5555);
    assert_int_equal(wisp_chksum_combine(0x1234, 0x5600, 1), 0x1234 + 0x0056);
    assert_int_equal(wisp_chksum_combine(0x1234, 0x5600, 2), 0x6834);
}

/* ------------------------------------------------------------------------- */
/* Fast sum vs reference                                                     */
/* ------------------------------------------------------------------------- */

#define SUM_MAXLEN 4096u
#define MAX_ALIGN 16u

/* wisp_chksum_sum vs wisp_chksum_sum_ref at every start alignment 0..15 and
 * every length 0..4096. With `uniform` data (all bytes equal) the reference
 * does not depend on the alignment, so it is computed once per length. */
static void sum_all_alignments(const uint8_t *buf, int uniform)
{
    size_t align, len;
    for (len = 0; len <= SUM_MAXLEN; len++) {
        uint16_t ref = 0;
        for (align = 0; align < MAX_ALIGN; align++) {
            uint16_t got = wisp_chksum_sum(buf + align, len);
            if (!uniform || align == 0) {
                ref = wisp_chksum_sum_ref(buf + align, len);
            }
            if (got != ref) {
                print_error("align %u len %u: sum %04x ref %04x\n", (unsigned)align,
                            (unsigned)len, got, ref);
                fail();
            }
        }
    }
}

static void test_sum_random(void **state)
{
    uint8_t *buf = xmalloc(SUM_MAXLEN + MAX_ALIGN);
    prng_t r;
    size_t i;
    (void)state;

    prng_seed(&r, 0x5EED0001u);
    prng_fill(&r, buf, SUM_MAXLEN + MAX_ALIGN);
    sum_all_alignments(buf, 0);
    /* cross-check the reference itself against an independent oracle */
    for (i = 0; i < 2000; i++) {
        size_t align = prng_below(&r, MAX_ALIGN);
        size_t len = prng_below(&r, SUM_MAXLEN + 1);
        assert_int_equal(wisp_chksum_sum_ref(buf + align, len), sum_oracle(buf + align, len));
    }
    free(buf);
}

static void test_sum_ones(void **state)
{
    uint8_t *buf = xmalloc(SUM_MAXLEN + MAX_ALIGN);
    (void)state;

    memset(buf, 0xFF, SUM_MAXLEN + MAX_ALIGN);
    sum_all_alignments(buf, 1);
    /* every word is 0xFFFF (-0); odd lengths end with 0xFF00 */
    assert_int_equal(wisp_chksum_sum(buf + 1, 4095), 0xFF00);
    assert_int_equal(wisp_chksum_sum(buf + 3, 4096), 0xFFFF);
    free(buf);
}

static void test_sum_zeros(void **state)
{
    uint8_t *buf = xmalloc(SUM_MAXLEN + MAX_ALIGN);
    (void)state;

    memset(buf, 0, SUM_MAXLEN + MAX_ALIGN);
    sum_all_alignments(buf, 1);
    assert_int_equal(wisp_chksum_sum(buf + 5, 4000), 0);
    /* a single non-zero byte anywhere: result must not be 0 */
    buf[700] = 0x80;
    assert_int_equal(wisp_chksum_sum(buf, 4000), 0x8000);
    assert_int_equal(wisp_chksum_sum(buf + 1, 4000), 0x0080);
    free(buf);
}

/* Buffers large enough to cross the periodic partial fold of the 64-bit
 * accumulator (every 2 MiB) in the fast sum and in the checksum-while-copy,
 * with maximal carries and with random data. */
static void test_sum_large(void **state)
{
    const size_t n = (4u << 20) + 4099u;
    uint8_t *buf = xmalloc(n + MAX_ALIGN);
    uint8_t *out = xmalloc(n + MAX_ALIGN);
    prng_t r;
    size_t align;
    int k;
    (void)state;

    prng_seed(&r, 0x5EED0002u);
    for (k = 0; k < 2; k++) {
        if (k == 0) {
            memset(buf, 0xFF, n + MAX_ALIGN);
        } else {
            prng_fill(&r, buf, n + MAX_ALIGN);
        }
        for (align = 0; align < 4; align++) {
            uint16_t ref = wisp_chksum_sum_ref(buf + align, n - align);
            assert_int_equal(wisp_chksum_sum(buf + align, n - align), ref);
            assert_int_equal(wisp_chksum_copy(out + 3 - align, buf + align, n - align), ref);
            assert_memory_equal(out + 3 - align, buf + align, n - align);
        }
    }
    free(out);
    free(buf);
}

/* ------------------------------------------------------------------------- */
/* memcpy / chksum_copy                                                      */
/* ------------------------------------------------------------------------- */

#define GUARD 16u

typedef void *(*copy_fn)(void *, const void *, size_t);

/* dst area: [GUARD bytes][MAX_ALIGN + maxlen][GUARD bytes], pre-filled with a
 * pattern kept in `shadow`; after copying len bytes to dst_area+GUARD+dalign
 * only those bytes may differ from the shadow, and they must equal src. */
static void check_copy(const uint8_t *src, const uint8_t *dst_area, const uint8_t *shadow,
                       size_t area_len, size_t dpos, size_t len)
{
    if (memcmp(dst_area + dpos, src, len) != 0) {
        print_error("copy content mismatch dpos %u len %u\n", (unsigned)dpos, (unsigned)len);
        fail();
    }
    if (memcmp(dst_area, shadow, dpos) != 0 ||
        memcmp(dst_area + dpos + len, shadow + dpos + len, area_len - dpos - len) != 0) {
        print_error("guard bytes overwritten dpos %u len %u\n", (unsigned)dpos, (unsigned)len);
        fail();
    }
}

static void run_copy(copy_fn fn, const uint8_t *src, uint8_t *area, const uint8_t *shadow,
                     size_t area_len, size_t dalign, size_t len)
{
    size_t dpos = GUARD + dalign;
    void *ret;

    memcpy(area, shadow, area_len);
    ret = fn(area + dpos, src, len);
    assert_ptr_equal(ret, area + dpos);
    check_copy(src, area, shadow, area_len, dpos, len);
}

static void memcpy_suite(copy_fn fn, uint64_t seed)
{
    const size_t maxlen = 4096u;
    const size_t area_len = GUARD + MAX_ALIGN + maxlen + GUARD;
    uint8_t *src = xmalloc(MAX_ALIGN + maxlen);
    uint8_t *area = xmalloc(area_len);
    uint8_t *shadow = xmalloc(area_len);
    prng_t r;
    size_t sa, da, len, i;

    prng_seed(&r, seed);
    prng_fill(&r, src, MAX_ALIGN + maxlen);
    prng_fill(&r, shadow, area_len);

    for (sa = 0; sa < MAX_ALIGN; sa++) {
        for (da = 0; da < MAX_ALIGN; da++) {
            for (len = 0; len <= 300u; len++) {
                size_t dpos = GUARD + da;
                /* restore only the touched window (plus guards) to keep it fast */
                memcpy(area + dpos - GUARD, shadow + dpos - GUARD, len + 2u * GUARD);
                assert_ptr_equal(fn(area + dpos, src + sa, len), area + dpos);
                if (memcmp(area + dpos, src + sa, len) != 0 ||
                    memcmp(area + dpos - GUARD, shadow + dpos - GUARD, GUARD) != 0 ||
                    memcmp(area + dpos + len, shadow + dpos + len, GUARD) != 0) {
                    print_error("memcpy sa %u da %u len %u\n", (unsigned)sa, (unsigned)da,
                                (unsigned)len);
                    fail();
                }
            }
        }
    }
    for (i = 0; i < 3000u; i++) {
        sa = prng_below(&r, MAX_ALIGN);
        da = prng_below(&r, MAX_ALIGN);
        len = prng_below(&r, (uint32_t)maxlen + 1u);
        if (i < 4u) {
            len = maxlen - i; /* the longest ones at least once */
        }
        run_copy(fn, src + sa, area, shadow, area_len, da, len);
    }
    free(shadow);
    free(area);
    free(src);
}

static void test_memcpy(void **state)
{
    (void)state;
    memcpy_suite(wisp_memcpy, 0x5EED0003u);
}

static void test_memcpy_ref(void **state)
{
    (void)state;
    memcpy_suite(wisp_memcpy_ref, 0x5EED0004u);
}

static void test_chksum_copy(void **state)
{
    const size_t maxlen = 4096u;
    const size_t area_len = GUARD + MAX_ALIGN + maxlen + GUARD;
    uint8_t *src = xmalloc(MAX_ALIGN + maxlen);
    uint8_t *area = xmalloc(area_len);
    uint8_t *shadow = xmalloc(area_len);
    prng_t r;
    size_t sa, da, i, k;
    (void)state;

    prng_seed(&r, 0x5EED0005u);
    prng_fill(&r, src, MAX_ALIGN + maxlen);
    prng_fill(&r, shadow, area_len);
    memcpy(area, shadow, area_len);

    for (k = 0; k < 2; k++) {
        if (k == 1) {
            memset(src, 0xFF, MAX_ALIGN + maxlen); /* maximal carries */
        }
        for (sa = 0; sa < MAX_ALIGN; sa++) {
            for (da = 0; da < MAX_ALIGN; da++) {
                /* every length 0..80, then sampled lengths up to 4096 */
                for (i = 0; i < 81u + 12u; i++) {
                    size_t len = i <= 80u ? i : prng_below(&r, (uint32_t)maxlen + 1u);
                    size_t dpos = GUARD + da;
                    uint16_t got;
                    if (i == 81u) {
                        len = maxlen;
                    } else if (i == 82u) {
                        len = 1500u;
                    } else if (i == 83u) {
                        len = maxlen - 1u;
                    }
                    got = wisp_chksum_copy(area + dpos, src + sa, len);
                    if (got != wisp_chksum_sum_ref(src + sa, len)) {
                        print_error("chksum_copy sa %u da %u len %u: %04x ref %04x\n",
                                    (unsigned)sa, (unsigned)da, (unsigned)len, got,
                                    wisp_chksum_sum_ref(src + sa, len));
                        fail();
                    }
                    check_copy(src + sa, area, shadow, area_len, dpos, len);
                    memcpy(area + dpos, shadow + dpos, len); /* restore */
                }
            }
        }
    }
    free(shadow);
    free(area);
    free(src);
}

/* ------------------------------------------------------------------------- */
/* combine                                                                   */
/* ------------------------------------------------------------------------- */

static void test_combine(void **state)
{
    uint8_t buf[MAX_ALIGN + 256];
    prng_t r;
    size_t len, split, round;
    (void)state;

    prng_seed(&r, 0x5EED0006u);
    for (round = 0; round < 3; round++) {
        for (len = 0; len <= 200u; len++) {
            size_t align = prng_below(&r, MAX_ALIGN);
            const uint8_t *p = buf + align;
            uint16_t whole;

            if (round == 0) {
                prng_fill(&r, buf, sizeof buf);
            } else if (round == 1) {
                memset(buf, 0xFF, sizeof buf);
            } else {
                memset(buf, 0, sizeof buf);
                buf[prng_below(&r, sizeof buf)] = (uint8_t)(1u + prng_below(&r, 255));
            }
            whole = wisp_chksum_sum_ref(p, len);
            for (split = 0; split <= len; split++) {
                uint16_t a = wisp_chksum_sum(p, split);
                uint16_t b = wisp_chksum_sum(p + split, len - split);
                if (wisp_chksum_combine(a, b, split) != whole) {
                    print_error("combine len %u split %u\n", (unsigned)len, (unsigned)split);
                    fail();
                }
            }
            /* three pieces, chained */
            if (len >= 2) {
                size_t s1 = prng_below(&r, (uint32_t)len);
                size_t s2 = s1 + prng_below(&r, (uint32_t)(len - s1));
                uint16_t acc = wisp_chksum_sum_ref(p, s1);
                acc = wisp_chksum_combine(acc, wisp_chksum_sum_ref(p + s1, s2 - s1), s1);
                acc = wisp_chksum_combine(acc, wisp_chksum_sum_ref(p + s2, len - s2), s2);
                assert_int_equal(acc, whole);
            }
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Pseudo header                                                             */
/* ------------------------------------------------------------------------- */

static uint32_t addr_be(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    uint8_t o[4];
    uint32_t v;
    o[0] = a;
    o[1] = b;
    o[2] = c;
    o[3] = d;
    memcpy(&v, o, 4); /* network order in memory */
    return v;
}

static uint16_t pseudo_ref(uint32_t src_be, uint32_t dst_be, uint8_t proto, uint16_t len)
{
    uint8_t ph[12];
    memcpy(ph, &src_be, 4);
    memcpy(ph + 4, &dst_be, 4);
    ph[8] = 0;
    ph[9] = proto;
    wr16(ph + 10, len);
    return wisp_chksum_sum_ref(ph, sizeof ph);
}

static void test_pseudo4(void **state)
{
    /* UDP 192.168.0.1:1024 -> 192.168.0.199:53, length 8, no payload */
    uint8_t udp[8] = {0x04, 0x00, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00};
    uint32_t s = addr_be(192, 168, 0, 1);
    uint32_t d = addr_be(192, 168, 0, 199);
    uint16_t ck;
    prng_t r;
    int i;
    (void)state;

    /* c0a8 + 0001 + c0a8 + 00c7 + 0011 + 005f = 0x18288 -> 0x8289 */
    assert_int_equal(wisp_chksum_pseudo4(s, d, 17, 0x5f), 0x8289);
    assert_int_equal(pseudo_ref(s, d, 17, 0x5f), 0x8289);
    assert_int_equal(wisp_chksum_pseudo4(0, 0, 0, 0), 0);
    assert_int_equal(wisp_chksum_pseudo4(0xFFFFFFFFu, 0xFFFFFFFFu, 255, 0xFFFF),
                     pseudo_ref(0xFFFFFFFFu, 0xFFFFFFFFu, 255, 0xFFFF));

    /* full UDP checksum: field = ~(pseudo + header), then it verifies */
    ck = (uint16_t)~wisp_chksum_add(wisp_chksum_pseudo4(s, d, 17, 8), wisp_chksum_sum(udp, 8));
    wr16(udp + 6, ck);
    assert_int_equal(wisp_chksum_add(wisp_chksum_pseudo4(s, d, 17, 8), wisp_chksum_sum(udp, 8)),
                     0xFFFF);

    prng_seed(&r, 0x5EED0007u);
    for (i = 0; i < 100000; i++) {
        uint64_t x = prng_next(&r);
        uint64_t y = prng_next(&r);
        uint32_t src = (uint32_t)x;
        uint32_t dst = (uint32_t)(x >> 32);
        uint8_t proto = (uint8_t)y;
        uint16_t len = (uint16_t)(y >> 8);
        if ((i & 15) == 0) {
            src = (i & 16) ? 0xFFFFFFFFu : 0;
            dst = (i & 32) ? 0xFFFFFFFFu : 0;
        }
        assert_int_equal(wisp_chksum_pseudo4(src, dst, proto, len),
                         pseudo_ref(src, dst, proto, len));
    }
}

/* ------------------------------------------------------------------------- */
/* RFC 1624 incremental update                                               */
/* ------------------------------------------------------------------------- */

/* Field value a sender computes from scratch: ~sum with the field zeroed. */
static uint16_t ip_field(uint8_t *h)
{
    uint16_t saved = rd16(h + 10);
    uint16_t f;
    wr16(h + 10, 0);
    f = (uint16_t)~wisp_chksum_sum_ref(h, 20);
    wr16(h + 10, saved);
    return f;
}

static void test_adjust(void **state)
{
    /* words that may change: all but 0 (version/IHL kept) and 5 (checksum) */
    static const uint8_t words[8] = {1, 2, 3, 4, 6, 7, 8, 9};
    uint8_t h[20];
    prng_t r;
    unsigned long field0_before = 0, field0_after = 0, fieldffff = 0;
    unsigned long mode_hits[7] = {0};
    int i;
    (void)state;

    prng_seed(&r, 0x5EED0008u);
    for (i = 0; i < 100000; i++) {
        int mode = (int)prng_below(&r, 7);
        unsigned wi = words[prng_below(&r, 8)];
        uint16_t hc, old16, new16, got, want;

        prng_fill(&r, h, sizeof h);
        h[0] = 0x45;
        if (mode == 5) {
            /* make the ORIGINAL field 0x0000: choose word 3 (ident) so that the
             * sum of the rest is 0xFFFF, i.e. ident = ~(sum of others) */
            wr16(h + 6, 0);
            wr16(h + 10, 0);
            wr16(h + 6, (uint16_t)~wisp_chksum_sum_ref(h, 20));
        }
        if (mode == 6) {
            /* classic RFC 1624 case: the word is 0x0000 or 0xFFFF and becomes
             * the other (same value in ones' complement) */
            wr16(h + 2 * wi, (prng_next(&r) & 1) ? 0xFFFF : 0x0000);
        }
        hc = ip_field(h);
        wr16(h + 10, hc);
        assert_int_equal(wisp_chksum_sum_ref(h, 20), 0xFFFF);
        if (hc == 0) {
            field0_before++;
        }

        old16 = rd16(h + 2 * wi);
        switch (mode) {
        case 0: /* random new value */
        case 5:
            new16 = (uint16_t)prng_next(&r);
            break;
        case 1: /* router: TTL decrement (word 4 = TTL << 8 | protocol) */
            wi = 4;
            old16 = rd16(h + 8);
            new16 = (uint16_t)(old16 - 0x0100u);
            break;
        case 2:
            new16 = 0x0000;
            break;
        case 3:
            new16 = 0xFFFF;
            break;
        case 4: {
            /* make the NEW field 0x0000: new sum of the other words plus m'
             * must be 0xFFFF, i.e. m' = m - S (ones' complement), either
             * representation of zero when that is zero */
            uint16_t sum_rest = (uint16_t)~hc; /* S: sum without the field */
            new16 = wisp_chksum_add(old16, (uint16_t)~sum_rest);
            if ((new16 == 0xFFFF || new16 == 0x0000) && (prng_next(&r) & 1)) {
                new16 = (uint16_t)~new16;
            }
            break;
        }
        default: /* 6 */
            new16 = (uint16_t)~old16;
            break;
        }
        mode_hits[mode]++;

        wr16(h + 2 * wi, new16);
        want = ip_field(h);
        got = wisp_chksum_adjust(hc, old16, new16);
        if (got != want) {
            print_error("adjust mode %d word %u: hc %04x %04x->%04x got %04x want %04x\n", mode,
                        wi, hc, old16, new16, got, want);
            fail();
        }
        wr16(h + 10, got);
        assert_int_equal(wisp_chksum_sum_ref(h, 20), 0xFFFF);
        assert_int_equal(wisp_chksum_sum(h, 20), 0xFFFF);
        if (got == 0) {
            field0_after++;
        }
        if (got == 0xFFFF) {
            fieldffff++;
        }
    }
    /* the edge cases were really exercised; 0xFFFF never appears as a field
     * for non-zero data, in recomputation or incrementally */
    assert_true(field0_before > 1000);
    assert_true(field0_after > 1000);
    assert_int_equal(fieldffff, 0);
    for (i = 0; i < 7; i++) {
        assert_true(mode_hits[i] > 10000);
    }

    /* RFC 1624 §4 example: the other words sum to 0xCD7A, m = 0x5555 so
     * HC = ~(0xCD7A + 0x5555) = 0xDD2F; m' = 0x3285 gives a sum of 0xFFFF,
     * i.e. HC' = 0x0000 (eqn. 2 would wrongly give 0xFFFF) */
    assert_int_equal(wisp_chksum_adjust(0xDD2F, 0x5555, 0x3285), 0x0000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_vectors), cmocka_unit_test(test_add),
        cmocka_unit_test(test_sum_random),    cmocka_unit_test(test_sum_ones),
        cmocka_unit_test(test_sum_zeros),     cmocka_unit_test(test_sum_large),
        cmocka_unit_test(test_memcpy),        cmocka_unit_test(test_memcpy_ref),
        cmocka_unit_test(test_chksum_copy),   cmocka_unit_test(test_combine),
        cmocka_unit_test(test_pseudo4),       cmocka_unit_test(test_adjust),
    };
    return cmocka_run_group_tests_name("chksum", tests, NULL, NULL);
}
