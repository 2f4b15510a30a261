/**
 * @file priv/arp.h
 * Private tier: the layout of the structures of wisp/arp.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/arp.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_ARP_H
#define WISP_PRIV_ARP_H

#include "wisp/arp.h"

struct wisp_arp_entry {
    wisp_ip4_t WISP_PRIV(ip);
    uint8_t WISP_PRIV(mac)[6];
    uint8_t WISP_PRIV(state);            /**< enum wisp_arp_state */
    uint8_t WISP_PRIV(if_idx);
    uint8_t WISP_PRIV(tries);            /**< requests sent while pending */
    uint8_t WISP_PRIV(qlen);
    uint32_t WISP_PRIV(stamp);           /**< time of last update (stable) or last request (pending) */
    struct wisp_pbuf *WISP_PRIV(q)[WISP_ARP_QUEUE_LEN];  /**< packets waiting (IP packets, no link header) */
};

struct wisp_arp {
    struct wisp_arp_entry WISP_PRIV(e)[WISP_ARP_TABLE_SIZE];
    struct wisp_timer WISP_PRIV(tmr);    /**< next ageing/retry deadline */
    uint32_t WISP_PRIV(defend_at);       /**< time of the last address defence (RFC 5227 §2.4) */
    uint8_t WISP_PRIV(defended);         /**< defend_at is valid */
    struct wisp_arp_watch *WISP_PRIV(watch);  /**< registered observers (wisp_arp_watch_add) */
};

#endif /* WISP_PRIV_ARP_H */
