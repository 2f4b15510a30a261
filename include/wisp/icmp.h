/**
 * @file icmp.h
 * ICMP for IPv4 (RFC 792, RFC 1122 §3.2.2): echo reply, echo request for a
 * ping application, destination unreachable with rate limiting; received
 * errors validated (RFC 5927) and passed to TCP / UDP; the path MTU cache
 * (RFC 1191). Never an
 * ICMP error about an ICMP error, a fragment other than the first, a
 * broadcast/multicast, or a packet from a non-unicast source
 * (RFC 1122 §3.2.2).
 * Who may call: the core context only.
 */
#ifndef WISP_ICMP_H
#define WISP_ICMP_H

#include "wisp/ip4.h"
#include "wisp/prot/icmp.h" /* message layout, WISP_ICMP_* types and codes */

/** Called for each echo reply received (for a ping application). p holds
 *  the ICMP message from its header on and is owned by the callee. */
typedef void (*wisp_icmp_echo_fn)(void *arg, const struct wisp_ip_info *ip, uint16_t id, uint16_t seq,
                                  struct wisp_pbuf *p);

/** A received ICMP error, validated by icmp.c (RFC 5927 §4.1: the quoted
 *  IP header is well formed, was sent by us, is a first fragment and
 *  quotes at least 8 bytes of its transport header) and handed to the
 *  transport protocol of the quoted datagram. */
struct wisp_icmp_err {
    uint8_t type, code;
    uint16_t mtu;             /**< next-hop MTU of a type 3 code 4 (0 = not given) */
    wisp_ip4_t reporter;      /**< the ICMP message's source (router or host) */
    wisp_ip4_t src, dst;      /**< quoted datagram: our address, the peer */
    uint16_t sport, dport;    /**< quoted transport ports (ours, the peer's) */
    uint32_t seq;             /**< TCP: quoted sequence number */
    uint16_t qtot;            /**< quoted datagram's IP total length */
    uint8_t df;               /**< quoted datagram had DF set */
};

struct wisp_pmtu_entry;

struct wisp_icmp;

/** Path MTU towards dst (RFC 1191): the cached value when one is known and
 *  not expired, else 0 (use the interface MTU). *nodf (may be NULL) is set
 *  when datagrams to dst must be sent with DF clear. */
uint16_t wisp_pmtu_get(struct wisp_stack *s, wisp_ip4_t dst, bool *nodf);
/** Learn a smaller path MTU for dst (RFC 1191 §6.3; clamped to
 *  WISP_PMTU_MIN, then nodf). Returns the MTU now cached, or 0 when mtu
 *  would not lower what is known (RFC 1191 §3: never raised by ICMP).
 *  blackhole: learned by the black-hole fallback (aged by
 *  WISP_PMTU_PROBE_MS instead of WISP_PMTU_AGE_MS). */
uint16_t wisp_pmtu_lower(struct wisp_stack *s, wisp_ip4_t dst, uint16_t mtu, bool blackhole);

/** Input of an ICMP message (IP header hidden, consumes p). */
void wisp_icmp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip);

/** Send a destination unreachable about the datagram p (transport part,
 *  whose IP header precedes the payload and is described by ip). Does not
 *  consume p. Suppressed (and counted) in the RFC 1122 cases above and when
 *  the rate limit has no token. */
void wisp_icmp_dest_unreach(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip,
                            uint8_t code);

/** Send an echo request with len bytes of pattern data to dst. */
wisp_err_t wisp_icmp_echo_request(struct wisp_stack *s, wisp_ip4_t dst, uint16_t id, uint16_t seq,
                                  uint16_t len, uint8_t ttl);
/** Register the echo-reply callback (NULL to remove). */
void wisp_icmp_set_echo_cb(struct wisp_stack *s, wisp_icmp_echo_fn fn, void *arg);
/** The argument of the registered echo-reply callback (NULL when none);
 *  *registered (may be NULL) tells whether a callback is registered. */
void *wisp_icmp_echo_arg(const struct wisp_stack *s, bool *registered);

void wisp_icmp_init(struct wisp_stack *s);

/* the layout of the structures above (private tier) */
#include "wisp/priv/icmp.h"

#endif /* WISP_ICMP_H */
