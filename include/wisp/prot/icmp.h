/**
 * @file prot/icmp.h
 * Wire-format tier: the ICMP for IPv4 message header (RFC 792). Layout
 * constants only; every module and test reads the layout from here
 * (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_ICMP_H
#define WISP_PROT_ICMP_H

/* RFC 792: type, code, checksum, then 4 bytes whose meaning depends on the
 * type (echo: identifier, sequence number; destination unreachable: unused,
 * with the next-hop MTU in its low 16 bits for "fragmentation needed",
 * RFC 1191 §4). */
#define WISP_ICMP_HLEN 8u
#define WISP_ICMP_OFF_TYPE 0u
#define WISP_ICMP_OFF_CODE 1u
#define WISP_ICMP_OFF_CSUM 2u
#define WISP_ICMP_OFF_ID 4u        /**< echo / echo reply */
#define WISP_ICMP_OFF_SEQ 6u       /**< echo / echo reply */
#define WISP_ICMP_OFF_MTU 6u       /**< destination unreachable code 4 (RFC 1191 §4) */
/** RFC 792: an error quotes "Internet Header + 64 bits of Original Data
 *  Datagram". */
#define WISP_ICMP_QUOTE_DATA 8u

/* RFC 792 message types. */
#define WISP_ICMP_ECHO_REPLY 0u
#define WISP_ICMP_DEST_UNREACH 3u
#define WISP_ICMP_SOURCE_QUENCH 4u
#define WISP_ICMP_REDIRECT 5u
#define WISP_ICMP_ECHO 8u
#define WISP_ICMP_TIME_EXCEEDED 11u
#define WISP_ICMP_PARAM_PROBLEM 12u

/* RFC 792 destination unreachable codes. */
#define WISP_ICMP_UNREACH_NET 0u
#define WISP_ICMP_UNREACH_HOST 1u
#define WISP_ICMP_UNREACH_PROTO 2u
#define WISP_ICMP_UNREACH_PORT 3u
#define WISP_ICMP_UNREACH_NEEDFRAG 4u
#define WISP_ICMP_UNREACH_SRCFAIL 5u

#endif /* WISP_PROT_ICMP_H */
