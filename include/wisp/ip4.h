/**
 * @file ip4.h
 * IPv4 (RFC 791, RFC 1122 §3): validation, routing, fragmentation and
 * reassembly. wisp is a host: it does not forward datagrams between
 * interfaces (counted as ip4.drop.notforus).
 * Who may call: the core context only.
 */
#ifndef WISP_IP4_H
#define WISP_IP4_H

#include "wisp/netif.h"
#include "wisp/timer.h"
#include "wisp/ip.h"
#include "wisp/prot/ip4.h" /* the header layout: WISP_IP4_HLEN, WISP_IP4_PROTO_*, WISP_IP4_FLAG_* ... */

/** Input of a datagram (link header removed; consumes p). */
void wisp_ip4_input(struct wisp_netif *nif, struct wisp_pbuf *p);

/** Choose the interface for dst: a directly connected subnet with the
 *  longest prefix first, then the first usable interface with a gateway.
 *  NULL when none (no route). */
struct wisp_netif *wisp_ip4_route(struct wisp_stack *s, wisp_ip4_t dst);

/** Build the IPv4 header in front of p (transport header and data) and send
 *  it: route, pick the source (src 0 = the interface's address), fragment
 *  when larger than the MTU (unless df), set p->prio from the DSCP in tos.
 *  ttl 0 = WISP_IP_DEFAULT_TTL. Does not consume p. */
wisp_err_t wisp_ip4_output(struct wisp_stack *s, struct wisp_pbuf *p, wisp_ip4_t src, wisp_ip4_t dst, uint8_t ttl,
                           uint8_t tos, uint8_t proto, bool df);
/** The same on a given interface. */
wisp_err_t wisp_ip4_output_if(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t src, wisp_ip4_t dst,
                              uint8_t ttl, uint8_t tos, uint8_t proto, bool df);

/** True when a is one of the stack's own unicast addresses (any netif). */
bool wisp_ip4_is_local(struct wisp_stack *s, wisp_ip4_t a);
/** True when a is a broadcast address for nif (255.255.255.255 or the
 *  subnet-directed broadcast), RFC 1122 §3.2.1.3. */
bool wisp_ip4_is_bcast(const struct wisp_netif *nif, wisp_ip4_t a);

struct wisp_ip4_frag_ref;
struct wisp_ip4_reass;

struct wisp_ip4;


/* the layout of the structures above (private tier) */
#include "wisp/priv/ip4.h"

#endif /* WISP_IP4_H */
