/**
 * @file prot/ip4.h
 * Wire-format tier: the IPv4 header (RFC 791 §3.1). Layout constants and
 * pure accessors only; every module and test reads the layout from here
 * (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_IP4_H
#define WISP_PROT_IP4_H

#include "wisp/arch.h"

/* RFC 791 §3.1 "Internet Header Format". */
#define WISP_IP4_HLEN 20u          /**< header without options (IHL 5) */
#define WISP_IP4_MAX_HLEN 60u      /**< IHL 15 */
#define WISP_IP4_MAX_LEN 65535u    /**< Total Length is a 16-bit field */
#define WISP_IP4_OFF_VHL 0u        /**< version (high nibble), IHL in 32-bit words (low nibble) */
#define WISP_IP4_OFF_TOS 1u
#define WISP_IP4_OFF_LEN 2u
#define WISP_IP4_OFF_ID 4u
#define WISP_IP4_OFF_FRAG 6u       /**< flags (3 bits) and fragment offset (13 bits, 8-byte units) */
#define WISP_IP4_OFF_TTL 8u
#define WISP_IP4_OFF_PROTO 9u
#define WISP_IP4_OFF_CSUM 10u
#define WISP_IP4_OFF_SRC 12u
#define WISP_IP4_OFF_DST 16u
#define WISP_IP4_VERSION 4u

/* RFC 791 §3.1 Flags / Fragment Offset (the 16-bit field at OFF_FRAG). */
#define WISP_IP4_FLAG_DF 0x4000u
#define WISP_IP4_FLAG_MF 0x2000u
#define WISP_IP4_OFFMASK 0x1fffu

/* Protocol numbers (RFC 790 "Assigned Internet Protocol Numbers"). */
#define WISP_IP4_PROTO_ICMP 1u
#define WISP_IP4_PROTO_TCP 6u
#define WISP_IP4_PROTO_UDP 17u

/* RFC 791 §3.1 "Options": option types (copied flag, class, number). */
#define WISP_IP4_OPT_EOL 0u        /**< End of Option List (single octet) */
#define WISP_IP4_OPT_NOP 1u        /**< No Operation (single octet) */
#define WISP_IP4_OPT_RR 7u         /**< Record Route */
#define WISP_IP4_OPT_TS 68u        /**< Internet Timestamp */
#define WISP_IP4_OPT_LSRR 131u     /**< Loose Source and Record Route */
#define WISP_IP4_OPT_SID 136u      /**< Stream Identifier */
#define WISP_IP4_OPT_SSRR 137u     /**< Strict Source and Record Route */

/** Version field of header h (RFC 791 §3.1). */
static inline unsigned wisp_ip4_hdr_version(const uint8_t *h) { return (unsigned)(h[WISP_IP4_OFF_VHL] >> 4); }
/** Header length in bytes of header h: IHL counts 32-bit words (RFC 791 §3.1). */
static inline uint16_t wisp_ip4_hdr_hlen(const uint8_t *h) { return (uint16_t)((h[WISP_IP4_OFF_VHL] & 0x0fu) * 4u); }

#endif /* WISP_PROT_IP4_H */
