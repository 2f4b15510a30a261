/**
 * @file chksum.c
 * Internet checksum (RFC 1071), incremental update (RFC 1624), IPv4 pseudo
 * header (RFC 768 / RFC 9293 §3.1), checksum-while-copy and the word-aligned
 * block copy. See wisp/chksum.h for the contracts.
 *
 * How the fast sum works (portable C, no carry flag available):
 *  - Words are loaded in NATIVE byte order and summed; on a little-endian
 *    host every 16-bit lane is then byte-swapped compared with the wire's
 *    big-endian words, and since the ones'-complement sum commutes with a
 *    byte swap the folded result is swapped once at the end (RFC 1071 §2(B)).
 *  - If the data starts at an odd address, the first byte is taken alone and
 *    the rest is summed from the next (even) address: every later byte then
 *    sits at the other byte position of its word, which is again fixed by
 *    one swap of the folded result (RFC 1071 §2(B)).
 *  - 32-bit aligned loads are added into a 64-bit accumulator (RFC 1071
 *    §2(C) parallel summation, §2 "deferred carries"): carries out of bit 31
 *    pile up in the upper half and are folded back at the end. The loop is
 *    unrolled to 32 bytes per iteration (RFC 1071 §2 "unwinding loops").
 *    One 64-bit accumulator was chosen over two 32-bit ones: with 32-bit
 *    addends it cannot overflow for 2^32 words (we partially fold every
 *    2 MiB anyway, for 64-bit size_t); on Cortex-M4 GCC turns each
 *    `acc += w` into ADDS+ADC (2 cycles/word, no spills, LDRD loads) while
 *    two 32-bit accumulators would need an extra compare per word to detect
 *    carries in C; on x86-64 it is one load+ADD per word.
 *
 * All memory is read/written through memcpy of a constant size (expanded
 * inline by the compiler into one load/store) or through byte accesses, so
 * there is no strict-aliasing or unaligned-pointer undefined behaviour. The
 * 32-bit checksum loads are additionally made on 4-aligned addresses.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/chksum.h"

#include <string.h>

/* ---------------------------------------------------------------------------
 * Internal helpers
 * ------------------------------------------------------------------------- */

/* memcpy of a compile-time constant size: expanded inline into a single
 * load/store. Use the builtin under GCC/clang so that this still holds with
 * -ffreestanding / -fno-builtin (common on bare-metal builds), where a plain
 * memcpy() would become a library call per word. */
#if defined(__GNUC__)
#define WISP_MOVE(d, s, n) __builtin_memcpy((d), (s), (n))
#else
#define WISP_MOVE(d, s, n) memcpy((d), (s), (n))
#endif

/* Tell the compiler a pointer is aligned (lets it use LDM/LDRD/aligned
 * vector loads). Only used where the alignment has just been established. */
#if defined(__GNUC__)
#define WISP_ASSUME_ALIGNED(p, a) __builtin_assume_aligned((p), (a))
#else
#define WISP_ASSUME_ALIGNED(p, a) ((void *)(p))
#endif

/* 1 on a little-endian host, 0 on big-endian. A compile-time constant when
 * the compiler predefines __BYTE_ORDER__; otherwise a runtime test that any
 * optimizing compiler folds to a constant. */
static inline int host_is_le(void)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    defined(__ORDER_BIG_ENDIAN__)
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
    const uint16_t one = 1u;
    uint8_t first;
    WISP_MOVE(&first, &one, 1);
    return first == 1u;
#endif
}

static inline uint16_t bswap16(uint16_t v)
{
    return (uint16_t)((uint16_t)(v << 8) | (uint16_t)(v >> 8));
}

/* Fold a 32-bit end-around-carry accumulator to 16 bits. */
static inline uint16_t fold32(uint32_t s)
{
    s = (s & 0xFFFFu) + (s >> 16); /* RFC 1071 §2 deferred carries: add back */
    s = (s & 0xFFFFu) + (s >> 16); /* at most one more carry */
    return (uint16_t)s;
}

#if !defined(WISP_ARCH_CHKSUM_SUM) || !defined(WISP_ARCH_CHKSUM_COPY)

/* Bytes per unrolled block of the fast sum (8 x 32-bit words), and how many
 * blocks are summed between two partial folds of the 64-bit accumulator
 * (65536 * 8 addends < 2^19 * 2^32, far from overflow). */
