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
#define WISP_UDP_PCB_COUNT 16
#define WISP_TXQ_COMMON_LEN 64
#define WISP_TXQ_EMERG_LEN 16
#define WISP_LOOP_QUEUE_LEN 32

#endif
