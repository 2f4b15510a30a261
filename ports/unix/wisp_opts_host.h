/**
 * @file wisp_opts_host.h
 * Options of the host build (wisp-node, simulator, tests): larger pools so
 * that 60 KB datagrams reassemble and bursts from Linux are absorbed, and
 * debug checks on. An example of a user options header: it only defines
 * what differs from include/wisp/opt.h.
 */
#ifndef WISP_OPTS_HOST_H
#define WISP_OPTS_HOST_H

#define WISP_DEBUG 1
#define WISP_PBUF_RX_COUNT 128
#define WISP_PBUF_TX_COUNT 128
#define WISP_PBUF_REF_COUNT 128
#define WISP_PBUF_SMALL_COUNT 64
#define WISP_IP_REASS_MAX_DGRAMS 4
#define WISP_IP_REASS_MAX_PBUFS 96
#define WISP_ARP_TABLE_SIZE 32
/* A burst of new connections to one neighbour waits for its ARP reply in
 * its queue (the oldest are dropped beyond it, silently: TCP can only
 * resend them after its SYN timeout). The most opt.h allows. */
#define WISP_ARP_QUEUE_LEN 16
#define WISP_UDP_PCB_COUNT 16
#define WISP_TXQ_COMMON_LEN 64
#define WISP_TXQ_EMERG_LEN 16
#define WISP_LOOP_QUEUE_LEN 32

/* OS layer (wisp/sys.h, wisp/tcpip.h): the pthreads port and a mailbox that
 * absorbs a TAP reader's burst. (The check that every core entry point of a
 * stack run by a stack thread is called by its core owner comes with
 * WISP_DEBUG: opt.h's default WISP_CORE_ASSERT_OWNER.) */
#define WISP_SYS_PORT_HEADER "sys_posix.h"
#define WISP_TCPIP_MBOX_SIZE 128
/* netconn API (wisp/netconn.h): room for a socket layer's connections and
 * a receive mailbox deep enough for a burst of segments. */
#define WISP_NETCONN_COUNT 32
#define WISP_NETBUF_COUNT 64
#define WISP_NETCONN_RECVMBOX_SIZE 64
/* BSD sockets (wisp/sockets.h): one table for the process, enough for the
 * select/poll tests over 64 connections (128 sockets) and the benchmark's
 * two stacks; every socket needs a netconn of its stack. Descriptors start
 * at 64, apart from the process's file descriptors (a file descriptor
 * passed to a socket call is answered with ENOTSOCK). */
#define WISP_SOCKET_COUNT 160
#define WISP_SOCKET_OFFSET 64
#undef WISP_NETCONN_COUNT
#define WISP_NETCONN_COUNT 160

/* TCP: hundreds of connections at once (the simulator suite runs 200),
 * a window above 64 KB so window scaling is used (a long fat path of
 * 100 Mbit/s x 20 ms needs ~250 KB), and the buffers to fill it: the
 * transmit budget holds the copies of written data, the receive budget the
 * out-of-order queues. */
#define WISP_TCP_PCB_COUNT 256
#define WISP_TCP_LISTEN_COUNT 16
/* A SYN queue for a burst of hundreds of connects (beyond it, SYN
 * cookies: their SYN-ACK is not retried when the stack cannot send it) */
#define WISP_TCP_SYNQ_COUNT 256
#define WISP_TCP_TW_COUNT 256
#define WISP_TCP_SEG_COUNT 2048
#define WISP_TCP_WND (256 * 1024)
#define WISP_TCP_SND_BUF (256 * 1024)
#define WISP_TCP_OOSEQ_MAX_PBUFS 64
/* CUBIC compiled in (opt.h's default leaves it out): the simulator suite
 * runs its .cubic variants, and a host meets long fat paths. */
#define WISP_TCP_CUBIC 1
#undef WISP_PBUF_RX_COUNT
#define WISP_PBUF_RX_COUNT 512
#undef WISP_PBUF_TX_COUNT
#define WISP_PBUF_TX_COUNT 512

#endif
