/**
 * @file ip4.c
 * IPv4 input (validation, local delivery, dispatch to ICMP/UDP/TCP), routing
 * and output (header construction, loopback, hand-off to the interface's
 * link layer -- struct wisp_link_ops: Ethernet + ARP, raw IP -- or to
 * fragmentation). wisp is a host (RFC 1122): it never forwards.
 *
 * Input: parse, then act. Every check reads only bytes whose presence was
 * verified; each rejection increments the counter that names its reason.
 * ip4.rx counts every datagram (or fragment) handed to IP; ip4.delivered
 * counts datagrams handed to a transport protocol (ICMP, UDP, TCP).
 *
 * Output: the header goes into the caller's headroom when the first buffer
 * is RAM/POOL with 20 free bytes, else into a RAM header buffer chained in
 * front. Output never consumes the caller's pbuf. After the hand-off the
 * pushed header is popped again -- unless a lower layer kept a reference to
 * that very pbuf (a transmit or ARP queue), in which case the header must
 * stay visible for that holder (the same rule as wisp_eth_output).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"
#include "wisp/ethernet.h"
#include "wisp/prot/ip4.h"

/* ------------------------------------------------------------ addresses */

bool wisp_ip4_is_local(struct wisp_stack *s, wisp_ip4_t a)
{
    const struct wisp_netif *nif;
    WISP_CORE_ASSERT_OWNER(s);
    if (a == WISP_IP4_ANY) {
        return false;
    }
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        if (nif->ip4.addr != WISP_IP4_ANY && nif->ip4.addr == a) {
            return true;
        }
    }
    return false;
}

bool wisp_ip4_is_bcast(const struct wisp_netif *nif, wisp_ip4_t a)
{
    wisp_ip4_t host;
    /* RFC 1122 §3.2.1.3 (c): limited broadcast {-1, -1}. */
    if (a == WISP_IP4_BCAST) {
        return true;
    }
    if (nif == NULL || nif->ip4.addr == WISP_IP4_ANY) {
        return false;
    }
    WISP_CORE_ASSERT_OWNER(nif->stack); /* (after the NULL check: nif may be NULL) */
    /* RFC 1122 §3.2.1.3 (d): directed broadcast {<net>, -1}. Prefixes of 31
     * and 32 bits have no broadcast address (RFC 3021 §2.2). */
    host = ~nif->ip4.mask;
    if (wisp_ntohl(host) <= 1u) {
        return false;
    }
    return (a & host) == host && (a & nif->ip4.mask) == (nif->ip4.addr & nif->ip4.mask);
}

/* The interface whose unicast address is a (weak host model), or NULL. */
static struct wisp_netif *ip4_owner(struct wisp_stack *s, wisp_ip4_t a)
{
    struct wisp_netif *nif;
    if (a == WISP_IP4_ANY) {
        return NULL;
    }
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        if (nif->ip4.addr == a) {
            return nif;
        }
    }
    return NULL;
}

static bool is_loopif(const struct wisp_netif *nif)
{
    return (nif->flags & WISP_NETIF_F_LOOPBACK) != 0;
}

/* ---------------------------------------------------------------- input */

/* Walk the option list of a header (RFC 791 §3.1 "Options"): single-octet
 * End of Option List / No Operation, otherwise type, length (counting type
 * and length octets, so at least 2), data. The options with a pointer are
 * checked further (RFC 1122 §3.2.1.8: a malformed option is a bad
 * datagram; dropped and counted rather than answered):
 *  - Record Route (7), Loose / Strict Source Route (131 / 137), RFC 791
 *    §3.1: length 3 + 4n, pointer >= 4 ("the smallest legal value"); a
 *    pointer at or below the length must leave room for a whole address.
 *    Each at most once, and one source route only (RFC 1122 §3.2.1.8 (c)).
 *  - A source route whose pointer has not passed its end names a further
 *    hop: a host does not forward (RFC 1122 §3.3.1, §3.3.5), so such a
 *    datagram is not for us.
 *  - Timestamp (68), RFC 791 §3.1: length >= 4, pointer >= 5, flag 0
 *    (4-byte slots) or 1 / 3 (8-byte slots); a pointer at or below the
 *    length must leave room for a whole slot. At most once.
 *  - Stream ID (136): length 4.
 * True when well formed (and for us). */
