/**
 * @file prot/ethernet.h
 * Wire-format tier: the Ethernet II frame header (RFC 894, IEEE 802.3
 * §3.1.1). Layout constants only (no state, no functions beyond pure
 * accessors); every module and test reads the layout from here
 * (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_ETHERNET_H
#define WISP_PROT_ETHERNET_H

/* RFC 894 "Frame Format": destination, source, type; then the data. */
#define WISP_ETH_HLEN 14u
#define WISP_ETH_ADDR_LEN 6u
#define WISP_ETH_OFF_DST 0u
#define WISP_ETH_OFF_SRC 6u
#define WISP_ETH_OFF_TYPE 12u
/** IEEE 802.3 §3.2.3: the Individual/Group bit, the lowest bit of the
 *  first address octet, is set in group (multicast, broadcast) addresses. */
#define WISP_ETH_ADDR_GROUP 0x01u
/** RFC 1112 §6.4: IPv4 multicast maps to 01-00-5E plus the low 23 bits of
 *  the group address. */
#define WISP_ETH_IP4_MCAST_0 0x01u
#define WISP_ETH_IP4_MCAST_1 0x00u
#define WISP_ETH_IP4_MCAST_2 0x5eu
/** Shortest frame without the FCS; shorter frames are padded (RFC 894). */
#define WISP_ETH_MIN_FRAME 60u

/* EtherTypes: IPv4 (RFC 894), ARP (RFC 826), IPv6 (RFC 2464 §3). */
#define WISP_ETHTYPE_IP4 0x0800u
#define WISP_ETHTYPE_ARP 0x0806u
#define WISP_ETHTYPE_IP6 0x86ddu

#endif /* WISP_PROT_ETHERNET_H */
