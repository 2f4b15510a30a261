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

/** One fragment held for reassembly: the received pbuf as it arrived (no
 *  copy), IP header hidden. The offset-0 fragment's header still sits in
 *  front of its payload and is pushed back when the datagram completes. */
struct wisp_ip4_frag_ref {
    struct wisp_pbuf *p;      /**< the fragment's data, IP header hidden */
    uint16_t off, end;        /**< payload byte range [off, end) */
    uint8_t last;             /**< it arrived with MF = 0 */
};
/** One datagram under reassembly (RFC 791 §3.2, RFC 815), keyed by
 *  (src, dst, id, proto). frag[] is kept sorted by offset and never holds
 *  overlapping ranges (an overlap drops the whole datagram). */
struct wisp_ip4_reass {
    struct wisp_ip4_frag_ref frag[WISP_IP_REASS_MAX_PBUFS];
    wisp_ip4_t src, dst;
    uint16_t id;
    uint8_t proto;
    uint8_t in_use;
    uint16_t nfrags;          /**< entries used in frag[] */
    uint8_t have_last;        /**< the MF=0 fragment was seen */
    uint8_t first_hlen;       /**< header length of the offset-0 fragment; 0 = not seen yet */
    uint16_t nbufs;           /**< receive buffers held (a fragment may be a chain) */
    uint32_t total;           /**< payload length, known once the last is seen */
    uint32_t created;         /**< ms, arrival of the first fragment (timeout base) */
};

struct wisp_ip4 {
    uint16_t next_id;                /**< IP identification counter */
    uint16_t reass_nbufs;            /**< receive buffers held by all reassembly */
    struct wisp_ip4_reass reass[WISP_IP_REASS_MAX_DGRAMS];
    struct wisp_timer reass_tmr;     /**< armed for the earliest reassembly deadline */
};

/** Internal: init and teardown of the IPv4 state (frees reassembly). */
void wisp_ip4_init(struct wisp_stack *s);
void wisp_ip4_deinit(struct wisp_stack *s);
/** Internal: reassembly entry (ip4_frag.c). Takes p (a fragment with its
 *  IP header visible); returns the complete datagram (header visible, total
 *  length fixed up, header checksum recomputed) or NULL while incomplete or
 *  dropped. */
struct wisp_pbuf *wisp_ip4_reass(struct wisp_stack *s, struct wisp_pbuf *p);
/** Internal: fragment p (transport header + data) and send (ip4_frag.c).
 *  hdr is the 20-byte header of the whole datagram (total length, ID, TTL,
 *  protocol, addresses filled; DF clear). Each fragment is a fresh transmit
 *  pbuf (header + a copy of its slice of p). Does not consume p. */
wisp_err_t wisp_ip4_frag(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t *hdr, wisp_ip4_t next_hop);
/** Internal: hand a complete IP datagram (header visible) to the link layer
 *  of nif (ARP/Ethernet, or the device directly). Does not consume p. */
wisp_err_t wisp_ip4_link_output(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t next_hop);

#endif /* WISP_IP4_H */