static bool ip4_opts_ok(const uint8_t *hdr, unsigned hlen)
{
    unsigned i = WISP_IP4_HLEN, seen = 0; /* bits: 1 record route, 2 source route, 4 timestamp */
    while (i < hlen) {
        unsigned type = hdr[i], olen, ptr, slot, bit;
        if (type == WISP_IP4_OPT_EOL) {
            return true; /* the rest is padding */
        }
        if (type == WISP_IP4_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1u >= hlen) {
            return false; /* no room for the length octet */
        }
        olen = hdr[i + 1u];
        if (olen < 2u || i + olen > hlen) {
            return false;
        }
        ptr = olen >= 3u ? hdr[i + 2u] : 0u;
        switch (type) {
        case WISP_IP4_OPT_LSRR:
        case WISP_IP4_OPT_SSRR:
            if (ptr <= olen) {
                return false; /* RFC 1122 §3.3.5: route not done, we do not forward */
            }
            /* fall through */
        case WISP_IP4_OPT_RR:
            /* RFC 791 §3.1: length 3 + 4n, pointer >= 4, 4-byte slots */
            if (olen < 3u || (olen - 3u) % 4u != 0u || ptr < 4u) {
                return false;
            }
            bit = type == WISP_IP4_OPT_RR ? 1u : 2u;
            slot = 4u;
            break;
        case WISP_IP4_OPT_TS: {
            unsigned flg;
            if (olen < 4u || ptr < 5u) {
                return false;
            }
            flg = hdr[i + 3u] & 0x0fu;
            if (flg != 0u && flg != 1u && flg != 3u) {
                return false; /* RFC 791 §3.1: flags 0, 1, 3 only */
            }
            bit = 4u;
            slot = flg == 0u ? 4u : 8u;
            break;
        }
        case WISP_IP4_OPT_SID:
            if (olen != 4u) {
                return false;
            }
            i += olen;
            continue;
        default:
            i += olen;
            continue; /* others are skipped */
        }
        /* Each at most once (one source route, RFC 1122 §3.2.1.8 (c)); a
         * pointer at or below the length leaves room for a whole slot. */
        if ((seen & bit) != 0u || (ptr <= olen && ptr + slot - 1u > olen)) {
            return false;
        }
        seen |= bit;
        i += olen;
    }
    return true;
}

static void ip4_drop(struct wisp_pbuf *p)
{
    wisp_pbuf_free(p);
}

/* The header checks, in order (RFC 791 §3.1, RFC 1122 §3.2.1); each
 * failure counts its reason. On success *hlenp and *totp hold the header
 * and total lengths: WISP_IP4_HLEN <= hlen <= p->len, hlen <= tot <=
 * p->tot_len. */
