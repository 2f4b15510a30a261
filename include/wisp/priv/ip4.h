/**
 * @file priv/ip4.h
 * Private tier: the layout of the structures of wisp/ip4.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/ip4.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_IP4_H
#define WISP_PRIV_IP4_H

#include "wisp/ip4.h"

/** One fragment held for reassembly: the received pbuf as it arrived (no
 *  copy), IP header hidden. The offset-0 fragment's header still sits in
 *  front of its payload and is pushed back when the datagram completes. */
struct wisp_ip4_frag_ref {
    struct wisp_pbuf *WISP_PRIV(p);      /**< the fragment's data, IP header hidden */
    uint16_t WISP_PRIV(off), WISP_PRIV(end);        /**< payload byte range [off, end) */
    uint8_t WISP_PRIV(last);             /**< it arrived with MF = 0 */
};

/** One datagram under reassembly (RFC 791 §3.2, RFC 815), keyed by
 *  (src, dst, id, proto). frag[] is kept sorted by offset and never holds
 *  overlapping ranges (an overlap drops the whole datagram). */
struct wisp_ip4_reass {
    struct wisp_ip4_frag_ref WISP_PRIV(frag)[WISP_IP_REASS_MAX_PBUFS];
    wisp_ip4_t WISP_PRIV(src), WISP_PRIV(dst);
    uint16_t WISP_PRIV(id);
    uint8_t WISP_PRIV(proto);
    uint8_t WISP_PRIV(in_use);
    uint16_t WISP_PRIV(nfrags);          /**< entries used in frag[] */
    uint8_t WISP_PRIV(have_last);        /**< the MF=0 fragment was seen */
    uint8_t WISP_PRIV(first_hlen);       /**< header length of the offset-0 fragment; 0 = not seen yet */
    uint16_t WISP_PRIV(nbufs);           /**< receive buffers held (a fragment may be a chain) */
    uint32_t WISP_PRIV(total);           /**< payload length, known once the last is seen */
    uint32_t WISP_PRIV(created);         /**< ms, arrival of the first fragment (timeout base) */
};

struct wisp_ip4 {
    uint16_t WISP_PRIV(next_id);                /**< IP identification counter */
#if WISP_IP_REASS /* off: no table, no timer (nothing of reassembly stays in RAM) */
    uint16_t WISP_PRIV(reass_nbufs);            /**< receive buffers held by all reassembly */
    struct wisp_ip4_reass WISP_PRIV(reass)[WISP_IP_REASS_MAX_DGRAMS];
    struct wisp_timer WISP_PRIV(reass_tmr);     /**< armed for the earliest reassembly deadline */
#endif
};

/* ---- library-internal functions (WISP_PRIVATE_ACCESS only) ---- */
#ifdef WISP_PRIVATE_ACCESS
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
/** Internal: (re)compute the header checksum of the IPv4 header h of hlen
 *  bytes (ip4.c; output, fragments, reassembled datagrams). */
void wisp_ip4_hdr_csum(uint8_t *h, uint16_t hlen);
/** Internal: header room of an output path (IP, UDP; ip4.c). Room for len
 *  bytes in front of p: p's own headroom when it is RAM/POOL with room
 *  (and, with excl, not shared) -- returns p -- else a new RAM buffer of
 *  len bytes chained in front of p (p gains a reference) -- returns it;
 *  NULL when out of memory. The caller writes the header at its payload. */
struct wisp_pbuf *wisp_ip_hdr_attach(struct wisp_stack *s, struct wisp_pbuf *p, uint16_t len, bool excl);
/** Internal: undo wisp_ip_hdr_attach (q its result, ref_before p's
 *  reference count before the hand-off): a chained header buffer is freed;
 *  a header in p's headroom is popped only when nobody below kept a
 *  reference to p (a transmit or ARP queue holding p needs its headers). */
void wisp_ip_hdr_detach(struct wisp_pbuf *p, struct wisp_pbuf *q, uint16_t len, uint16_t ref_before);
#endif /* WISP_PRIVATE_ACCESS */

#endif /* WISP_PRIV_IP4_H */
