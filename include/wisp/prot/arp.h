/**
 * @file prot/arp.h
 * Wire-format tier: the ARP packet for IPv4 over Ethernet (RFC 826
 * "Packet format"). Layout constants only; every module and test reads the
 * layout from here (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_ARP_H
#define WISP_PROT_ARP_H

/* RFC 826 "Packet format", with 6-byte hardware and 4-byte protocol
 * addresses: hrd, pro, hln, pln, op, sha, spa, tha, tpa. */
#define WISP_ARP_LEN 28u
#define WISP_ARP_OFF_HTYPE 0u
#define WISP_ARP_OFF_PTYPE 2u
#define WISP_ARP_OFF_HLEN 4u
#define WISP_ARP_OFF_PLEN 5u
#define WISP_ARP_OFF_OP 6u
#define WISP_ARP_OFF_SHA 8u
#define WISP_ARP_OFF_SPA 14u
#define WISP_ARP_OFF_THA 18u
#define WISP_ARP_OFF_TPA 24u

/* RFC 826: hardware type Ethernet (ares_hrd$Ethernet), opcodes. */
#define WISP_ARP_HTYPE_ETH 1u
#define WISP_ARP_OP_REQUEST 1u
#define WISP_ARP_OP_REPLY 2u
/** RFC 826 ar$pln for IPv4 protocol addresses (WISP_ETHTYPE_IP4). */
#define WISP_ARP_PLEN_IP4 4u

#endif /* WISP_PROT_ARP_H */