static bool ip4_hdr_ok(struct wisp_stack *s, const struct wisp_pbuf *p, uint16_t *hlenp, uint16_t *totp)
{
    const uint8_t *hdr;
    uint16_t hlen, tot;

    /* RFC 791 §3.1: the header is at least 20 octets. */
    if (p->tot_len < WISP_IP4_HLEN) {
        WISP_CTR_INC(s, IP4_DROP_SHORT);
        return false;
    }
    /* The whole header must be contiguous in the first buffer (true for
     * every driver frame: first blocks hold >= 256 bytes); a chain split
     * inside the header is refused like a bad header length. */
    if (p->len < WISP_IP4_HLEN) {
        WISP_CTR_INC(s, IP4_DROP_IHL);
        return false;
    }
    hdr = p->payload;
    /* RFC 1122 §3.2.1.1: silently discard a datagram whose version is not 4. */
    if (wisp_ip4_hdr_version(hdr) != WISP_IP4_VERSION) {
        WISP_CTR_INC(s, IP4_DROP_VERSION);
        return false;
    }
    /* RFC 791 §3.1: IHL counts 32-bit words, minimum 5. */
    hlen = wisp_ip4_hdr_hlen(hdr);
    if (hlen < WISP_IP4_HLEN || hlen > p->len) {
        WISP_CTR_INC(s, IP4_DROP_IHL);
        return false;
    }
    /* RFC 791 §3.1 Total Length: header and data; it must cover the header
     * and cannot exceed what arrived. */
    tot = wisp_rd16(hdr + WISP_IP4_OFF_LEN);
    if (tot < hlen || tot > p->tot_len) {
        WISP_CTR_INC(s, IP4_DROP_LEN);
        return false;
    }
    /* RFC 1122 §3.2.1.2: the header checksum MUST be verified. */
    if (wisp_chksum_sum(hdr, hlen) != 0xFFFFu) {
        WISP_CTR_INC(s, IP4_DROP_CHKSUM);
        return false;
    }
    /* RFC 791 §3.1 Time to Live: 0 means the datagram must be destroyed.
     * RFC 1122 §3.2.1.7: a host MUST NOT discard a datagram just because it
     * was received with TTL 1 (that rule is for forwarding), so only 0. */
    if (hdr[WISP_IP4_OFF_TTL] == 0u) {
        WISP_CTR_INC(s, IP4_DROP_TTL);
        return false;
    }
    /* RFC 1122 §3.2.1.8: options are accepted; we implement none and skip
     * them, but a malformed list (or a source route still under way) is a
     * bad datagram: dropped and counted (ip4_opts_ok). */
    if (hlen > WISP_IP4_HLEN && !ip4_opts_ok(hdr, hlen)) {
        WISP_CTR_INC(s, IP4_DROP_OPTS);
        return false;
    }
    *hlenp = hlen;
    *totp = tot;
    return true;
}

/* True when src may be the source of a datagram received on nif (counted
 * as ip4.drop.src by the caller when not). */
static bool ip4_src_ok(const struct wisp_netif *nif, wisp_ip4_t src, uint8_t proto, bool bcast)
{
    /* RFC 1122 §3.2.1.3: a source that is a broadcast or multicast address
     * is discarded (items (c), (d) and the multicast rule of RFC 1112 §4);
     * {127, any} never appears from outside the host (item (g)). */
    if (wisp_ip4_is_bcast(nif, src) || wisp_ip4_is_multicast(src) ||
        (wisp_ip4_is_loopback(src) && !is_loopif(nif))) {
        return false;
    }
    /* RFC 1122 §3.2.1.3 (a): 0.0.0.0 is a source only while a host learns
     * its address (BOOTP/DHCP: UDP to a broadcast destination). */
    if (src == WISP_IP4_ANY && !(proto == WISP_IP4_PROTO_UDP && bcast)) {
        return false;
    }
    return true;
}

/* True when the datagram p, addressed to dst, is for us (counted as
 * ip4.drop.notforus by the caller when not). Accepted: our unicast address
 * on any interface (weak host model, RFC 1122 §3.3.4.2), the limited
 * broadcast and the arrival interface's directed broadcast (RFC 1122
 * §3.3.6), 224.0.0.1 all-hosts (RFC 1112 §4; no other group is joined).
 * 127/8 only on the loopback interface (RFC 1122 §3.2.1.3 (g)). We do not
 * forward (RFC 1122 §3.3.1: a host that is not a gateway). */
static bool ip4_dst_ok(const struct wisp_netif *nif, const struct wisp_pbuf *p, wisp_ip4_t dst, bool bcast,
                       bool mcast)
{
    if (wisp_ip4_is_loopback(dst)) {
        return is_loopif(nif);
    }
    if (mcast) {
        return dst == wisp_ip4(224, 0, 0, 1);
    }
    if (!bcast) {
        if (!wisp_ip4_is_local(nif->stack, dst)) {
            return false;
        }
        /* RFC 1122 §3.3.6: a datagram received as a link-layer broadcast
         * but addressed to an IP unicast address SHOULD be discarded. */
        if ((p->flags & (WISP_PBUF_F_BCAST | WISP_PBUF_F_MCAST)) != 0) {
            return false;
        }
    }
    return true;
}

