/* An lwipopts.h as a small lwIP firmware has it (test of
 * wisp/lwipopts_map.h: test_lwipopts_map.c). */
#ifndef LWIPOPTS_SAMPLE_H
#define LWIPOPTS_SAMPLE_H
#define NO_SYS 0
#define LWIP_TCPIP_CORE_LOCKING 1
#define MEM_ALIGNMENT 4
#define MEM_SIZE (16 * 1024)
#define MEMP_NUM_PBUF 16
#define MEMP_NUM_TCP_PCB 10
#define MEMP_NUM_TCP_PCB_LISTEN 5
#define MEMP_NUM_TCP_SEG 32
#define MEMP_NUM_UDP_PCB 6
#define MEMP_NUM_NETCONN 12
#define MEMP_NUM_NETBUF 8
#define MEMP_NUM_SYS_TIMEOUT 12
#define PBUF_POOL_SIZE 24
#define PBUF_POOL_BUFSIZE 1536
#define LWIP_TCP 1
#define TCP_MSS 1460
#define TCP_WND (4 * TCP_MSS)
#define TCP_SND_BUF (6 * TCP_MSS)
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_MAXRTX 10
#define LWIP_UDP 1
#define LWIP_DHCP 1
#define LWIP_DNS 1
#define DNS_MAX_SERVERS 2
#define DNS_TABLE_SIZE 6
#define ARP_TABLE_SIZE 10
#define TCPIP_MBOX_SIZE 24
#define LWIP_NETCONN 1
#define LWIP_SOCKET 1
#define LWIP_SO_RCVTIMEO 1
#endif
