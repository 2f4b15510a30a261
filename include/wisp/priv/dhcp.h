/**
 * @file priv/dhcp.h
 * Private tier: the layout of the structures of wisp/dhcp.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/dhcp.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_DHCP_H
#define WISP_PRIV_DHCP_H

#include "wisp/dhcp.h"

#if WISP_DHCP
/** One client. Fields are read-only for the application. */
struct wisp_dhcp {
    struct wisp_netif *WISP_PRIV(nif);
    struct wisp_udp_pcb *WISP_PRIV(pcb);
    struct wisp_dhcp_cfg WISP_PRIV(cfg);
    char WISP_PRIV(hostname)[WISP_DHCP_HOSTNAME_MAX + 1];
    wisp_dhcp_fn WISP_PRIV(cb);
    void *WISP_PRIV(cb_arg);
    struct wisp_timer WISP_PRIV(tmr);              /**< retransmission and state steps */
    struct wisp_timer WISP_PRIV(lease_tmr);        /**< T1, T2, expiry */
    struct wisp_arp_watch WISP_PRIV(arp_watch);    /**< conflict detection while CHECKING */
    struct wisp_netif_watch WISP_PRIV(nif_watch);  /**< restart on link up */
    struct wisp_dhcp_lease WISP_PRIV(lease);       /**< the lease in use (valid while have_lease) */
    struct wisp_dhcp_lease WISP_PRIV(pend);        /**< the offer / acknowledged lease being checked */
    uint64_t WISP_PRIV(clock);                     /**< 64-bit ms clock (extended from the stack clock) */
    uint64_t WISP_PRIV(lease_start);               /**< ms: when the acknowledged REQUEST was first sent (§4.4.1) */
    uint64_t WISP_PRIV(req_start);                 /**< ms: first REQUEST of the current exchange */
    uint64_t WISP_PRIV(t1_at), WISP_PRIV(t2_at), WISP_PRIV(expire_at);   /**< ms deadlines of the lease in use (UINT64_MAX = never) */
    uint32_t WISP_PRIV(clock_last);                /**< stack clock at the last extension */
    uint32_t WISP_PRIV(xid);                       /**< transaction id of the current exchange */
    uint32_t WISP_PRIV(exch_start);                /**< stack ms when the exchange began ('secs') */
    wisp_ip4_t WISP_PRIV(reboot_addr);             /**< address asked for in INIT-REBOOT */
    uint16_t WISP_PRIV(secs);                      /**< 'secs' of the last DISCOVER (reused by REQUEST, §4.4.1) */
    uint16_t WISP_PRIV(dev_mtu);                   /**< interface MTU before the lease changed it */
    uint8_t WISP_PRIV(state);                      /**< enum wisp_dhcp_state */
    uint8_t WISP_PRIV(tries);                      /**< transmissions in this state */
    uint8_t WISP_PRIV(probes);                     /**< ARP probes sent while CHECKING */
    uint8_t WISP_PRIV(conflict);                   /**< a conflict was seen while CHECKING */
    uint8_t WISP_PRIV(have_lease);                 /**< lease is configured on the interface */
};
#endif

#endif /* WISP_PRIV_DHCP_H */