/* Hand a local datagram (IP header hidden, described by info) to its
 * transport protocol; consumes p. */
static void ip4_demux(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *info)
{
    void (*in)(struct wisp_stack *, struct wisp_pbuf *, const struct wisp_ip_info *);

    switch (info->proto) {
    case WISP_IP4_PROTO_ICMP:
        in = wisp_icmp_input;
        break;
#if WISP_UDP
    case WISP_IP4_PROTO_UDP:
        in = wisp_udp_input;
        break;
#endif
#if WISP_TCP
    case WISP_IP4_PROTO_TCP:
        in = wisp_tcp_input;
        break;
#endif
    default:
        /* RFC 1122 §3.2.2.1: a host SHOULD send a protocol unreachable.
         * wisp_icmp_dest_unreach expects the IP header hidden in front of
         * the payload (as now) and suppresses broadcasts etc. itself. */
        WISP_CTR_INC(s, IP4_DROP_PROTO);
        wisp_icmp_dest_unreach(s, p, info, WISP_ICMP_UNREACH_PROTO);
        ip4_drop(p);
        return;
    }
    WISP_CTR_INC(s, IP4_DELIVERED);
    in(s, p, info);
}

/* Parse (ip4_hdr_ok, ip4_src_ok, ip4_dst_ok), then act: trim, reassemble,
 * deliver (ip4_demux). */
void wisp_ip4_input(struct wisp_netif *nif, struct wisp_pbuf *p)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_ip_info info;
    const uint8_t *hdr;
    uint16_t hlen, tot, frag;
    wisp_ip4_t src, dst;
    uint8_t proto;
    bool bcast, mcast;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    WISP_CTR_INC(s, IP4_RX);

    if (!ip4_hdr_ok(s, p, &hlen, &tot)) {
        ip4_drop(p);
        return;
    }
    hdr = p->payload;
    src = wisp_ip4_rd(hdr + WISP_IP4_OFF_SRC);
    dst = wisp_ip4_rd(hdr + WISP_IP4_OFF_DST);
    proto = hdr[WISP_IP4_OFF_PROTO];
    bcast = wisp_ip4_is_bcast(nif, dst);
    mcast = wisp_ip4_is_multicast(dst);

    if (!ip4_src_ok(nif, src, proto, bcast)) {
        WISP_CTR_INC(s, IP4_DROP_SRC);
        ip4_drop(p);
        return;
    }
    if (!ip4_dst_ok(nif, p, dst, bcast, mcast)) {
        WISP_CTR_INC(s, IP4_DROP_NOTFORUS);
        ip4_drop(p);
        return;
    }

    /* Act. Bytes beyond the total length are link padding (RFC 894 pads
     * Ethernet frames to 60 bytes): cut them off. */
    if (p->tot_len > tot) {
        wisp_pbuf_trim(p, tot);
    }

    frag = wisp_rd16(hdr + WISP_IP4_OFF_FRAG);
    if ((frag & (WISP_IP4_FLAG_MF | WISP_IP4_OFFMASK)) != 0) {
        /* RFC 791 §3.2: a fragment; reassembly returns the whole datagram
         * when this was its missing piece. */
        WISP_CTR_INC(s, IP4_FRAG_RX);
#if WISP_IP_REASS
        p = wisp_ip4_reass(s, p);
        if (p == NULL) {
            return;
        }
        hdr = p->payload;
        hlen = wisp_ip4_hdr_hlen(hdr);
        tot = wisp_rd16(hdr + WISP_IP4_OFF_LEN);
#else
        WISP_CTR_INC(s, IP4_REASS_BADFRAG);
        ip4_drop(p);
        return;
#endif
    }

    info.nif = nif;
    info.src = wisp_ipaddr4(src);
    info.dst = wisp_ipaddr4(dst);
    info.hlen = hlen;
    info.tot_len = tot;
    info.proto = proto;
    info.tos = hdr[WISP_IP4_OFF_TOS];
    info.ttl = hdr[WISP_IP4_OFF_TTL];
    info.bcast = bcast ? 1u : 0u;
    info.mcast = mcast ? 1u : 0u;

    (void)wisp_pbuf_pop(p, hlen); /* hlen <= p->len was checked */
    ip4_demux(s, p, &info);
}