#define SUM_BLOCK 32u
#define SUM_BLOCKS_PER_FOLD 65536u

/* Fold a 64-bit accumulator of native-order words to 16 bits (still native
 * order). RFC 1071 §2(C) parallel summation: summing 32-bit words and folding
 * gives the 16-bit sum; RFC 1071 §2 deferred carries: the carries collected
 * in the upper bits are added back in here. */
static inline uint16_t fold64(uint64_t acc)
{
    acc = (acc & 0xFFFFFFFFu) + (acc >> 32); /* <= 0x1FFFFFFFE */
    acc = (acc & 0xFFFFFFFFu) + (acc >> 32); /* <= 0xFFFFFFFF */
    return fold32((uint32_t)acc);
}

/* Native-order value of the 16-bit word whose bytes in memory are m0, m1. */
static inline uint16_t native16(uint8_t m0, uint8_t m1)
{
    return host_is_le() ? (uint16_t)(((unsigned)m1 << 8) | m0)
                        : (uint16_t)(((unsigned)m0 << 8) | m1);
}

/* Convert the folded native-order sum to the big-endian-word value, undoing
 * the odd-start shift as well. RFC 1071 §2(B) byte-order independence: the
 * sum of byte-swapped words is the byte-swapped sum. */
static inline uint16_t native_to_result(uint64_t acc, int odd_start)
{
    uint16_t s = fold64(acc);
    if (host_is_le()) {
        s = bswap16(s); /* RFC 1071 §2(B) byte-order independence */
    }
    if (odd_start) {
        s = bswap16(s); /* RFC 1071 §2(B): data summed one byte shifted */
    }
    return s;
}

#endif /* !WISP_ARCH_CHKSUM_SUM || !WISP_ARCH_CHKSUM_COPY */

/* ---------------------------------------------------------------------------
 * Sums
 * ------------------------------------------------------------------------- */

uint16_t wisp_chksum_sum_ref(const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t acc = 0;

    while (len >= 2) {
        /* RFC 1071 §1: adjacent octets form 16-bit big-endian integers */
        acc += ((uint32_t)p[0] << 8) | p[1];
        acc = (acc & 0xFFFFu) + (acc >> 16); /* end-around carry; <= 0xFFFF */
        p += 2;
        len -= 2;
    }
    if (len != 0) {
        /* RFC 1071 §1 [Z,0]: odd byte is the high byte of a padded word */
        acc += (uint32_t)p[0] << 8;
        acc = (acc & 0xFFFFu) + (acc >> 16);
    }
    return (uint16_t)acc;
}

#ifndef WISP_ARCH_CHKSUM_SUM
uint16_t wisp_chksum_sum(const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t acc = 0;
    int odd_start = 0;
    uint16_t w16;

    if (len == 0) {
        return 0;
    }
    if (((uintptr_t)p & 1u) != 0) {
        /* RFC 1071 §2(B): take the first byte alone and sum the rest from an
         * even address. Relative to that address the byte is the SECOND byte
         * of the preceding word; the whole result is swapped at the end. */
        acc = native16(0u, p[0]);
        odd_start = 1;
        p++;
        len--;
    }
    if (len >= 2 && ((uintptr_t)p & 2u) != 0) {
        WISP_MOVE(&w16, p, 2); /* 2-aligned */
        acc += w16;
        p += 2;
        len -= 2;
    }
    if (len >= 4) {
        /* p is 4-aligned here: it was 2-aligned and the step above ran or
         * was not needed. */
        const uint8_t *a = (const uint8_t *)WISP_ASSUME_ALIGNED(p, 4);

        while (len >= SUM_BLOCK) {
            size_t blocks = len / SUM_BLOCK;
            if (blocks > SUM_BLOCKS_PER_FOLD) {
                blocks = SUM_BLOCKS_PER_FOLD;
            }
            len -= blocks * SUM_BLOCK;
            do {
                uint32_t w0, w1, w2, w3, w4, w5, w6, w7;
                WISP_MOVE(&w0, a + 0, 4);
                WISP_MOVE(&w1, a + 4, 4);
                WISP_MOVE(&w2, a + 8, 4);
                WISP_MOVE(&w3, a + 12, 4);
                WISP_MOVE(&w4, a + 16, 4);
                WISP_MOVE(&w5, a + 20, 4);
                WISP_MOVE(&w6, a + 24, 4);
                WISP_MOVE(&w7, a + 28, 4);
                /* RFC 1071 §2(C) parallel summation of 32-bit words, §2
                 * deferred carries (they pile up in bits 32..63) */
                acc += w0;
                acc += w1;
                acc += w2;
                acc += w3;
                acc += w4;
                acc += w5;
                acc += w6;
                acc += w7;
                a += SUM_BLOCK;
            } while (--blocks != 0);
            acc = (acc & 0xFFFFFFFFu) + (acc >> 32); /* partial fold */
        }
        while (len >= 4) {
            uint32_t w;
            WISP_MOVE(&w, a, 4);
            acc += w;
            a += 4;
            len -= 4;
        }
        p = a;
    }
    if (len >= 2) {
        WISP_MOVE(&w16, p, 2);
        acc += w16;
        p += 2;
        len -= 2;
    }
    if (len != 0) {
        /* RFC 1071 §1 [Z,0]: trailing odd byte, padded with a zero byte */
        acc += native16(p[0], 0u);
    }
    return native_to_result(acc, odd_start);
}
#endif /* WISP_ARCH_CHKSUM_SUM */

