/**
 * @file priv/icmp.h
 * Private tier: the layout of the structures of wisp/icmp.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/icmp.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_ICMP_H
#define WISP_PRIV_ICMP_H

#include "wisp/icmp.h"

/** One path MTU below the interface MTU (RFC 1191 §5 host route). */
struct wisp_pmtu_entry {
    wisp_ip4_t WISP_PRIV(dst);           /**< 0 = free */
    uint16_t WISP_PRIV(mtu);
    uint8_t WISP_PRIV(nodf);             /**< clamped to WISP_PMTU_MIN: send with DF clear */
    uint8_t WISP_PRIV(blackhole);        /**< learned by the black-hole fallback, not from ICMP */
    uint32_t WISP_PRIV(expire);          /**< ms: afterwards the interface MTU is tried again */
};

struct wisp_icmp {
    wisp_icmp_echo_fn WISP_PRIV(echo_cb);
    void *WISP_PRIV(echo_arg);
    uint32_t WISP_PRIV(tokens_mt);       /**< rate-limit bucket, in milli-tokens */
    uint32_t WISP_PRIV(last_refill);     /**< ms */
#if WISP_PMTU
    struct wisp_pmtu_entry WISP_PRIV(pmtu)[WISP_PMTU_CACHE_SIZE]; /**< path MTU cache */
#endif
};

#endif /* WISP_PRIV_ICMP_H */
