/**
 * @file services.h
 * Small standard network services on the raw (core-context) API, started
 * per stack: UDP echo (RFC 862, port 7) and UDP discard (RFC 863, port 9).
 *
 * The services are listed in a table of {name, protocol, port, start,
 * stop} (wisp_services_table) so that later protocols (TCP echo, discard,
 * chargen) only add rows and fields. All state lives in a struct
 * wisp_services owned by the caller: no allocation, no stdio, portable.
 *
 * Echo policy (where RFC 862 is silent):
 *  - the reply goes to the datagram's source address and port, from the
 *    address it was sent to, with the DSCP of the request (ECN bits
 *    cleared), reusing the received pbuf (no copy);
 *  - no reply, counted as dropped: datagrams received as broadcast or
 *    multicast (no amplification), from source port 0 (RFC 768: no reply
 *    expected), or from the port of another reflecting service (echo 7,
 *    discard 9, daytime 13, quote 17, chargen 19, time 37), which would
 *    start an endless echo loop between two servers.
 *
 * Who may call: the core context only.
 */
#ifndef WISP_SERVICES_H
#define WISP_SERVICES_H

#include "wisp/wisp.h"

#define WISP_PORT_ECHO 7u     /**< RFC 862 */
#define WISP_PORT_DISCARD 9u  /**< RFC 863 */

/** Counters of one service. */
struct wisp_service_stats {
    uint32_t datagrams;   /**< datagrams served (echoed / discarded) */
    uint32_t bytes;       /**< payload bytes served */
    uint32_t dropped;     /**< datagrams not served (policy, or send failed) */
    uint32_t send_err;    /**< echo replies the stack refused to send */
};

/** The services of one stack. Zero it (or let start do it) before use. */
struct wisp_services {
    struct wisp_stack *stack;
    struct wisp_udp_pcb *udp_echo;      /**< NULL while stopped */
    struct wisp_udp_pcb *udp_discard;
    struct wisp_service_stats udp_echo_st;
    struct wisp_service_stats udp_discard_st;
};

/** One row of the service table. */
struct wisp_service_desc {
    const char *name;       /**< "echo", "discard", ... */
    uint8_t proto;          /**< WISP_IP4_PROTO_UDP / _TCP */
    uint16_t port;          /**< well-known port */
    /** Open the service on svc->stack (svc->stack set by the caller). */
    wisp_err_t (*start)(struct wisp_services *svc);
    /** Close it (no-op when not running). */
    void (*stop)(struct wisp_services *svc);
};

/** The service table and its length (*n). */
const struct wisp_service_desc *wisp_services_table(unsigned *n);

/** Start every UDP service of the table on stack s. svc is zeroed first
 *  and stays owned by the caller, who must keep it alive until stop. On
 *  failure (no PCB, port in use) the services already started are stopped
 *  again and the error is returned. */
wisp_err_t wisp_services_udp_start(struct wisp_stack *s, struct wisp_services *svc);
/** Stop every UDP service: their PCBs are removed. Counters are kept. */
void wisp_services_udp_stop(struct wisp_services *svc);

#endif /* WISP_SERVICES_H */
