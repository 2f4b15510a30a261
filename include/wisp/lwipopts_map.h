/**
 * @file lwipopts_map.h
 * An lwIP project's lwipopts.h as wisp options. Use it from your wisp
 * options header (the file WISP_OPTS_HEADER names, which builds the stack
 * and your application alike):
 *
 *     #include "lwipopts.h"          // your lwIP options, unchanged
 *     #include "wisp/lwipopts_map.h" // their wisp equivalents
 *     // your own WISP_* settings, if any, before this include win
 *
 * Each lwIP option the project defines sets the wisp option that means the
 * same (unless that wisp option is set already). Options that ask for a
 * feature wisp does not have stop the build with an #error naming it.
 * Options that only size lwIP's heap or its internal pools and have no
 * counterpart (MEM_SIZE, MEMP_NUM_SYS_TIMEOUT, MEMP_NUM_REASSDATA, ...) are
 * ignored: wisp has no heap, every pool it has is listed here.
 * docs/lwip-migration.md has the table with the reasons.
 */
#ifndef WISP_LWIPOPTS_MAP_H
#define WISP_LWIPOPTS_MAP_H

/* ------------------------------------------- features wisp does not have */
#if defined(NO_SYS) && NO_SYS
#error "lwipopts: NO_SYS 1: wisp's lwIP layer runs with a tcpip thread; a main-loop system uses wisp's own raw API with ports/none (docs/lwip-migration.md)"
#endif
#if defined(LWIP_IPV6) && LWIP_IPV6
#error "lwipopts: LWIP_IPV6 1: wisp's lwIP layer is IPv4-only"
#endif
#if defined(IP_FORWARD) && IP_FORWARD
#error "lwipopts: IP_FORWARD 1: wisp does not forward IP datagrams (a host stack)"
#endif
#if defined(LWIP_RAW) && LWIP_RAW
#error "lwipopts: LWIP_RAW 1: wisp has no raw IP PCBs (raw_new, raw_recv, NETCONN_RAW)"
#endif
#if defined(LWIP_IGMP) && LWIP_IGMP
#error "lwipopts: LWIP_IGMP 1: wisp has no IGMP / multicast group membership"
#endif
#if defined(LWIP_AUTOIP) && LWIP_AUTOIP
#error "lwipopts: LWIP_AUTOIP 1: wisp has no link-local address autoconfiguration"
#endif
#if defined(PPP_SUPPORT) && PPP_SUPPORT
#error "lwipopts: PPP_SUPPORT 1: wisp has no PPP (wisp_link_rawip carries IP over a driver's own framing)"
#endif
#if defined(LWIP_ALTCP) && LWIP_ALTCP
#error "lwipopts: LWIP_ALTCP 1: wisp has no altcp layer (TLS goes above sockets or netconn)"
#endif
#if defined(LWIP_EVENT_API) && LWIP_EVENT_API
#error "lwipopts: LWIP_EVENT_API 1: wisp's raw API has callbacks only (LWIP_CALLBACK_API)"
#endif
#if defined(LWIP_SNMP) && LWIP_SNMP
#error "lwipopts: LWIP_SNMP 1: wisp has no SNMP agent"
#endif
#if defined(MEM_LIBC_MALLOC) && MEM_LIBC_MALLOC
#error "lwipopts: MEM_LIBC_MALLOC 1: wisp allocates from static pools only (no heap)"
#endif
#if defined(MEMP_MEM_MALLOC) && MEMP_MEM_MALLOC
#error "lwipopts: MEMP_MEM_MALLOC 1: wisp's pools are static arrays in the stack instance"
#endif

