/**
 * @file ethernet.h
 * Ethernet II framing (IEEE 802.3 / RFC 894). The wire layout constants
 * live in wisp/prot/ethernet.h (included); ARP is in arp.h.
 * Who may call: the core context only.
 */
#ifndef WISP_ETHERNET_H
#define WISP_ETHERNET_H

#include "wisp/netif.h"
#include "wisp/prot/ethernet.h" /* WISP_ETH_HLEN, WISP_ETH_ADDR_LEN, WISP_ETHTYPE_* ... */

extern const uint8_t wisp_eth_bcast[6];

/** Input of one received frame on an Ethernet netif (consumes frame).
 *  Validates length, destination (ours, broadcast, or multicast), drops a
 *  frame whose source is a broadcast/multicast address, dispatches by type. */
void wisp_eth_input(struct wisp_netif *nif, struct wisp_pbuf *frame);

/** Push an Ethernet II header onto p (needs WISP_HLEN_LINK headroom, else a
 *  header pbuf is chained in front) and hand the frame to wisp_netif_tx.
 *  Does not consume p. */
wisp_err_t wisp_eth_output(struct wisp_netif *nif, struct wisp_pbuf *p, const uint8_t dst[6], uint16_t ethertype);

#endif /* WISP_ETHERNET_H */
