/**
 * @file prot/dhcp.h
 * Wire-format tier: the DHCP message (RFC 2131 §2 Figure 1, the BOOTP
 * layout of RFC 951) and its options (RFC 2132). Layout constants only;
 * every module and test reads the layout from here (include/wisp/prot/,
 * one header per protocol).
 */
#ifndef WISP_PROT_DHCP_H
#define WISP_PROT_DHCP_H

/* RFC 2131 §2 Figure 1: fixed fields, then the options. */
#define WISP_DHCP_OFF_OP 0u
#define WISP_DHCP_OFF_HTYPE 1u
#define WISP_DHCP_OFF_HLEN 2u
#define WISP_DHCP_OFF_HOPS 3u
#define WISP_DHCP_OFF_XID 4u
#define WISP_DHCP_OFF_SECS 8u
#define WISP_DHCP_OFF_FLAGS 10u
#define WISP_DHCP_OFF_CIADDR 12u
#define WISP_DHCP_OFF_YIADDR 16u
#define WISP_DHCP_OFF_SIADDR 20u
#define WISP_DHCP_OFF_GIADDR 24u
#define WISP_DHCP_OFF_CHADDR 28u     /**< 16 bytes */
#define WISP_DHCP_OFF_SNAME 44u
#define WISP_DHCP_OFF_FILE 108u
#define WISP_DHCP_OFF_COOKIE 236u    /**< RFC 2131 §3: the options field starts with the magic cookie */
#define WISP_DHCP_OFF_OPTIONS 240u
#define WISP_DHCP_CHADDR_LEN 16u
#define WISP_DHCP_SNAME_LEN 64u
#define WISP_DHCP_FILE_LEN 128u
/** RFC 1542 §2.1: the minimal BOOTP message (fixed part and 64 option
 *  bytes); shorter messages are padded. */
#define WISP_DHCP_MIN_LEN 300u

/* RFC 951 op codes, the hardware type Ethernet (RFC 1700 "ARP hardware
 * types"), RFC 2131 §2 Figure 2 flags. */
#define WISP_DHCP_BOOTREQUEST 1u
#define WISP_DHCP_BOOTREPLY 2u
#define WISP_DHCP_HTYPE_ETH 1u
#define WISP_DHCP_FLAG_BROADCAST 0x8000u

/** RFC 2131 §3, RFC 2132 §2: the magic cookie 99.130.83.99. */
#define WISP_DHCP_MAGIC_COOKIE 0x63825363u

/* RFC 2132 option codes (section in parentheses). */
#define WISP_DHCP_OPT_PAD 0u         /* §3.1 */
#define WISP_DHCP_OPT_MASK 1u        /* §3.3 */
#define WISP_DHCP_OPT_ROUTER 3u      /* §3.5 */
#define WISP_DHCP_OPT_DNS 6u         /* §3.8 */
#define WISP_DHCP_OPT_HOSTNAME 12u   /* §3.14 */
#define WISP_DHCP_OPT_MTU 26u        /* §5.1 */
#define WISP_DHCP_OPT_REQ_IP 50u     /* §9.1 */
#define WISP_DHCP_OPT_LEASE 51u      /* §9.2 */
#define WISP_DHCP_OPT_OVERLOAD 52u   /* §9.3 */
#define WISP_DHCP_OPT_MSGTYPE 53u    /* §9.6 */
#define WISP_DHCP_OPT_SERVER_ID 54u  /* §9.7 */
#define WISP_DHCP_OPT_PRL 55u        /* §9.8 */
#define WISP_DHCP_OPT_MAX_SIZE 57u   /* §9.10 */
#define WISP_DHCP_OPT_T1 58u         /* §9.11 */
#define WISP_DHCP_OPT_T2 59u         /* §9.12 */
#define WISP_DHCP_OPT_END 255u       /* §3.2 */

/* RFC 2132 §9.6 DHCP message types (option 53). */
#define WISP_DHCP_MSG_DISCOVER 1u
#define WISP_DHCP_MSG_OFFER 2u
#define WISP_DHCP_MSG_REQUEST 3u
#define WISP_DHCP_MSG_DECLINE 4u
#define WISP_DHCP_MSG_ACK 5u
#define WISP_DHCP_MSG_NAK 6u
#define WISP_DHCP_MSG_RELEASE 7u

#endif /* WISP_PROT_DHCP_H */
