/**
 * @file ethernet.c
 * Ethernet II framing (RFC 894): receive-side validation and dispatch by
 * EtherType to IPv4 and ARP, and transmit-side header construction in front
 * of an outgoing packet (in its headroom, or in a chained header buffer);
 * and the Ethernet link of interfaces (wisp_link_eth, struct wisp_link_ops).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/ethernet.h"
#include "wisp/arp.h"
#include "wisp/ip4.h"
#include "wisp/stack.h"
#include "wisp/prot/ethernet.h"

const uint8_t wisp_eth_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* IEEE 802.3 §3.2.3: the least significant bit of the first octet is the
 * individual/group bit; group addresses are multicast (all ones: broadcast). */
static bool eth_is_group(const uint8_t *mac) { return (mac[0] & WISP_ETH_ADDR_GROUP) != 0; }

static bool eth_is_bcast(const uint8_t *mac) { return memcmp(mac, wisp_eth_bcast, WISP_ETH_ADDR_LEN) == 0; }

void wisp_eth_input(struct wisp_netif *nif, struct wisp_pbuf *p)
{
    struct wisp_stack *s = nif->stack;
    uint8_t hdr[WISP_ETH_HLEN];
    const uint8_t *dst = hdr + WISP_ETH_OFF_DST;
    const uint8_t *src = hdr + WISP_ETH_OFF_SRC;
    uint16_t type;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    WISP_CTR_INC(s, ETH_RX);
    /* Parse: the header may straddle buffers of a chain, so copy it out. */
    if (p->tot_len < WISP_ETH_HLEN || wisp_pbuf_copy_out(p, hdr, WISP_ETH_HLEN, 0) != WISP_ETH_HLEN) {
        WISP_CTR_INC(s, ETH_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    type = wisp_rd16(hdr + WISP_ETH_OFF_TYPE);

    /* Accept only frames addressed to us, broadcast or multicast. */
    if (!eth_is_group(dst) && memcmp(dst, nif->hwaddr, WISP_ETH_ADDR_LEN) != 0) {
        WISP_CTR_INC(s, ETH_DROP_NOTFORUS);
        wisp_pbuf_free(p);
        return;
    }
    /* IEEE 802.3 §3.2.3: a source address is always an individual address. */
    if (eth_is_group(src)) {
        WISP_CTR_INC(s, ETH_DROP_SRC);
        wisp_pbuf_free(p);
        return;
    }
    if (!wisp_netif_is_usable(nif)) {
        WISP_CTR_INC(s, ETH_DROP_LINKDOWN);
        wisp_pbuf_free(p);
        return;
    }
    if (type != WISP_ETHTYPE_IP4 && type != WISP_ETHTYPE_ARP) {
        /* Unknown types, 802.3 length fields (< 0x0600) and, for now, IPv6. */
        WISP_CTR_INC(s, ETH_DROP_TYPE);
        wisp_pbuf_free(p);
        return;
    }

    /* Act. */
    p->flags &= (uint8_t)~(WISP_PBUF_F_BCAST | WISP_PBUF_F_MCAST);
    if (eth_is_bcast(dst))
        p->flags |= WISP_PBUF_F_BCAST;
    else if (eth_is_group(dst))
        p->flags |= WISP_PBUF_F_MCAST;
    p->if_idx = nif->index;
    if (wisp_pbuf_pop(p, WISP_ETH_HLEN) != WISP_OK) {
        /* First buffer of the chain shorter than the header: not a frame a
         * driver should produce; drop it rather than parse across buffers. */
        WISP_CTR_INC(s, ETH_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    /* Frames shorter than 60 bytes arrive padded (RFC 894): IPv4 trims to its
     * total length, ARP ignores bytes after its 28. */
    if (type == WISP_ETHTYPE_IP4)
        wisp_ip4_input(nif, p);
    else
        wisp_arp_input(nif, p, src);
}

/* ------------------------------------------- the Ethernet + ARP link */

static wisp_err_t eth_link_output(struct wisp_netif *nif, struct wisp_pbuf *p, const wisp_ipaddr_t *next_hop)
{
    if (wisp_ipaddr_is4(next_hop)) {
        return wisp_arp_output(nif, p, wisp_ipaddr_ip4(next_hop));
    }
    return WISP_ERR_VAL; /* IPv6 (neighbour discovery) is not built */
}

static void eth_link_up(struct wisp_netif *nif)
{
    if (nif->ip4.addr != WISP_IP4_ANY) {
        (void)wisp_arp_announce(nif); /* RFC 5227 §3: announce on link up */
    }
}

static void eth_link_down(struct wisp_netif *nif)
{
    wisp_arp_flush(nif->stack, nif->index);
}

const struct wisp_link_ops wisp_link_eth = {
    "eth", WISP_NETIF_F_ETHARP | WISP_NETIF_F_BROADCAST, WISP_ETH_HLEN,
    wisp_eth_input, eth_link_output, eth_link_up, eth_link_down,
};

wisp_err_t wisp_eth_output(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t dst[6], uint16_t ethertype)
{
    struct wisp_stack *s = nif->stack;
    struct wisp_pbuf *frame;
    struct wisp_pbuf *h = NULL;
    uint16_t ref_before = p->ref;
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(nif->stack);

    if (p->tot_len > (uint16_t)(0xffffu - WISP_ETH_HLEN))
        return WISP_ERR_VAL;
    if (wisp_pbuf_push(p, WISP_ETH_HLEN) == WISP_OK) {
        frame = p;
    } else {
        /* No headroom, or REF/ROM memory we must not write: a header buffer
         * in front of the caller's chain (which gains a reference). */
        h = wisp_pbuf_alloc(s, WISP_LAYER_RAW, WISP_ETH_HLEN, WISP_PBUF_RAM);
        if (h == NULL)
            return WISP_ERR_MEM;
        wisp_pbuf_chain(h, p);
        h->prio = p->prio;
        h->if_idx = p->if_idx;
        h->flags = p->flags;
        frame = h;
    }
    /* The first buffer holds the 14 header bytes in both cases. */
    memcpy(frame->payload + WISP_ETH_OFF_DST, dst, WISP_ETH_ADDR_LEN);
    memcpy(frame->payload + WISP_ETH_OFF_SRC, nif->hwaddr, WISP_ETH_ADDR_LEN);
    wisp_wr16(frame->payload + WISP_ETH_OFF_TYPE, ethertype);

    err = wisp_netif_tx(nif, frame);
    if (err == WISP_OK)
        WISP_CTR_INC(s, ETH_TX);

    if (h != NULL) {
        wisp_pbuf_free(h);
    } else if (p->ref == ref_before) {
        /* Nobody kept the frame: give the caller its packet back unchanged.
         * (When a queue or the device holds a reference to p, the header
         * must stay visible for that holder; the caller must then treat p as
         * shared and not rewrite it, as for any queued packet.) */
        (void)wisp_pbuf_pop(p, WISP_ETH_HLEN);
    }
    return err;
}
