/**
 * @file priv/netif.h
 * Private tier: the layout of the structures of wisp/netif.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/netif.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_NETIF_H
#define WISP_PRIV_NETIF_H

#include "wisp/netif.h"

/** A bounded ring of frames waiting for the device. */
struct wisp_txq {
    struct wisp_pbuf **WISP_PRIV(slot);
    uint8_t WISP_PRIV(cap), WISP_PRIV(head), WISP_PRIV(count);
};

/** An observer of an interface becoming usable (admin up and link up) or
 *  unusable, e.g. DHCP restarting on link up (RFC 2131 §3.2). Intrusive:
 *  the owner keeps it alive while registered. fn runs after the stack's
 *  own link handling; it must not add or remove watches. */
struct wisp_netif_watch {
    struct wisp_netif_watch *WISP_PRIV(next);
    void (*fn)(void *arg, struct wisp_netif *nif, bool usable);
    void *arg;
};

/** IPv4 configuration of an interface (network order; 0 = none). IPv6
 *  adds its own member (struct wisp_netif_ip6) beside it. */
struct wisp_netif_ip4 {
    wisp_ip4_t WISP_PRIV(addr);             /**< address (0 = none) */
    wisp_ip4_t WISP_PRIV(mask);             /**< netmask */
    wisp_ip4_t WISP_PRIV(gw);               /**< default gateway on this link (0 = none) */
};

/** An interface: the link part (device, link layer, hardware address,
 *  MTU, transmit queues) and one address configuration per family. */
struct wisp_netif {
    struct wisp_netif *WISP_PRIV(next);
    struct wisp_stack *WISP_PRIV(stack);
    struct wisp_dev *WISP_PRIV(dev);        /**< top of the device chain */
    const struct wisp_link_ops *WISP_PRIV(link);  /**< link layer (NULL: the loopback interface) */
    char WISP_PRIV(name)[8];
    uint8_t WISP_PRIV(index);               /**< 1..WISP_MAX_NETIFS */
    uint8_t WISP_PRIV(flags);               /**< WISP_NETIF_F_* */
    uint8_t WISP_PRIV(hwaddr_len);
    uint8_t WISP_PRIV(hwaddr)[6];
    uint16_t WISP_PRIV(mtu);                /**< IP MTU (bytes above the link header) */
    struct wisp_netif_ip4 WISP_PRIV(ip4);   /**< IPv4 configuration (wisp_netif_set_ip4) */
    uint8_t WISP_PRIV(tx_busy);             /**< device said WOULDBLOCK, waiting for tx_ready */
    uint8_t WISP_PRIV(tx_draining);         /**< re-entrancy guard for the drain loop */
    struct wisp_txq WISP_PRIV(txq_emerg), WISP_PRIV(txq_common);
    struct wisp_pbuf *WISP_PRIV(txq_emerg_slot)[WISP_TXQ_EMERG_LEN];
    struct wisp_pbuf *WISP_PRIV(txq_common_slot)[WISP_TXQ_COMMON_LEN];
    struct wisp_netif_stats WISP_PRIV(st);
    void *WISP_PRIV(user);                  /**< application data */
    struct wisp_netif_watch *WISP_PRIV(watch);  /**< usable/unusable observers (wisp_netif_watch_add) */
};

#endif /* WISP_PRIV_NETIF_H */
