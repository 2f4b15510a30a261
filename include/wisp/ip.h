/**
 * @file ip.h
 * What the IP layer of any address family hands to the transport layer:
 * a received datagram's header, parsed once (no per-packet globals).
 * IPv4 fills it today (ip4.c); an IPv6 layer fills the same structure,
 * so UDP, TCP and ICMP error handling take datagrams of either family.
 * And the other direction: the family dispatch (ip.c) through which
 * transports route, send and sum datagrams without naming a family.
 * Who may call: the core context only.
 */
#ifndef WISP_IP_H
#define WISP_IP_H

#include "wisp/addr.h"
#include "wisp/err.h"

struct wisp_netif;
struct wisp_stack;
struct wisp_pbuf;

/** A received datagram's header, in host-order fields. */
struct wisp_ip_info {
    struct wisp_netif *nif;   /**< interface it arrived on */
    wisp_ipaddr_t src, dst;   /**< source and destination (family-tagged) */
    uint16_t hlen;            /**< IP header length in bytes (IPv4: 20..60) */
    uint16_t tot_len;         /**< total length from the header */
    uint8_t proto;            /**< transport protocol (IPv4 protocol field) */
    uint8_t tos;              /**< IPv4 TOS (DSCP << 2 | ECN) */
    uint8_t ttl;              /**< IPv4 TTL */
    uint8_t bcast;            /**< dst was a broadcast (limited or directed) */
    uint8_t mcast;            /**< dst was multicast */
};

/* Family dispatch (ip.c): what transports call, whatever the family of
 * the addresses. Only IPv4 is built today; an address of another family
 * is refused with WISP_ERR_VAL (or NULL, false, 0). */

/** The interface for dst (ip4.c: wisp_ip4_route), NULL = no route. */
struct wisp_netif *wisp_ip_route(struct wisp_stack *s, const wisp_ipaddr_t *dst);
/** Send p (transport header and data) from src (any = the interface's
 *  address) to dst: wisp_ip4_output for IPv4. Does not consume p. */
wisp_err_t wisp_ip_output(struct wisp_stack *s, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                          const wisp_ipaddr_t *dst, uint8_t ttl, uint8_t tos, uint8_t proto, bool df);
/** As wisp_ip_output, out of interface nif whatever the routes say
 *  (wisp_ip4_output_if for IPv4). Does not consume p. */
wisp_err_t wisp_ip_output_if(struct wisp_netif *nif, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                             const wisp_ipaddr_t *dst, uint8_t ttl, uint8_t tos, uint8_t proto, bool df);
/** The address of nif in the family of dst, for the source of a datagram
 *  to dst (RFC 1122 §3.3.4.3: the address of the outgoing interface); any
 *  when nif has none. */
wisp_ipaddr_t wisp_ip_netif_addr(const struct wisp_netif *nif, const wisp_ipaddr_t *dst);
/** True when a can be a source address: not any, not a broadcast, not
 *  multicast (RFC 1122 §3.2.1.3, §4.1.3.5). */
bool wisp_ip_is_unicast(const wisp_ipaddr_t *a);
/** True when a's family is built (IPv4 today). */
bool wisp_ip_family_built(const wisp_ipaddr_t *a);
/** True when a is one of the stack's own unicast addresses. */
bool wisp_ip_is_local(struct wisp_stack *s, const wisp_ipaddr_t *a);
/** Pseudo-header sum (RFC 768, RFC 9293 §3.1) for the family of src/dst,
 *  folded, not complemented (as wisp_chksum_pseudo4). */
uint16_t wisp_ip_chksum_pseudo(const wisp_ipaddr_t *src, const wisp_ipaddr_t *dst, uint8_t proto, uint16_t len);

#endif /* WISP_IP_H */