/* -------------------------------------------------------------- routing */

struct wisp_netif *wisp_ip4_route(struct wisp_stack *s, wisp_ip4_t dst)
{
    struct wisp_netif *nif, *best = NULL;
    uint32_t best_mask = 0;
    WISP_CORE_ASSERT_OWNER(s);

    /* RFC 1122 §3.2.1.3 (g): 127/8 is internal host loopback. */
    if (wisp_ip4_is_loopback(dst)) {
#if WISP_LOOPBACK
        return &s->loopif;
#else
        return NULL;
#endif
    }
    /* Limited broadcast (and multicast: no routing table for groups, RFC
     * 1112 §6.1 leaves the default to the host): first usable link. */
    if (dst == WISP_IP4_BCAST || wisp_ip4_is_multicast(dst)) {
        for (nif = s->netifs; nif != NULL; nif = nif->next) {
            if (wisp_netif_is_usable(nif) && !is_loopif(nif)) {
                return nif;
            }
        }
        return NULL;
    }
    /* Directly connected subnets, longest prefix wins (RFC 1812 §5.2.4.3
     * rule, applied to a host's on-link routes). */
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        uint32_t m;
        if (!wisp_netif_is_usable(nif) || is_loopif(nif) || nif->ip4.addr == WISP_IP4_ANY) {
            continue;
        }
        if (((dst ^ nif->ip4.addr) & nif->ip4.mask) != 0) {
            continue;
        }
        m = wisp_ntohl(nif->ip4.mask);
        if (best == NULL || m > best_mask) {
            best = nif;
            best_mask = m;
        }
    }
    if (best != NULL) {
        return best;
    }
    /* Default route: the first usable interface with a gateway
     * (RFC 1122 §3.3.1.1: off-link destinations go to a gateway). */
    for (nif = s->netifs; nif != NULL; nif = nif->next) {
        if (wisp_netif_is_usable(nif) && !is_loopif(nif) && nif->ip4.gw != WISP_IP4_ANY) {
            return nif;
        }
    }
    return NULL;
}

/* --------------------------------------------------------------- output */

wisp_err_t wisp_ip4_link_output(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t next_hop)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    p->if_idx = nif->index;
    if (nif->link != NULL) {
        wisp_ipaddr_t nh = wisp_ipaddr4(next_hop);
        return nif->link->output(nif, p, &nh);
    }
    return wisp_netif_tx(nif, p);
}

/* Fill a 20-byte header (RFC 791 §3.1); the checksum last. */
static void ip4_build_hdr(uint8_t *h, uint16_t tot, uint16_t id, bool df, uint8_t ttl, uint8_t tos, uint8_t proto,
                          wisp_ip4_t src, wisp_ip4_t dst)
{
    h[WISP_IP4_OFF_VHL] = 0x45; /* version 4, IHL 5: we never send options */
    h[WISP_IP4_OFF_TOS] = tos;
    wisp_wr16(h + WISP_IP4_OFF_LEN, tot);
    wisp_wr16(h + WISP_IP4_OFF_ID, id);
    wisp_wr16(h + WISP_IP4_OFF_FRAG, df ? (uint16_t)WISP_IP4_FLAG_DF : 0u);
    h[WISP_IP4_OFF_TTL] = ttl;
    h[WISP_IP4_OFF_PROTO] = proto;
    wisp_ip4_wr(h + WISP_IP4_OFF_SRC, src);
    wisp_ip4_wr(h + WISP_IP4_OFF_DST, dst);
    wisp_ip4_hdr_csum(h, WISP_IP4_HLEN);
}

