/**
 * @file addr.h
 * Family-tagged IP addresses. IPv4 addresses are kept in network byte order
 * (the four octets in wire order in memory), so they are compared and copied
 * as plain 32-bit values and never swapped on the packet path.
 * Who may call: anyone (pure functions).
 */
#ifndef WISP_ADDR_H
#define WISP_ADDR_H

#include "wisp/arch.h"
#include "wisp/opt.h"

/** An IPv4 address, network byte order. */
typedef uint32_t wisp_ip4_t;

/** Address families. WISP_AF_NONE exists only in the tagged layout
 *  (WISP_IPV6 1: a zeroed address); nothing may rely on it, since with
 *  IPv6 compiled out every address is IPv4 and "none" is 0.0.0.0. */
enum { WISP_AF_NONE = 0, WISP_AF_INET4 = 4, WISP_AF_INET6 = 6 };

#if WISP_IPV6
/** A family-tagged IP address (20 bytes). */
typedef struct wisp_ipaddr {
    union {
        wisp_ip4_t ip4;      /**< WISP_AF_INET4, network order */
        uint8_t ip6[16];     /**< WISP_AF_INET6, wire order */
    } u;
    uint8_t family;          /**< WISP_AF_* */
} wisp_ipaddr_t;
/** Static initializer of an IPv4 address (v in network order). */
#define WISP_IPADDR4_INIT(v) { { (v) }, WISP_AF_INET4 }
#else
/** IPv6 compiled out: the address collapses to a bare IPv4 address
 *  (4 bytes, as lwIP's ip_addr_t without IPv6); the family is implied. */
typedef struct wisp_ipaddr {
    union {
        wisp_ip4_t ip4;      /**< network order */
    } u;
} wisp_ipaddr_t;
#define WISP_IPADDR4_INIT(v) { { (v) } }
#endif

/** Build an IPv4 address from octets a.b.c.d (network order result). */
static inline wisp_ip4_t wisp_ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    uint8_t o[4] = { a, b, c, d };
    wisp_ip4_t r;
    memcpy(&r, o, 4);
    return r;
}
#define WISP_IP4_ANY ((wisp_ip4_t)0)
#define WISP_IP4_BCAST ((wisp_ip4_t)0xffffffffu)

/** Read/write an IPv4 address from/to wire bytes without alignment needs. */
static inline wisp_ip4_t wisp_ip4_rd(const uint8_t *p) { wisp_ip4_t r; memcpy(&r, p, 4); return r; }
static inline void wisp_ip4_wr(uint8_t *p, wisp_ip4_t a) { memcpy(p, &a, 4); }

/** First octet (network order), for class checks. */
static inline uint8_t wisp_ip4_octet(wisp_ip4_t a, int i) { uint8_t o[4]; memcpy(o, &a, 4); return o[i & 3]; }
static inline bool wisp_ip4_is_multicast(wisp_ip4_t a) { return (wisp_ip4_octet(a, 0) & 0xf0) == 0xe0; }
static inline bool wisp_ip4_is_loopback(wisp_ip4_t a) { return wisp_ip4_octet(a, 0) == 127; }

/** Netmask (network order) of a prefix length 0..32. */
wisp_ip4_t wisp_ip4_prefix_mask(unsigned prefix);

/** Parse dotted-quad text ("198.18.0.2"); returns true on success. Strict:
 *  four decimal octets 0..255, no leading '+', nothing after. */
bool wisp_ip4_aton(const char *s, wisp_ip4_t *out);

/** Format into buf (at least 16 bytes); returns buf. */
char *wisp_ip4_ntoa(wisp_ip4_t a, char *buf);

/* Accessors: code outside addr.h uses these, never the members, so the
 * layout can collapse to a bare IPv4 address when IPv6 is compiled out. */
#if WISP_IPV6
static inline uint8_t wisp_ipaddr_family(const wisp_ipaddr_t *a) { return a->family; }
static inline bool wisp_ipaddr_is4(const wisp_ipaddr_t *a) { return a->family == WISP_AF_INET4; }
/** The IPv4 address (network order); 0 when a is not IPv4. */
static inline wisp_ip4_t wisp_ipaddr_ip4(const wisp_ipaddr_t *a) { return a->family == WISP_AF_INET4 ? a->u.ip4 : 0; }
static inline void wisp_ipaddr_set4(wisp_ipaddr_t *a, wisp_ip4_t v) { a->family = WISP_AF_INET4; a->u.ip4 = v; }
#else
static inline uint8_t wisp_ipaddr_family(const wisp_ipaddr_t *a) { (void)a; return WISP_AF_INET4; }
static inline bool wisp_ipaddr_is4(const wisp_ipaddr_t *a) { (void)a; return true; }
static inline wisp_ip4_t wisp_ipaddr_ip4(const wisp_ipaddr_t *a) { return a->u.ip4; }
static inline void wisp_ipaddr_set4(wisp_ipaddr_t *a, wisp_ip4_t v) { a->u.ip4 = v; }
#endif

/** Family-tagged constructor. */
static inline wisp_ipaddr_t wisp_ipaddr4(wisp_ip4_t a)
{
    wisp_ipaddr_t r;
    memset(&r, 0, sizeof(r));
    wisp_ipaddr_set4(&r, a);
    return r;
}
/** IPv4 any (0.0.0.0), tagged. */
static inline wisp_ipaddr_t wisp_ipaddr_any4(void) { return wisp_ipaddr4(WISP_IP4_ANY); }

/** Same family and same address. */
static inline bool wisp_ipaddr_eq(const wisp_ipaddr_t *a, const wisp_ipaddr_t *b)
{
#if WISP_IPV6
    if (a->family != b->family) {
        return false;
    }
    if (a->family == WISP_AF_INET6) {
        return memcmp(a->u.ip6, b->u.ip6, 16) == 0;
    }
    return a->family != WISP_AF_INET4 || a->u.ip4 == b->u.ip4;
#else
    return a->u.ip4 == b->u.ip4;
#endif
}

/** True for NULL or an all-zero address of any family (and, in the tagged
 *  layout, for family NONE). */
static inline bool wisp_ipaddr_is_any(const wisp_ipaddr_t *a)
{
#if WISP_IPV6
    static const uint8_t zero16[16] = { 0 };
    if (a == NULL || a->family == WISP_AF_NONE) {
        return true;
    }
    if (a->family == WISP_AF_INET6) {
        return memcmp(a->u.ip6, zero16, 16) == 0;
    }
    return a->family == WISP_AF_INET4 && a->u.ip4 == 0;
#else
    return a == NULL || a->u.ip4 == 0;
#endif
}

#endif /* WISP_ADDR_H */