/* -------------------------------------------------------- one-to-one */
#if defined(TCP_MSS) && !defined(WISP_TCP_MSS)
#define WISP_TCP_MSS (TCP_MSS)
#endif
#if defined(TCP_WND) && !defined(WISP_TCP_WND)
#define WISP_TCP_WND (TCP_WND)
#endif
#if defined(TCP_SND_BUF) && !defined(WISP_TCP_SND_BUF)
#define WISP_TCP_SND_BUF (TCP_SND_BUF)
#endif
#if defined(LWIP_WND_SCALE) && !defined(WISP_TCP_WND_SCALE)
#define WISP_TCP_WND_SCALE (LWIP_WND_SCALE)
#endif
#if defined(TCP_MAXRTX) && !defined(WISP_TCP_MAXRTX)
#define WISP_TCP_MAXRTX (TCP_MAXRTX)
#endif
#if defined(TCP_SYNMAXRTX) && !defined(WISP_TCP_SYNMAXRTX)
#define WISP_TCP_SYNMAXRTX (TCP_SYNMAXRTX)
#endif
#if defined(TCP_MSL) && !defined(WISP_TCP_MSL_MS)
#define WISP_TCP_MSL_MS (TCP_MSL)                  /* both milliseconds */
#endif
#if defined(LWIP_TCP) && !defined(WISP_TCP)
#define WISP_TCP (LWIP_TCP)
#endif
#if defined(LWIP_UDP) && !defined(WISP_UDP)
#define WISP_UDP (LWIP_UDP)
#endif
#if defined(LWIP_DHCP) && !defined(WISP_DHCP)
#define WISP_DHCP (LWIP_DHCP)
#endif
#if defined(LWIP_DNS) && !defined(WISP_DNS)
#define WISP_DNS (LWIP_DNS)
#endif
#if defined(DNS_MAX_SERVERS) && !defined(WISP_DNS_MAX_SERVERS)
#define WISP_DNS_MAX_SERVERS (DNS_MAX_SERVERS)
#endif
#if defined(DNS_TABLE_SIZE) && !defined(WISP_DNS_CACHE_SIZE)
#define WISP_DNS_CACHE_SIZE (DNS_TABLE_SIZE)
#endif
#if defined(DNS_MAX_NAME_LENGTH) && !defined(WISP_DNS_NAME_MAX)
#define WISP_DNS_NAME_MAX (DNS_MAX_NAME_LENGTH)
#endif
#if defined(DNS_MAX_RETRIES) && !defined(WISP_DNS_MAX_RETRIES)
#define WISP_DNS_MAX_RETRIES (DNS_MAX_RETRIES)
#endif
#if defined(ARP_TABLE_SIZE) && !defined(WISP_ARP_TABLE_SIZE)
#define WISP_ARP_TABLE_SIZE (ARP_TABLE_SIZE)
#endif
#if defined(IP_REASSEMBLY) && !defined(WISP_IP_REASS)
#define WISP_IP_REASS (IP_REASSEMBLY)
#endif
#if defined(IP_FRAG) && !defined(WISP_IP_FRAG)
#define WISP_IP_FRAG (IP_FRAG)
#endif
#if defined(IP_REASS_MAX_PBUFS) && !defined(WISP_IP_REASS_MAX_PBUFS)
#define WISP_IP_REASS_MAX_PBUFS (IP_REASS_MAX_PBUFS)
#endif
#if defined(IP_DEFAULT_TTL) && !defined(WISP_IP_DEFAULT_TTL)
#define WISP_IP_DEFAULT_TTL (IP_DEFAULT_TTL)
#endif
#if defined(LWIP_TCPIP_CORE_LOCKING) && !defined(WISP_TCPIP_CORE_LOCKING)
#define WISP_TCPIP_CORE_LOCKING (LWIP_TCPIP_CORE_LOCKING)
#endif
#if defined(TCPIP_MBOX_SIZE) && !defined(WISP_TCPIP_MBOX_SIZE)
#define WISP_TCPIP_MBOX_SIZE (TCPIP_MBOX_SIZE)
#endif
#if defined(DEFAULT_TCP_RECVMBOX_SIZE) && !defined(WISP_NETCONN_RECVMBOX_SIZE)
#define WISP_NETCONN_RECVMBOX_SIZE (DEFAULT_TCP_RECVMBOX_SIZE)
#endif
#if defined(LWIP_SOCKET_OFFSET) && !defined(WISP_SOCKET_OFFSET)
#define WISP_SOCKET_OFFSET (LWIP_SOCKET_OFFSET)
#endif
#if defined(LWIP_NETIF_LOOPBACK) && !defined(WISP_LOOPBACK)
#define WISP_LOOPBACK (LWIP_NETIF_LOOPBACK)
#endif

/* ------------------------------------------------------------ pools */
#if defined(MEMP_NUM_TCP_PCB) && !defined(WISP_TCP_PCB_COUNT)
#define WISP_TCP_PCB_COUNT (MEMP_NUM_TCP_PCB)
#endif
#if defined(MEMP_NUM_TCP_PCB_LISTEN) && !defined(WISP_TCP_LISTEN_COUNT)
#define WISP_TCP_LISTEN_COUNT (MEMP_NUM_TCP_PCB_LISTEN)
#endif
#if defined(MEMP_NUM_TCP_SEG) && !defined(WISP_TCP_SEG_COUNT)
#define WISP_TCP_SEG_COUNT (MEMP_NUM_TCP_SEG)
#endif
#if defined(MEMP_NUM_UDP_PCB) && !defined(WISP_UDP_PCB_COUNT)
#define WISP_UDP_PCB_COUNT (MEMP_NUM_UDP_PCB)
#endif
#if defined(MEMP_NUM_NETCONN) && !defined(WISP_NETCONN_COUNT)
#define WISP_NETCONN_COUNT (MEMP_NUM_NETCONN)
#endif
#if defined(MEMP_NUM_NETCONN) && !defined(WISP_SOCKET_COUNT)
#define WISP_SOCKET_COUNT (MEMP_NUM_NETCONN)       /* lwIP: NUM_SOCKETS = MEMP_NUM_NETCONN */
#endif
#if defined(MEMP_NUM_NETBUF) && !defined(WISP_NETBUF_COUNT)
#define WISP_NETBUF_COUNT (MEMP_NUM_NETBUF)
#endif
#if defined(MEMP_NUM_TCPIP_MSG_API) && !defined(WISP_TCPIP_MSG_COUNT)
#define WISP_TCPIP_MSG_COUNT (MEMP_NUM_TCPIP_MSG_API)
#endif
/* lwIP's PBUF_POOL is what drivers receive into: wisp's receive blocks */
#if defined(PBUF_POOL_SIZE) && !defined(WISP_PBUF_RX_COUNT)
#define WISP_PBUF_RX_COUNT (PBUF_POOL_SIZE)
#endif
#if defined(PBUF_POOL_BUFSIZE) && !defined(WISP_PBUF_BLOCK_SIZE)
#define WISP_PBUF_BLOCK_SIZE (PBUF_POOL_BUFSIZE)
#endif
/* lwIP's PBUF_REF / PBUF_ROM headers */
#if defined(MEMP_NUM_PBUF) && !defined(WISP_PBUF_REF_COUNT)
#define WISP_PBUF_REF_COUNT (MEMP_NUM_PBUF)
#endif

#endif /* WISP_LWIPOPTS_MAP_H */