uint16_t wisp_chksum_add(uint16_t a, uint16_t b)
{
    /* RFC 1071 §1: ones'-complement addition, end-around carry */
    return fold32((uint32_t)a + b);
}

uint16_t wisp_chksum_combine(uint16_t sum_a, uint16_t sum_b, size_t len_a)
{
    if ((len_a & 1u) != 0) {
        /* RFC 1071 §2(B) byte-order independence: B starts at an odd offset,
         * so each of its bytes lands at the other position of a word. */
        sum_b = bswap16(sum_b);
    }
    return wisp_chksum_add(sum_a, sum_b);
}

uint16_t wisp_chksum_pseudo4(uint32_t src_be, uint32_t dst_be, uint8_t proto, uint16_t len)
{
    /* RFC 768 / RFC 9293 §3.1: src addr, dst addr, zero, proto, length.
     * The addresses are in memory (wire) order inside the uint32_t, so their
     * 16-bit halves are native-order words; sum them natively and convert
     * once (RFC 1071 §2(B) byte-order independence). */
    uint32_t acc = (src_be >> 16) + (src_be & 0xFFFFu) + (dst_be >> 16) + (dst_be & 0xFFFFu);
    uint16_t addr = fold32(acc);

    if (host_is_le()) {
        addr = bswap16(addr); /* RFC 1071 §2(B) byte-order independence */
    }
    /* zero byte + proto form the big-endian word 0x00pp; then the length */
    return fold32((uint32_t)addr + proto + len);
}

uint16_t wisp_chksum_adjust(uint16_t hc, uint16_t old16, uint16_t new16)
{
    /* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). ~HC is the old sum, adding ~m
     * subtracts m (ones' complement), adding m' adds the new word. Unlike
     * RFC 1141's eqn. 2 (HC + m + ~m'), which can produce 0xFFFF where a
     * recomputation gives 0x0000 (RFC 1624 §4), the sum here is never +0 for
     * non-zero data, so the field equals a recomputation (RFC 1624 §3-5). */
    uint32_t s = (uint32_t)(uint16_t)~hc + (uint16_t)~old16 + new16;
    return (uint16_t)~fold32(s);
}

/* ---------------------------------------------------------------------------
 * Checksum while copying
 * ------------------------------------------------------------------------- */

#ifndef WISP_ARCH_CHKSUM_COPY

/* 1 where the checksum-while-copy sums 64-bit words with carry counting
 * (64-bit hosts), 0 where it sums 32-bit words into the 64-bit accumulator
 * (32-bit hosts such as Cortex-M, where 64-bit carry counting would cost
 * more than it saves). */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define WISP_CHKSUM_WIDE 1
#else
#define WISP_CHKSUM_WIDE 0
#endif