void wisp_ip4_hdr_csum(uint8_t *h, uint16_t hlen)
{
    /* RFC 791 §3.1 Header Checksum (over the header, the field as 0); RFC 1071. */
    wisp_wr16(h + WISP_IP4_OFF_CSUM, 0);
    wisp_wr16(h + WISP_IP4_OFF_CSUM, (uint16_t)~wisp_chksum_sum(h, hlen));
}

struct wisp_pbuf *wisp_ip_hdr_attach(struct wisp_stack *s, struct wisp_pbuf *p, uint16_t len, bool excl)
{
    struct wisp_pbuf *q;
    if ((!excl || p->ref == 1u) && wisp_pbuf_push(p, len) == WISP_OK) { /* only RAM/POOL with headroom */
        return p;
    }
    q = wisp_pbuf_alloc(s, WISP_LAYER_IP, len, WISP_PBUF_RAM);
    if (q != NULL) {
        wisp_pbuf_chain(q, p);
    }
    return q;
}

void wisp_ip_hdr_detach(struct wisp_pbuf *p, struct wisp_pbuf *q, uint16_t len, uint16_t ref_before)
{
    if (q != p) {
        wisp_pbuf_free(q); /* drops the reference q held on p */
    } else if (p->ref == ref_before) {
        (void)wisp_pbuf_pop(p, len);
    }
}

#if WISP_LOOPBACK
/* Deliver q (a complete datagram) to ourselves: a copy goes on the
 * loopback queue, wisp_stack_poll feeds it to wisp_ip4_input. */
static wisp_err_t ip4_loop(struct wisp_stack *s, const struct wisp_pbuf *q)
{
    struct wisp_pbuf *c;
    if (s->loopq_count >= WISP_LOOP_QUEUE_LEN) {
        WISP_CTR_INC(s, LOOP_DROP);
        return WISP_ERR_MEM;
    }
    c = wisp_pbuf_clone(s, WISP_LAYER_RAW, q);
    if (c == NULL) {
        WISP_CTR_INC(s, IP4_DROP_NOMEM);
        return WISP_ERR_MEM;
    }
    c->flags = 0; /* not a link-layer broadcast */
    c->if_idx = s->loopif.index;
    s->loopq[(s->loopq_head + s->loopq_count) % WISP_LOOP_QUEUE_LEN] = c;
    s->loopq_count++;
    s->loopif.st.tx_frames++;
    s->loopif.st.tx_bytes += c->tot_len;
    return WISP_OK;
}
#endif

