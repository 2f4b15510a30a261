/**
 * @file priv/udp.h
 * Private tier: the layout of the structures of wisp/udp.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/udp.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_UDP_H
#define WISP_PRIV_UDP_H

#include "wisp/udp.h"

struct wisp_udp_pcb {
    struct wisp_udp_pcb *WISP_PRIV(next);
    struct wisp_stack *WISP_PRIV(stack);
    wisp_ipaddr_t WISP_PRIV(local_ip);       /**< any = all local addresses */
    wisp_ipaddr_t WISP_PRIV(remote_ip);
    uint16_t WISP_PRIV(local_port), WISP_PRIV(remote_port);
    uint8_t WISP_PRIV(flags);
    uint8_t WISP_PRIV(tos), WISP_PRIV(ttl);             /**< ttl 0 = default */
    uint8_t WISP_PRIV(bound_if);             /**< 0 = any interface */
    wisp_udp_recv_fn WISP_PRIV(recv);
    void *WISP_PRIV(recv_arg);
    wisp_udp_err_fn WISP_PRIV(errf);         /**< ICMP errors (connected PCBs only), NULL = none */
    void *WISP_PRIV(err_arg);
};

/* ---- library-internal functions (WISP_PRIVATE_ACCESS only) ---- */
#ifdef WISP_PRIVATE_ACCESS
/** Internal (icmp.c): a validated ICMP error about a UDP datagram. */
void wisp_udp_icmp_err(struct wisp_stack *s, const struct wisp_icmp_err *e);
#endif /* WISP_PRIVATE_ACCESS */

#endif /* WISP_PRIV_UDP_H */
