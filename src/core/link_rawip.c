/**
 * @file link_rawip.c
 * The raw-IP link (struct wisp_link_ops wisp_link_rawip): the device
 * carries bare IP datagrams, without any link header or link address, as
 * TUN devices, SLIP (RFC 1055) and PPP after its own framing (RFC 1661) do.
 * Received frames are dispatched by the IP version nibble (RFC 791 §3.1);
 * datagrams leave as they are, whatever the next hop (one peer per link).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/ip4.h"

static void rawip_input(struct wisp_netif *nif, struct wisp_pbuf *p)
{
    struct wisp_stack *s = nif->stack;
    uint8_t vhl;

    WISP_CTR_INC(s, RAWIP_RX);
    if (!wisp_netif_is_usable(nif)) {
        WISP_CTR_INC(s, RAWIP_DROP_LINKDOWN);
        wisp_pbuf_free(p);
        return;
    }
    /* No link-layer broadcast or multicast: IPv4 decides from the
     * destination address alone. */
    p->flags &= (uint8_t)~(WISP_PBUF_F_BCAST | WISP_PBUF_F_MCAST);
    p->if_idx = nif->index;
    if (wisp_pbuf_copy_out(p, &vhl, 1, 0) == 1 && wisp_ip4_hdr_version(&vhl) == WISP_IP4_VERSION) {
        wisp_ip4_input(nif, p); /* checks the rest of the header */
        return;
    }
    /* Empty frames, IPv6 (not built) and anything else. */
    WISP_CTR_INC(s, RAWIP_DROP_VERSION);
    wisp_pbuf_free(p);
}

static wisp_err_t rawip_output(struct wisp_netif *nif, struct wisp_pbuf *p, const wisp_ipaddr_t *next_hop)
{
    (void)next_hop; /* point to point: the peer gets every datagram */
    return wisp_netif_tx(nif, p);
}

const struct wisp_link_ops wisp_link_rawip = {
    "rawip", 0u, 0u, rawip_input, rawip_output, NULL, NULL,
};
