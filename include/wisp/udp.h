/**
 * @file udp.h
 * UDP (RFC 768, RFC 1122 §4.1) with a raw callback API.
 * Receive is zero-copy: the callback gets the received pbuf (UDP header
 * hidden) and owns it. Checksums are always generated on send; a received
 * checksum of 0 means "none" and is accepted (RFC 768).
 * Who may call: the core context only (threaded APIs wrap these).
 */
#ifndef WISP_UDP_H
#define WISP_UDP_H

#include "wisp/ip4.h"

#include "wisp/prot/udp.h" /* the header layout: WISP_UDP_HLEN ... */

struct wisp_udp_pcb;

/** Receive callback: p is owned by the callee. src/port identify the peer;
 *  ip describes the datagram (destination, TOS, TTL, interface). */
typedef void (*wisp_udp_recv_fn)(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p,
                                 const wisp_ipaddr_t *src, uint16_t port, const struct wisp_ip_info *ip);

/** ICMP error callback (RFC 1122 §4.1.3.3): an ICMP error about a
 *  datagram this connected PCB sent to its peer. err: WISP_ERR_REFUSED
 *  (port or protocol unreachable: a hard error), WISP_ERR_NETUNREACH,
 *  WISP_ERR_HOSTUNREACH (soft errors: other unreachable codes, time
 *  exceeded, parameter problem). e has the details. */
struct wisp_icmp_err;
typedef void (*wisp_udp_err_fn)(void *arg, struct wisp_udp_pcb *pcb, wisp_err_t err, const struct wisp_icmp_err *e);

#define WISP_UDP_F_CONNECTED 0x01u
#define WISP_UDP_F_BCAST 0x02u    /**< allow sending to broadcast (SO_BROADCAST) */

struct wisp_udp_pcb;

/** A new PCB (from the UDP pool), or NULL when the pool is empty. */
struct wisp_udp_pcb *wisp_udp_new(struct wisp_stack *s);
/** Unbind and return the PCB to its pool. */
void wisp_udp_remove(struct wisp_udp_pcb *pcb);
/** Bind to ip (NULL/any = all) and port (0 = a random ephemeral port,
 *  RFC 6056). WISP_ERR_USE when the pair is taken. */
wisp_err_t wisp_udp_bind(struct wisp_udp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port);
/** Set the default peer (binds an ephemeral port first if needed); only
 *  datagrams from that peer are delivered afterwards. */
wisp_err_t wisp_udp_connect(struct wisp_udp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port);
void wisp_udp_disconnect(struct wisp_udp_pcb *pcb);
/** Set the receive callback. */
void wisp_udp_recv(struct wisp_udp_pcb *pcb, wisp_udp_recv_fn fn, void *arg);
/** Send p to the connected peer / to ip:port. Does not consume p. p should
 *  have WISP_LAYER_TRANSPORT headroom (else a header pbuf is chained in
 *  front). Datagrams larger than the MTU are fragmented by IP. */
wisp_err_t wisp_udp_send(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p);
wisp_err_t wisp_udp_sendto(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *ip, uint16_t port);
/** As wisp_udp_sendto, from source address src: one of the stack's own
 *  addresses, typically the destination of the datagram being answered
 *  (ip->dst of the receive callback). A src that is not unicast (NULL,
 *  any, a broadcast or multicast address) selects the source as
 *  wisp_udp_sendto does: the bound address, else the interface's. */
wisp_err_t wisp_udp_sendto_from(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                                const wisp_ipaddr_t *ip, uint16_t port);
/** TOS byte (DSCP << 2 | ECN) of the datagrams sent from pcb (default 0;
 *  the DSCP also picks the transmit queue, wisp_dscp_prio). */
void wisp_udp_set_tos(struct wisp_udp_pcb *pcb, uint8_t tos);
uint8_t wisp_udp_get_tos(const struct wisp_udp_pcb *pcb);
/** The stack the PCB belongs to. */
struct wisp_stack *wisp_udp_stack(const struct wisp_udp_pcb *pcb);
/** The bound local address (any = all) and port (0 = not bound); either
 *  pointer may be NULL. */
void wisp_udp_local(const struct wisp_udp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port);

/** Set the ICMP error callback (NULL to remove). Errors are reported to
 *  connected PCBs only (as BSD sockets without IP_RECVERR). */
void wisp_udp_err(struct wisp_udp_pcb *pcb, wisp_udp_err_fn fn, void *arg);

/** Input of a datagram (IP header hidden; consumes p). Sends a port
 *  unreachable when no PCB matches a unicast datagram. */
void wisp_udp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip);

/* the layout of the structures above (private tier) */
#include "wisp/priv/udp.h"

#endif /* WISP_UDP_H */
