/**
 * @file prot/tcp.h
 * Wire-format tier: the TCP header and its options (RFC 9293 §3.1, §3.2;
 * RFC 7323; RFC 2018). Layout constants only; every module and test reads
 * the layout from here (include/wisp/prot/, one header per protocol).
 */
#ifndef WISP_PROT_TCP_H
#define WISP_PROT_TCP_H

/* RFC 9293 §3.1 "Header Format". */
#define WISP_TCP_HLEN 20u          /**< header without options (data offset 5) */
#define WISP_TCP_MAX_HLEN 60u      /**< data offset 15 */
#define WISP_TCP_MAX_OPTLEN 40u
#define WISP_TCP_OFF_SPORT 0u
#define WISP_TCP_OFF_DPORT 2u
#define WISP_TCP_OFF_SEQ 4u
#define WISP_TCP_OFF_ACK 8u
#define WISP_TCP_OFF_HLEN 12u      /**< data offset in 32-bit words (high nibble) */
#define WISP_TCP_OFF_FLAGS 13u
#define WISP_TCP_OFF_WND 14u
#define WISP_TCP_OFF_CSUM 16u
#define WISP_TCP_OFF_URP 18u

/* RFC 9293 §3.1 control bits (the octet at OFF_FLAGS); CWR and ECE are
 * RFC 3168 §6.1. */
#define WISP_TCP_FLAG_FIN 0x01u
#define WISP_TCP_FLAG_SYN 0x02u
#define WISP_TCP_FLAG_RST 0x04u
#define WISP_TCP_FLAG_PSH 0x08u
#define WISP_TCP_FLAG_ACK 0x10u
#define WISP_TCP_FLAG_URG 0x20u
#define WISP_TCP_FLAG_ECE 0x40u
#define WISP_TCP_FLAG_CWR 0x80u

/* Option kinds and their lengths (kind and length octets included):
 * RFC 9293 §3.2 (EOL, NOP, MSS), RFC 7323 §2.2 (window scale), §3.2
 * (timestamps), RFC 2018 §2, §3 (SACK-permitted, SACK: 2 + 8 per block). */
#define WISP_TCP_OPT_EOL 0u
#define WISP_TCP_OPT_NOP 1u
#define WISP_TCP_OPT_MSS 2u
#define WISP_TCP_OPT_WS 3u
#define WISP_TCP_OPT_SACK_PERM 4u
#define WISP_TCP_OPT_SACK 5u
#define WISP_TCP_OPT_TS 8u
#define WISP_TCP_OPTLEN_MSS 4u
#define WISP_TCP_OPTLEN_WS 3u
#define WISP_TCP_OPTLEN_SACK_PERM 2u
#define WISP_TCP_OPTLEN_TS 10u
#define WISP_TCP_SACK_BLOCK_LEN 8u
/** Kind and length octets of an option with a length (RFC 9293 §3.2): the
 *  smallest valid length, and the offset of the option's data. */
#define WISP_TCP_OPT_HDRLEN 2u
/** Timestamps in the aligned layout of RFC 7323 Appendix A: NOP NOP TS. */
#define WISP_TCP_TS_OPTLEN 12u

#endif /* WISP_PROT_TCP_H */