uint16_t wisp_chksum_copy(void *dst, const void *src, size_t len)
{
    /* RFC 1071 §2 "combine with data copying". Same algorithm as
     * wisp_chksum_sum(); the source is aligned (the loads feed the sum),
     * stores go to dst at whatever alignment it has. */
    uint8_t *restrict d = (uint8_t *)dst;
    const uint8_t *restrict s = (const uint8_t *)src;
    uint64_t acc = 0;
    uint64_t carry = 0; /* carries out of bit 63 (WISP_CHKSUM_WIDE only) */
    int odd_start = 0;
    uint16_t w16;

    if (len == 0) {
        return 0;
    }
    if (((uintptr_t)s & 1u) != 0) {
        /* RFC 1071 §2(B): lone first byte, swap the result at the end */
        acc = native16(0u, s[0]);
        d[0] = s[0];
        odd_start = 1;
        s++;
        d++;
        len--;
    }
    if (len >= 2 && ((uintptr_t)s & 2u) != 0) {
        WISP_MOVE(&w16, s, 2);
        WISP_MOVE(d, &w16, 2);
        acc += w16;
        s += 2;
        d += 2;
        len -= 2;
    }
    if (len >= 4) {
        const uint8_t *a = (const uint8_t *)WISP_ASSUME_ALIGNED(s, 4);

        while (len >= SUM_BLOCK) {
            size_t blocks = len / SUM_BLOCK;
            if (blocks > SUM_BLOCKS_PER_FOLD) {
                blocks = SUM_BLOCKS_PER_FOLD;
            }
            len -= blocks * SUM_BLOCK;
            do {
                /* The block is moved as four 64-bit values (x86-64: 64-bit
                 * loads/stores; Cortex-M4: LDRD + 2 x STR per value). */
                uint64_t q0, q1, q2, q3;
                WISP_MOVE(&q0, a + 0, 8);
                WISP_MOVE(&q1, a + 8, 8);
                WISP_MOVE(d + 0, &q0, 8);
                WISP_MOVE(d + 8, &q1, 8);
#if WISP_CHKSUM_WIDE
                /* 64-bit hosts: RFC 1071 §2(C) parallel summation on 64-bit
                 * words. A carry out of bit 63 is worth 2^64 == 1 (mod
                 * 2^16 - 1), so carries are counted and added back at the
                 * fold (RFC 1071 §2 deferred carries); compilers emit
                 * ADD/ADC. This form also keeps GCC's and clang's SLP
                 * vectorizers from packing the stores into SSE and then
                 * extracting every lane for the sum (1.5-2x slower). */
                acc += q0;
                carry += acc < q0;
                acc += q1;
                carry += acc < q1;
                WISP_MOVE(&q2, a + 16, 8);
                WISP_MOVE(&q3, a + 24, 8);
                WISP_MOVE(d + 16, &q2, 8);
                WISP_MOVE(d + 24, &q3, 8);
                acc += q2;
                carry += acc < q2;
                acc += q3;
                carry += acc < q3;
#else
                /* 32-bit hosts: the halves of each 64-bit value are exactly
                 * its two native 32-bit words (either byte order); add them
                 * as 32-bit addends (RFC 1071 §2(C) parallel summation, §2
                 * deferred carries in bits 32..63). The two halves of the
                 * block are handled apart: fewer live registers on M4. */
                acc += (uint32_t)q0;
                acc += (uint32_t)(q0 >> 32);
                acc += (uint32_t)q1;
                acc += (uint32_t)(q1 >> 32);
                WISP_MOVE(&q2, a + 16, 8);
                WISP_MOVE(&q3, a + 24, 8);
                WISP_MOVE(d + 16, &q2, 8);
                WISP_MOVE(d + 24, &q3, 8);
                acc += (uint32_t)q2;
                acc += (uint32_t)(q2 >> 32);
                acc += (uint32_t)q3;
                acc += (uint32_t)(q3 >> 32);
#endif
                a += SUM_BLOCK;
                d += SUM_BLOCK;
            } while (--blocks != 0);
            /* partial fold; brings acc back below 2^34 so that the 32-bit
             * addends below cannot overflow it */
            acc = (acc & 0xFFFFFFFFu) + (acc >> 32) + carry;
            carry = 0;
        }
        while (len >= 4) {
            uint32_t w;
            WISP_MOVE(&w, a, 4);
            WISP_MOVE(d, &w, 4);
            acc += w;
            a += 4;
            d += 4;
            len -= 4;
        }
        s = a;
    }
    if (len >= 2) {
        WISP_MOVE(&w16, s, 2);
        WISP_MOVE(d, &w16, 2);
        acc += w16;
        s += 2;
        d += 2;
        len -= 2;
    }
    if (len != 0) {
        d[0] = s[0];
        acc += native16(s[0], 0u); /* RFC 1071 §1 [Z,0]: zero-padded */
    }
    return native_to_result(acc, odd_start);
}
#endif /* WISP_ARCH_CHKSUM_COPY */

