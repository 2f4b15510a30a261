/**
 * @file priv/dns.h
 * Private tier: the layout of the structures of wisp/dns.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/dns.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_DNS_H
#define WISP_PRIV_DNS_H

#include "wisp/dns.h"

#if WISP_DNS
/** An outstanding query (internal; public for sizing). The timer is the
 *  first member (the timer callback finds the query from it). */
struct wisp_dns_query {
    struct wisp_timer WISP_PRIV(timer);
    struct wisp_udp_pcb *WISP_PRIV(pcb);  /**< bound to a random port; NULL when idle */
    wisp_ipaddr_t WISP_PRIV(asked);       /**< server of the current transmission (any = none) */
    uint16_t WISP_PRIV(id);               /**< ID of the current transmission */
    uint8_t WISP_PRIV(state);             /**< 0 free, 1 resolving, 2 completing */
    uint8_t WISP_PRIV(srv);               /**< server index of the current transmission */
    uint8_t WISP_PRIV(tx);                /**< transmissions so far */
    uint8_t WISP_PRIV(fail);              /**< worst failure seen (see dns.c) */
    char WISP_PRIV(name)[WISP_DNS_NAME_MAX + 1];
};
#endif

#if WISP_DNS
/** A request waiting for a query (internal). */
struct wisp_dns_waiter {
    wisp_dns_found_fn WISP_PRIV(fn);
    void *WISP_PRIV(arg);
    uint8_t WISP_PRIV(query);             /**< query index + 1; 0 = free */
    uint8_t WISP_PRIV(state);             /**< 1 waiting, 2 being completed */
};
#endif

#if WISP_DNS
/** A cached answer (internal). */
struct wisp_dns_cache_entry {
    uint32_t WISP_PRIV(expires);          /**< stack clock, ms */
    uint32_t WISP_PRIV(used);             /**< stack clock of the last use (LRU) */
    wisp_ip4_t WISP_PRIV(addr);
    uint8_t WISP_PRIV(valid);
    char WISP_PRIV(name)[WISP_DNS_NAME_MAX + 1]; /**< lower case */
};
#endif

#if WISP_DNS
/** The resolver state of one stack (struct wisp_stack.dns). */
struct wisp_dns {
    wisp_ipaddr_t WISP_PRIV(server)[WISP_DNS_MAX_SERVERS]; /**< any = unset */
    struct wisp_dns_query WISP_PRIV(q)[WISP_DNS_MAX_QUERIES];
    struct wisp_dns_waiter WISP_PRIV(w)[WISP_DNS_MAX_WAITERS];
#if WISP_DNS_CACHE_SIZE > 0
    struct wisp_dns_cache_entry WISP_PRIV(cache)[WISP_DNS_CACHE_SIZE];
#endif
};
#endif

#endif /* WISP_PRIV_DNS_H */
