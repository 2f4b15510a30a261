/**
 * @file ip.h
 * What the IP layer of any address family hands to the transport layer:
 * a received datagram's header, parsed once (no per-packet globals).
 * IPv4 fills it today (ip4.c); an IPv6 layer fills the same structure,
 * so UDP, TCP and ICMP error handling take datagrams of either family.
 * Who may call: the core context only.
 */
#ifndef WISP_IP_H
#define WISP_IP_H

#include "wisp/addr.h"

struct wisp_netif;

/** A received datagram's header, in host-order fields. */
struct wisp_ip_info {
    struct wisp_netif *nif;   /**< interface it arrived on */
    wisp_ipaddr_t src, dst;   /**< source and destination (family-tagged) */
    uint16_t hlen;            /**< IP header length in bytes (IPv4: 20..60) */
    uint16_t tot_len;         /**< total length from the header */
    uint8_t proto;            /**< transport protocol (IPv4 protocol field) */
    uint8_t tos;              /**< IPv4 TOS (DSCP << 2 | ECN) */
    uint8_t ttl;              /**< IPv4 TTL */
    uint8_t bcast;            /**< dst was a broadcast (limited or directed) */
    uint8_t mcast;            /**< dst was multicast */
};

#endif /* WISP_IP_H */