wisp_err_t wisp_ip4_output_if(struct wisp_netif *nif, struct wisp_pbuf *p, wisp_ip4_t src, wisp_ip4_t dst,
                              uint8_t ttl, uint8_t tos, uint8_t proto, bool df)
{
    struct wisp_stack *s;
    uint8_t hdr[WISP_IP4_HLEN];
    struct wisp_pbuf *q;
    wisp_ip4_t next_hop;
    uint16_t tot, ref_before;
    bool local;
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (nif == NULL || p == NULL) {
        return WISP_ERR_ARG;
    }
    s = nif->stack;
    /* RFC 791 §3.1: total length is a 16-bit field. */
    if ((uint32_t)p->tot_len + WISP_IP4_HLEN > WISP_IP4_MAX_LEN) {
        WISP_CTR_INC(s, IP4_DROP_LEN);
        return WISP_ERR_VAL;
    }
    tot = (uint16_t)(p->tot_len + WISP_IP4_HLEN);
    local = is_loopif(nif) || wisp_ip4_is_local(s, dst);
    if (!local && !wisp_netif_is_usable(nif)) {
        WISP_CTR_INC(s, IP4_DROP_LINKDOWN);
        return WISP_ERR_IF;
    }
    if (src == WISP_IP4_ANY) {
        src = nif->ip4.addr; /* RFC 1122 §3.3.4.3: the address of the outgoing interface */
    }

    /* Next hop (RFC 1122 §3.3.1.1): the destination itself when it is one
     * of ours (looped back), a broadcast, a multicast or on the link; else
     * the gateway. */
    if (local) {
#if WISP_LOOPBACK
        next_hop = dst;
#else
        WISP_CTR_INC(s, IP4_DROP_NOROUTE);
        return WISP_ERR_RTE;
#endif
    } else if (wisp_ip4_is_bcast(nif, dst) || wisp_ip4_is_multicast(dst) ||
               (nif->ip4.addr != WISP_IP4_ANY && ((dst ^ nif->ip4.addr) & nif->ip4.mask) == 0)) {
        next_hop = dst;
    } else if (nif->ip4.gw != WISP_IP4_ANY) {
        next_hop = nif->ip4.gw;
    } else {
        WISP_CTR_INC(s, IP4_DROP_NOROUTE);
        return WISP_ERR_RTE;
    }

    ip4_build_hdr(hdr, tot, s->ip4.next_id++, df, ttl ? ttl : (uint8_t)WISP_IP_DEFAULT_TTL, tos, proto, src, dst);

    if (!local && tot > nif->mtu) {
        /* RFC 791 §3.2: a datagram with DF set that does not fit is
         * discarded. Fragmentation needs a room of at least 8 data bytes. */
        if (df || !WISP_IP_FRAG) {
            WISP_CTR_INC(s, IP4_DROP_DF);
            return WISP_ERR_VAL;
        }
        err = wisp_ip4_frag(nif, p, hdr, next_hop); /* sets each fragment's prio from the TOS */
        if (err == WISP_OK) {
            WISP_CTR_INC(s, IP4_TX);
        }
        return err;
    }

    ref_before = p->ref;
    /* The header goes in p's headroom, else in a buffer chained in front
     * (see the file comment). */
    q = wisp_ip_hdr_attach(s, p, WISP_IP4_HLEN, false);
    if (q == NULL) {
        WISP_CTR_INC(s, IP4_DROP_NOMEM);
        return WISP_ERR_MEM;
    }
    memcpy(q->payload, hdr, WISP_IP4_HLEN);
    /* Transmit queue class from the DSCP (RFC 2474 §3; lwIP-analysis paper §4.3, netif.h). */
    q->prio = wisp_dscp_prio((uint8_t)(tos >> 2));
#if WISP_LOOPBACK
    err = local ? ip4_loop(s, q) : wisp_ip4_link_output(nif, q, next_hop);
#else
    err = wisp_ip4_link_output(nif, q, next_hop);
#endif
    if (err == WISP_OK) {
        WISP_CTR_INC(s, IP4_TX);
    }
    wisp_ip_hdr_detach(p, q, WISP_IP4_HLEN, ref_before);
    return err;
}

wisp_err_t wisp_ip4_output(struct wisp_stack *s, struct wisp_pbuf *p, wisp_ip4_t src, wisp_ip4_t dst, uint8_t ttl,
                           uint8_t tos, uint8_t proto, bool df)
{
    struct wisp_netif *nif;
    WISP_CORE_ASSERT_OWNER(s);
    if (p == NULL) {
        return WISP_ERR_ARG;
    }
    /* One of our own addresses: looped back whatever state its interface
     * is in (weak host model, RFC 1122 §3.3.4.2). */
    nif = ip4_owner(s, dst);
    if (nif == NULL) {
        nif = wisp_ip4_route(s, dst);
    }
    if (nif == NULL) {
        WISP_CTR_INC(s, IP4_DROP_NOROUTE);
        return WISP_ERR_RTE;
    }
    return wisp_ip4_output_if(nif, p, src, dst, ttl, tos, proto, df);
}

/* ------------------------------------------------------ init / teardown */

void wisp_ip4_init(struct wisp_stack *s)
{
    /* the rest of s->ip4 is zeroed by wisp_stack_init */
    /* RFC 6864 §4.1 / RFC 7739: do not start the ID at a predictable value. */
    s->ip4.next_id = (uint16_t)wisp_random_id(s, WISP_RID_IP_ID);
}
