/**
 * @file prot/dns.h
 * Wire-format tier: the DNS message (RFC 1035 §4.1). Layout constants
 * only; every module and test reads the layout from here
 * (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_DNS_H
#define WISP_PROT_DNS_H

/* RFC 1035 §4.1.1 header: ID, flags, QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT. */
#define WISP_DNS_HLEN 12u
#define WISP_DNS_OFF_ID 0u
#define WISP_DNS_OFF_FLAGS 2u
#define WISP_DNS_OFF_QDCOUNT 4u
#define WISP_DNS_OFF_ANCOUNT 6u
#define WISP_DNS_OFF_NSCOUNT 8u
#define WISP_DNS_OFF_ARCOUNT 10u

/* RFC 1035 §4.1.1 flags (the 16-bit field at OFF_FLAGS). */
#define WISP_DNS_F_QR 0x8000u
#define WISP_DNS_F_OPCODE 0x7800u
#define WISP_DNS_F_AA 0x0400u
#define WISP_DNS_F_TC 0x0200u
#define WISP_DNS_F_RD 0x0100u
#define WISP_DNS_F_RA 0x0080u
#define WISP_DNS_F_RCODE 0x000Fu

/* RFC 1035 §4.1.1 RCODE values. */
#define WISP_DNS_RCODE_NOERROR 0u
#define WISP_DNS_RCODE_FORMERR 1u
#define WISP_DNS_RCODE_SERVFAIL 2u
#define WISP_DNS_RCODE_NXDOMAIN 3u
#define WISP_DNS_RCODE_NOTIMP 4u
#define WISP_DNS_RCODE_REFUSED 5u

/* RFC 1035 §4.1.3: after its name, a resource record has TYPE, CLASS, TTL,
 * RDLENGTH (10 bytes), then RDATA; §4.1.2: a question has QTYPE, QCLASS. */
#define WISP_DNS_RR_FIXED 10u
#define WISP_DNS_Q_FIXED 4u
/** RFC 1035 §4.1.4: a label octet with both top bits set starts a 2-byte
 *  compression pointer (14-bit offset); 01 and 10 are reserved. */
#define WISP_DNS_LABEL_PTR 0xC0u

/* RFC 1035 §3.2.2 types, §3.2.4 classes. */
#define WISP_DNS_TYPE_A 1u
#define WISP_DNS_TYPE_CNAME 5u
#define WISP_DNS_CLASS_IN 1u

/* RFC 1035 §2.3.4 size limits. */
#define WISP_DNS_LABEL_MAX 63u       /**< a label: 63 octets or less */
#define WISP_DNS_NAME_WIRE_MAX 255u  /**< a name: 255 octets or less */
#define WISP_DNS_UDP_MAX 512u        /**< a UDP message: 512 octets or less (also §4.2.1) */

#endif /* WISP_PROT_DNS_H */
