/**
 * @file prot/udp.h
 * Wire-format tier: the UDP header (RFC 768 "Format"). Layout constants
 * only; every module and test reads the layout from here
 * (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_UDP_H
#define WISP_PROT_UDP_H

/* RFC 768 "Format": source port, destination port, length, checksum. */
#define WISP_UDP_HLEN 8u
#define WISP_UDP_OFF_SPORT 0u
#define WISP_UDP_OFF_DPORT 2u
#define WISP_UDP_OFF_LEN 4u
#define WISP_UDP_OFF_CSUM 6u

#endif /* WISP_PROT_UDP_H */
