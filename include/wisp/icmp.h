/**
 * @file icmp.h
 * ICMP for IPv4 (RFC 792, RFC 1122 §3.2.2): echo reply, echo request for a
 * ping application, destination unreachable with rate limiting. Never an
 * ICMP error about an ICMP error, a fragment other than the first, a
 * broadcast/multicast, or a packet from a non-unicast source
 * (RFC 1122 §3.2.2).
 * Who may call: the core context only.
 */
#ifndef WISP_ICMP_H
#define WISP_ICMP_H

#include "wisp/ip4.h"

#define WISP_ICMP_ECHO_REPLY 0u
#define WISP_ICMP_DEST_UNREACH 3u
#define WISP_ICMP_ECHO 8u
#define WISP_ICMP_TIME_EXCEEDED 11u
#define WISP_ICMP_PARAM_PROBLEM 12u

#define WISP_ICMP_UNREACH_NET 0u
#define WISP_ICMP_UNREACH_HOST 1u
#define WISP_ICMP_UNREACH_PROTO 2u
#define WISP_ICMP_UNREACH_PORT 3u
#define WISP_ICMP_UNREACH_NEEDFRAG 4u

/** Called for each echo reply received (for a ping application). p holds
 *  the ICMP message from its header on and is owned by the callee. */
typedef void (*wisp_icmp_echo_fn)(void *arg, const struct wisp_ip4_info *ip, uint16_t id, uint16_t seq,
                                  struct wisp_pbuf *p);

struct wisp_icmp {
    wisp_icmp_echo_fn echo_cb;
    void *echo_arg;
    uint32_t tokens_mt;       /**< rate-limit bucket, in milli-tokens */
    uint32_t last_refill;     /**< ms */
};

/** Input of an ICMP message (IP header hidden, consumes p). */
void wisp_icmp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip);

/** Send a destination unreachable about the datagram p (transport part,
 *  whose IP header precedes the payload and is described by ip). Does not
 *  consume p. Suppressed (and counted) in the RFC 1122 cases above and when
 *  the rate limit has no token. */
void wisp_icmp_dest_unreach(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip4_info *ip,
                            uint8_t code);

/** Send an echo request with len bytes of pattern data to dst. */
wisp_err_t wisp_icmp_echo_request(struct wisp_stack *s, wisp_ip4_t dst, uint16_t id, uint16_t seq,
                                  uint16_t len, uint8_t ttl);
/** Register the echo-reply callback (NULL to remove). */
void wisp_icmp_set_echo_cb(struct wisp_stack *s, wisp_icmp_echo_fn fn, void *arg);

void wisp_icmp_init(struct wisp_stack *s);

#endif /* WISP_ICMP_H */