/* ---------------------------------------------------------------------------
 * Block copy
 * ------------------------------------------------------------------------- */

void *wisp_memcpy_ref(void *dst, const void *src, size_t len)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;

    while (len-- != 0) {
        *d++ = *s++;
    }
    return dst;
}

#ifndef WISP_ARCH_MEMCPY

/* Native machine word used by the copy: 64-bit where pointers are 64-bit,
 * 32-bit otherwise (Cortex-M: LDR/STR, LDM/STM). */
#if UINTPTR_MAX > 0xFFFFFFFFu
typedef uint64_t copy_word_t;
#else
typedef uint32_t copy_word_t;
#endif
#define WSZ ((size_t)sizeof(copy_word_t))

/* Copy 8 words as two groups of 4 (load 4, store 4): enough independent
 * loads in flight without running out of registers on Cortex-M (lets GCC
 * pair them into LDRD/STRD). The loads are aligned when the caller
 * established it; the memcpy-of-constant-size form is correct either way. */
#define COPY_4_WORDS(d, s)                                                        \
    do {                                                                          \
        copy_word_t w0_, w1_, w2_, w3_;                                           \
        WISP_MOVE(&w0_, (s) + 0 * WSZ, WSZ);                                      \
        WISP_MOVE(&w1_, (s) + 1 * WSZ, WSZ);                                      \
        WISP_MOVE(&w2_, (s) + 2 * WSZ, WSZ);                                      \
        WISP_MOVE(&w3_, (s) + 3 * WSZ, WSZ);                                      \
        WISP_MOVE((d) + 0 * WSZ, &w0_, WSZ);                                      \
        WISP_MOVE((d) + 1 * WSZ, &w1_, WSZ);                                      \
        WISP_MOVE((d) + 2 * WSZ, &w2_, WSZ);                                      \
        WISP_MOVE((d) + 3 * WSZ, &w3_, WSZ);                                      \
    } while (0)
#define COPY_8_WORDS(d, s)                                                        \
    do {                                                                          \
        COPY_4_WORDS((d), (s));                                                   \
        COPY_4_WORDS((d) + 4 * WSZ, (s) + 4 * WSZ);                               \
    } while (0)

void *wisp_memcpy(void *dst, const void *src, size_t len)
{
    uint8_t *restrict d = (uint8_t *)dst;
    const uint8_t *restrict s = (const uint8_t *)src;

    if (len >= 16u) {
        /* Head: bring dst to a word boundary, 1/2/4 bytes at a time. */
        size_t head = (size_t)(((uintptr_t)0 - (uintptr_t)d) & (uintptr_t)(WSZ - 1u));
        len -= head;
        if ((head & 1u) != 0) {
            *d++ = *s++;
        }
        if ((head & 2u) != 0) {
            WISP_MOVE(d, s, 2);
            d += 2;
            s += 2;
        }
        if ((head & 4u) != 0) {
            WISP_MOVE(d, s, 4);
            d += 4;
            s += 4;
        }
        /* dst is word-aligned now: aligned stores; the loads go through
         * memcpy of a constant size, which is a plain load where the core
         * allows unaligned access (x86, Cortex-M3/M4) and byte loads
         * elsewhere. One loop for co-aligned and misaligned sources (a
         * second, co-aligned copy of the loop let GCC pair loads into
         * LDRD, 120 B more on Cortex-M4, where back-to-back LDRs pipeline
         * to N+1 cycles anyway, Cortex-M4 TRM §3.3.2). */
        while (len >= 8u * WSZ) {
            COPY_8_WORDS(d, s);
            d += 8u * WSZ;
            s += 8u * WSZ;
            len -= 8u * WSZ;
        }
        while (len >= WSZ) {
            WISP_MOVE(d, s, WSZ);
            d += WSZ;
            s += WSZ;
            len -= WSZ;
        }
    }
    /* Tail (or the whole of a short copy): len < 16 here. */
    if ((len & 8u) != 0) {
        WISP_MOVE(d, s, 8);
        d += 8;
        s += 8;
    }
    if ((len & 4u) != 0) {
        WISP_MOVE(d, s, 4);
        d += 4;
        s += 4;
    }
    if ((len & 2u) != 0) {
        WISP_MOVE(d, s, 2);
        d += 2;
        s += 2;
    }
    if ((len & 1u) != 0) {
        *d = *s;
    }
    return dst;
}
#endif /* WISP_ARCH_MEMCPY */
