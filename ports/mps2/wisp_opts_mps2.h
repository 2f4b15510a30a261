/**
 * @file wisp_opts_mps2.h
 * Options of the mps2-an385 firmware images (ports/mps2): the stack's pools
 * sized for a Cortex-M3 with some hundred KiB of RAM that serves a handful
 * of TCP connections at a time, and debug checks on (the images are test
 * firmware: a broken invariant stops them with status 3).
 *
 * Why these sizes: the receive window (16 KiB) is deliberately larger than
 * the LAN9118's ~10 KiB RX FIFO (6 full frames), so a peer's burst can
 * overflow the FIFO as it would on the chip when the CPU is late; TCP has
 * to recover what the FIFO drops (the firmware tests check every byte).
 * 32 RX pbufs hold a full window plus reassembly; 64 segments hold the
 * send buffers of several connections.
 */
#ifndef WISP_OPTS_MPS2_H
#define WISP_OPTS_MPS2_H

#define WISP_DEBUG 1
#define WISP_PBUF_RX_COUNT 32
#define WISP_PBUF_TX_COUNT 32
#define WISP_PBUF_REF_COUNT 32
#define WISP_PBUF_SMALL_COUNT 16
#define WISP_IP_REASS_MAX_PBUFS 8     /* a 3000-byte ping is 3 fragments */
#define WISP_UDP_PCB_COUNT 8
#define WISP_TCP_PCB_COUNT 16
#define WISP_TCP_LISTEN_COUNT 8
#define WISP_TCP_SYNQ_COUNT 16
#define WISP_TCP_TW_COUNT 16
#define WISP_TCP_SEG_COUNT 64
#define WISP_TCP_WND (16 * 1024)
#define WISP_TCP_SND_BUF (8 * 1024)
#define WISP_TCP_OOSEQ_MAX_PBUFS 12
#define WISP_TXQ_COMMON_LEN 32

#endif /* WISP_OPTS_MPS2_H */
