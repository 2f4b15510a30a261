/**
 * @file arch.h
 * Basic types, byte order and unaligned wire access helpers.
 *
 * Every multi-byte field on the wire is read and written through the
 * wisp_rd16/wisp_wr16/wisp_rd32/wisp_wr32 helpers below: they work at any
 * alignment (Cortex-M0 faults on unaligned words) and never alias.
 * Who may call: anyone, any context (pure functions).
 */
#ifndef WISP_ARCH_H
#define WISP_ARCH_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>

#define WISP_UNUSED(x) ((void)(x))
#define WISP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WISP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define WISP_MAX(a, b) ((a) > (b) ? (a) : (b))
/** Round x up to a multiple of a (a power of two). */
#define WISP_ALIGN_UP(x, a) (((x) + ((a) - 1u)) & ~((size_t)(a) - 1u))

/** Header tiers. include/wisp/ is the public API; include/wisp/prot/ the
 *  wire formats; include/wisp/priv/ the private tier: the layout of the
 *  structures a user allocates (struct wisp_stack, struct wisp_netif ...)
 *  or that the stack holds, needed for their size only. Their members
 *  are declared as WISP_PRIV(name): inside the library (its sources
 *  define WISP_PRIVATE_ACCESS before any include; white-box tests do too)
 *  that is the name itself, anywhere else it becomes wisp_priv_name, so
 *  an application that touches a private member does not compile. */
#ifdef WISP_PRIVATE_ACCESS
#define WISP_PRIV(m) m
#else
#define WISP_PRIV(m) wisp_priv_##m
#endif

/** Compile-time assertion usable at file scope (C99 has no _Static_assert). */
#define WISP_STATIC_ASSERT(name, cond) typedef char wisp_static_assert_##name[(cond) ? 1 : -1]

/** Keep a function out of line: a helper called from several places stays
 *  one copy (flash; -Os would inline a copy into each caller). */
#if defined(__GNUC__)
#define WISP_NOINLINE __attribute__((noinline))
#else
#define WISP_NOINLINE
#endif

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__ARM_FEATURE_UNALIGNED) || defined(__x86_64__) || defined(__i386__))
/* Little-endian CPUs with unaligned stores (Cortex-M3/M4/M7, x86): one
 * byte swap and one store. The compilers merge wisp_rd16/32's byte loads
 * into a load and a swap by themselves, not these stores (4 byte stores
 * and 3 shifts per wisp_wr32: issue 9, flash). */
static inline void wisp_wr16(uint8_t *p, uint16_t v) { v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static inline void wisp_wr32(uint8_t *p, uint32_t v) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
#define WISP_RD_SWAP_ 1
#else
static inline void wisp_wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wisp_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
#endif

#ifdef WISP_RD_SWAP_
/* The loads too: one unaligned load and a swap, which gcc does not always
 * make of the byte loads by itself (an index plus a constant offset) */
static inline uint16_t wisp_rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return __builtin_bswap16(v); }
static inline uint32_t wisp_rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
#undef WISP_RD_SWAP_
#else
static inline uint16_t wisp_rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t wisp_rd32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
#endif

/** Host <-> network order for 16/32-bit values. */
static inline uint16_t wisp_htons(uint16_t v)
{
    uint8_t b[2]; uint16_t r; wisp_wr16(b, v); memcpy(&r, b, 2); return r;
}
static inline uint32_t wisp_htonl(uint32_t v)
{
    uint8_t b[4]; uint32_t r; wisp_wr32(b, v); memcpy(&r, b, 4); return r;
}
#define wisp_ntohs wisp_htons
#define wisp_ntohl wisp_htonl

#endif /* WISP_ARCH_H */
